/**
 * Name twins (issue 34, item 4): a key that folds onto an argument of the
 * upstream's (letter case, fullwidth and other compatibility forms, format
 * characters, separators) but is not it never leaves weir, when the
 * upstream's schema admits extra keys and an upstream that reads names
 * loosely (Go's `encoding/json` into a struct) would take it for the pinned,
 * restricted, enum'd or hidden argument.
 *
 * Through the shipped CLI: serve-upstream with a `--pin`, and the guardfile's
 * `mcp-server` form with a rename, `restrict`, `enum`, `hide` and a pin;
 * over `/api` for every twin, and through the official client of each
 * revision for one. A key of another name still goes through (the upstream
 * admits it). Spec mode's served schemas admit no extra key; there the
 * inputs of one grant are held to the same fold at load
 * (tests/cli/name_twins_lint_test.ts).
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper, textOf, v1Http, v2Http } from "../support/upstream_cli.ts";
import { until } from "../support/wait.ts";

const SEARCH: ListedTool = {
  name: "search",
  description: "Search a repository's issues.",
  inputSchema: {
    type: "object",
    properties: {
      repo: { type: "string" },
      state: { type: "string" },
      debug: { type: "boolean" },
      org: { type: "string" },
      limit: { type: "integer" },
    },
  },
};

/** An upstream that declares twins itself: `repo` and `Repo`, `id` and `ID`. */
const DOUBLE: ListedTool = {
  name: "double",
  inputSchema: {
    type: "object",
    properties: {
      repo: { type: "string" },
      Repo: { type: "string" },
      id: { type: "string" },
      ID: { type: "string" },
    },
  },
};

/** Twins of `name`: case, fullwidth, a format character, separators. */
function twinsOf(name: string): string[] {
  const fullwidth = (s: string) =>
    [...s].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join("");
  return [
    name[0].toUpperCase() + name.slice(1),
    name.toUpperCase(),
    fullwidth(name[0]) + name.slice(1),
    fullwidth(name.toUpperCase()),
    `${name.slice(0, 2)}\u00ad${name.slice(2)}`,
    `${name.slice(0, 2)}_${name.slice(2)}`,
    `${name.slice(0, 2)}-${name.slice(2).toUpperCase()}`,
    `${name.slice(0, 1)}.${name.slice(1)}`,
  ];
}

/** Every value the twins carry: the upstream must never see one. */
const EVIL = "evil/x";

for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  Deno.test(`serve-upstream refuses a twin of any argument of the upstream's (${revision})`, async () => {
    const up = await startSdkUpstream({
      revision,
      framing: "json",
      tools: [SEARCH, DOUBLE],
      onCall: (input) => ({ content: [{ type: "text", text: JSON.stringify(input.arguments) }] }),
    });
    const weir = await startWrapper([
      "--tool",
      "search",
      "--tool",
      "double",
      "--upstream",
      up.url,
      "--pin",
      "search.repo=acme/main",
      "--pin",
      "double.repo=acme/main",
    ]);
    try {
      for (const name of ["repo", "state"]) {
        for (const twin of twinsOf(name)) {
          const r = await callApi(weir.url, "search", { [twin]: EVIL });
          assert.equal(r.status, 403, `${twin}: ${r.text}`);
          assert.match(r.text, /^policy_denied: argument .* differs from it only by letter case/);
          assert.ok(r.text.includes(JSON.stringify(name)), r.text);
        }
      }
      // Letters some binders take for an ASCII one by upper-casing it (Java's equalsIgnoreCase,
      // .NET's OrdinalIgnoreCase): a dotless ı and a dotted İ for the i of `limit`.
      for (const twin of ["l\u0131mit", "L\u0130MIT"]) {
        const r = await callApi(weir.url, "search", { [twin]: 1000 });
        assert.equal(r.status, 403, `${twin}: ${r.text}`);
        assert.ok(r.text.includes('"limit"'), r.text);
      }
      assert.equal(up.calls().length, 0, up.calls().join("\n"));
      for (const connect of [v1Http, v2Http]) {
        const mcp = await connect(weir.url);
        try {
          const result = await mcp.callTool({ name: "search", arguments: { REPO: EVIL } });
          assert.equal(result.isError, true);
          assert.match(textOf(result), /policy_denied: argument "REPO"/);
        } finally {
          await mcp.close();
        }
      }
      assert.equal(up.calls().length, 0);
      // A twin the upstream declares itself is still refused beside a pinned argument...
      const declared = await callApi(weir.url, "double", { Repo: EVIL });
      assert.equal(declared.status, 403, `${declared.status} ${declared.text} ${weir.stderr()}`);
      assert.equal(up.calls().length, 0);
      // ...and passes beside one no rule holds (the upstream tells ID from id).
      const free = await callApi(weir.url, "double", { ID: "7" });
      assert.equal(free.status, 200, free.text);
      assert.deepEqual(JSON.parse(free.text), { ID: "7", repo: "acme/main" });
      // Another name goes through, with the pin.
      const fine = await callApi(weir.url, "search", { repository: "x", limit: 3 });
      assert.equal(fine.status, 200, fine.text);
      assert.deepEqual(JSON.parse(fine.text), { repository: "x", limit: 3, repo: "acme/main" });
      assert.ok(
        await until(() => weir.stderr().includes('"rule":"name_twin"')),
        "no name_twin audit line",
      );
    } finally {
      await weir.stop();
      await up.stop();
    }
  });

  Deno.test(`the mcp-server form refuses twins of renamed, restricted, enum'd, hidden and pinned arguments (${revision})`, async () => {
    const up = await startSdkUpstream({
      revision,
      framing: "json",
      tools: [SEARCH],
      onCall: (input) => ({ content: [{ type: "text", text: JSON.stringify(input.arguments) }] }),
    });
    const file = await tempGuardfile(`pin "find" {
    argument "org" literal "acme"
}
wrap ward mcp issues {
    mcp-server http "${up.url}"
    proxy find {
        upstream "search"
        argument "repository" upstream="repo" {
            restrict "acme/*"
        }
        argument "state" {
            enum "open" "closed"
        }
        argument "debug" hide=#true
    }
}
`);
    const weir = await serveHttp(file);
    try {
      for (const name of ["repo", "state", "debug", "org"]) {
        for (const twin of twinsOf(name)) {
          const r = await callApi(weir.url, "find", { [twin]: EVIL });
          assert.equal(r.status, 403, `${twin}: ${r.text}`);
          assert.match(r.text, /^policy_denied: argument .* differs from it only by letter case/);
        }
      }
      assert.equal(up.calls().length, 0, up.calls().join("\n"));
      const fine = await callApi(weir.url, "find", { repository: "acme/web", other: 1 });
      assert.equal(fine.status, 200, fine.text);
      assert.deepEqual(JSON.parse(fine.text), { repo: "acme/web", other: 1, org: "acme" });
    } finally {
      await weir.stop();
      await up.stop();
    }
  });
}
