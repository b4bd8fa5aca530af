/**
 * Per-tool failure, through the shipped CLI against an upstream built on the
 * official SDK: an allowlisted tool weir cannot serve (a `nullable` keyword,
 * a pin that does not fit, a tool listed twice) and one whose definition
 * drifts mid-run each become a `NOT AVAILABLE` stub with its reason, refusing
 * calls without reaching the upstream, while the other tools keep answering;
 * `lint-upstream` prints the same verdict in the same words (both commands
 * run on the same upstream); each decision leaves its audit line.
 */
import assert from "node:assert/strict";
import { callApi } from "../support/cli.ts";
import { runWeir, startWrapper, textOf, v1Http, v1Stdio } from "../support/upstream_cli.ts";
import { type ListedTool, startSdkUpstream } from "../support/sdk_upstream.ts";
import { until } from "../support/wait.ts";

const ECHO: ListedTool = {
  name: "echo",
  inputSchema: { type: "object", properties: { message: { type: "string" } } },
};
const NULLABLE: ListedTool = {
  name: "nullable_tool",
  description: "An OpenAPI 3.0 habit.",
  inputSchema: { type: "object", properties: { x: { type: "string", nullable: true } } },
};
const DRIFTER: ListedTool = {
  name: "drifter",
  description: "Reads a thing.",
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
};
const PINNED: ListedTool = {
  name: "pinned",
  inputSchema: { type: "object", properties: { site: { type: "string" } } },
};
const TWICE: ListedTool = { name: "twice", inputSchema: { type: "object" } };

/** The `weir: lint-upstream: tool "<name>": <words>` line of each flagged tool. */
function lintWords(stderr: string): Map<string, string> {
  const words = new Map<string, string>();
  for (const m of stderr.matchAll(/^weir: lint-upstream: tool "([^"]+)": (.*)$/gm)) {
    words.set(m[1], m[2]);
  }
  return words;
}

/** The words of a stub's description: `NOT AVAILABLE: <words>. Calling it ...`. */
function stubWords(description: string): string {
  const m = /^NOT AVAILABLE: (.*)\. Calling it always fails and reaches nothing\.$/s.exec(
    description,
  );
  assert.ok(m, description);
  return m[1];
}

async function auditLines(
  weir: { stderr(): string },
  done: (lines: Record<string, unknown>[]) => boolean,
): Promise<Record<string, unknown>[]> {
  let lines: Record<string, unknown>[] = [];
  await until(() => {
    lines = weir.stderr().split("\n").flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
    return done(lines);
  }, { stepMs: 100 });
  return lines;
}

Deno.test("serve-upstream and lint-upstream: one decision per tool, stubs for the ones weir cannot serve", async (t) => {
  const listed = [ECHO, NULLABLE, DRIFTER, PINNED, TWICE, { ...TWICE, description: "other" }];
  const up = await startSdkUpstream({ revision: "2025-11-25", framing: "sse", tools: listed });
  const allow = ["echo", "nullable_tool", "drifter", "pinned", "twice"].flatMap((
    n,
  ) => ["--tool", n]);
  const pin = ["--pin", "pinned.volume=11"];
  let lintStart: Map<string, string>;
  let fingerprints: string;
  try {
    await t.step("lint-upstream flags the three it would stub, exit 1", async () => {
      const r = await runWeir(["lint-upstream", ...allow, ...pin, "--upstream", up.url]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(
        r.stdout,
        "drifter\tpresent\necho\tpresent\nnullable_tool\tunservable\npinned\tunservable\n" +
          "twice\tunservable\n",
      );
      lintStart = lintWords(r.stderr);
      assert.match(lintStart.get("nullable_tool")!, /keyword "nullable" cannot be enforced/);
      assert.match(lintStart.get("pinned")!, /--pin pinned\.volume: the tool declares no argument/);
      assert.match(lintStart.get("twice")!, /more than once, with different definitions/);
      assert.equal(lintStart.size, 3);
    });

    // Drift is looked for before every call (the default bound is a few seconds).
    const weir = await startWrapper([
      ...allow,
      ...pin,
      "--upstream",
      up.url,
      "--max-staleness",
      "0",
    ]);
    const client = await v1Http(weir.url);
    try {
      await t.step("serve-upstream starts, stubs those three with the same words", async () => {
        const { tools } = await client.listTools() as {
          tools: { name: string; description?: string }[];
        };
        assert.deepEqual(tools.map((x) => x.name), [
          "drifter",
          "echo",
          "nullable_tool",
          "pinned",
          "twice",
        ]);
        for (const name of ["nullable_tool", "pinned", "twice"]) {
          const stub = tools.find((x) => x.name === name)!;
          assert.equal(stubWords(stub.description!), lintStart.get(name), name);
        }
        assert.equal(tools.find((x) => x.name === "drifter")!.description, "Reads a thing.");
      });

      await t.step("a stub refuses without reaching the upstream; the others answer", async () => {
        const before = up.calls().length;
        for (const name of ["nullable_tool", "pinned", "twice"]) {
          const r = await callApi(weir.url, name, {});
          assert.equal(r.status, 403, r.text);
          assert.match(r.text, new RegExp(`^tool_unavailable: tool "${name}" is not available: `));
        }
        const mcp = await client.callTool({ name: "nullable_tool", arguments: {} });
        assert.equal(mcp.isError, true);
        assert.equal(up.calls().length, before, "a stub reached the upstream");
        const ok = await client.callTool({ name: "echo", arguments: { message: "hi" } });
        assert.equal(textOf(ok), "echo ran");
      });

      await t.step("lint-upstream records the fingerprints of the servable ones", async () => {
        fingerprints = await Deno.makeTempFile({ suffix: ".json" });
        const r = await runWeir([
          "lint-upstream",
          "--tool",
          "echo",
          "--tool",
          "drifter",
          "--upstream",
          up.url,
          "--write-fingerprints",
          fingerprints,
        ]);
        assert.equal(r.code, 0, r.stderr);
      });

      await t.step(
        "a definition that drifts mid-run becomes a stub; echo keeps answering",
        async () => {
          up.setTools([
            ECHO,
            NULLABLE,
            { ...DRIFTER, description: "Deletes a thing." },
            PINNED,
            TWICE,
            { ...TWICE, description: "other" },
          ]);
          const before = up.calls().length;
          const ok = await client.callTool({ name: "echo", arguments: { message: "still" } });
          assert.equal(textOf(ok), "echo ran");
          const refused = await callApi(weir.url, "drifter", { id: "1" });
          assert.equal(refused.status, 409, refused.text);
          assert.match(
            refused.text,
            /^schema_drift: tool "drifter": its definition changed upstream since weir started; weir refuses it until restarted \(re-review/,
          );
          // Said once, not "changed ... (its definition changed ...)".
          assert.equal(refused.text.match(/changed upstream/g)?.length, 1, refused.text);
          assert.equal(up.calls().length, before + 1, "only echo reached the upstream");
          const { tools } = await client.listTools() as {
            tools: { name: string; description?: string }[];
          };
          const stub = tools.find((x) => x.name === "drifter")!;
          assert.match(
            stubWords(stub.description!),
            /^its definition changed upstream since weir started \(re-review/,
          );
          // Restored upstream, still refused until restart.
          up.setTools(listed);
          const again = await callApi(weir.url, "drifter", { id: "1" });
          assert.equal(again.status, 409);
        },
      );

      await t.step(
        "lint-upstream against the recorded fingerprints: the same verdict",
        async () => {
          up.setTools([ECHO, { ...DRIFTER, description: "Deletes a thing." }]);
          const r = await runWeir([
            "lint-upstream",
            "--tool",
            "echo",
            "--tool",
            "drifter",
            "--upstream",
            up.url,
            "--fingerprints",
            fingerprints,
          ]);
          assert.equal(r.code, 1);
          assert.equal(r.stdout, "drifter\tdrifted\necho\tpresent\n");
          assert.match(
            lintWords(r.stderr).get("drifter")!,
            /^its definition changed upstream since the fingerprints were written/,
          );
        },
      );

      await t.step("audit lines for each decision", async () => {
        const lines = await auditLines(
          weir,
          (ls) => ls.filter((l) => l.event === "refused" && l.tool !== undefined).length >= 6,
        );
        const stubbed = lines.filter((l) => l.event === "upstream_tool_stubbed").map((l) => l.tool);
        assert.deepEqual(stubbed, ["nullable_tool", "pinned", "twice"]);
        // Refusals of calls (the client's GET for a standalone stream is refused by route).
        const refusals = lines.filter((l) => l.event === "refused" && l.tool !== undefined).map((
          l,
        ) => [l.tool, l.rule]);
        assert.deepEqual(refusals, [
          ["nullable_tool", "withheld"],
          ["pinned", "withheld"],
          ["twice", "withheld"],
          ["nullable_tool", "withheld"],
          ["drifter", "fingerprint"],
          ["drifter", "fingerprint"],
        ]);
        const drift = lines.filter((l) => l.event === "upstream_drift");
        assert.deepEqual(drift.map((l) => l.tool), ["drifter"]);
      });
    } finally {
      await client.close();
      await weir.stop();
      await Deno.remove(fingerprints!).catch(() => {});
    }
  } finally {
    await up.stop();
  }
});

Deno.test("serve-upstream over stdio: a drift tells the client its tool list changed", async () => {
  const up = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: [ECHO, DRIFTER],
  });
  const notifications: string[] = [];
  const client = await v1Stdio(
    ["--tool", "echo", "--tool", "drifter", "--upstream", up.url, "--max-staleness", "0"],
    undefined,
    notifications,
  );
  try {
    assert.equal(textOf(await client.callTool({ name: "echo", arguments: {} })), "echo ran");
    assert.deepEqual(notifications, []);
    up.setTools([ECHO, { ...DRIFTER, inputSchema: { type: "object" } }]);
    assert.equal(textOf(await client.callTool({ name: "echo", arguments: {} })), "echo ran");
    await until(() => notifications.length > 0);
    assert.deepEqual(notifications, ["notifications/tools/list_changed"]);
    const { tools } = await client.listTools() as {
      tools: { name: string; description?: string }[];
    };
    assert.match(
      tools.find((x) => x.name === "drifter")!.description!,
      /^NOT AVAILABLE: its definition changed/,
    );
  } finally {
    await client.close();
    await up.stop();
  }
});
