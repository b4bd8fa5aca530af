/**
 * `weir diff --fail-on widen` as a reviewer's CI gate relies on it: pairs of
 * guardfiles where NEW lets an agent do what OLD did not exit 1, and a pure
 * narrowing exits 0 (not a false alarm). Each pair is one the reviewer's
 * check found misjudged: the last inbound token removed, an extraction's
 * bounds, a restrict narrowed (glob languages compared exactly, also in the
 * advertised pattern), a proxied tool's read-only and destructive hints (a
 * claim about one fixed operation; one left to the server, unread from the
 * file alone, may say it only reads), and a rate-limit store read from a
 * variable a CI job does not hold. Run as the CLI runs (src/cli/diff.ts).
 */
import assert from "node:assert/strict";
import { run } from "../../src/cli/diff.ts";

const SPEC = `
extract "get_report" as="pdf-text" max-pages="20"
inbound-token ci { value env "CI_TOKEN"; tools "get_ticket"; }
wrap ward mcp tickets {
    base-url "https://api.example.com"
    auth none
    restrict board matches "demo-*"
    can get ticket { path "/boards/{board}/tickets/{id}"; }
    can get report { path "/reports/{id}"; raw-response; }
}
`;

const WRAP = `
wrap ward mcp everything {
    mcp-server http "https://mcp.example.com/mcp"
    proxy echo {
        annotations read-only=#true
        argument "repo" { restrict "acme/*"; }
    }
    proxy add { upstream "get-sum"; }
}
`;

const DEFINITIONS = {
  tools: [
    {
      name: "echo",
      inputSchema: { type: "object", properties: { repo: { type: "string" } } },
    },
    {
      name: "get-sum",
      inputSchema: { type: "object", properties: { a: { type: "number" } } },
    },
  ],
};

function edit(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the case edits ${from}`);
  return text.replace(from, to);
}

/** `weir diff --format json --fail-on widen [extra] OLD NEW`, in process. */
async function diff(old: string, next: string, extra: string[] = []) {
  const dir = await Deno.makeTempDir({ prefix: "weir-diff-review-" });
  const logs: string[] = [];
  const errors: string[] = [];
  const { log, error } = console;
  console.log = (...x: unknown[]) => logs.push(x.join(" "));
  console.error = (...x: unknown[]) => errors.push(x.join(" "));
  try {
    await Deno.writeTextFile(`${dir}/old.mcp.kdl`, old);
    await Deno.writeTextFile(`${dir}/new.mcp.kdl`, next);
    await Deno.writeTextFile(`${dir}/tools.json`, JSON.stringify(DEFINITIONS));
    const args = extra.map((a) => a.replace("{defs}", `${dir}/tools.json`));
    const code = await run([
      "--format",
      "json",
      "--fail-on",
      "widen",
      ...args,
      `${dir}/old.mcp.kdl`,
      `${dir}/new.mcp.kdl`,
    ]);
    const report = JSON.parse(logs.join("\n")) as { changes: { effect: string; what: string }[] };
    return { code, changes: report.changes, errors: errors.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
    await Deno.remove(dir, { recursive: true });
  }
}

/** NEW widens: exit 1 and a widening line matching `what`. */
async function widens(old: string, next: string, what: RegExp, extra: string[] = []) {
  const r = await diff(old, next, extra);
  assert.equal(r.code, 1, `${JSON.stringify(r.changes)}\n${r.errors}`);
  assert.ok(
    r.changes.some((c) => c.effect === "widen" && what.test(c.what)),
    JSON.stringify(r.changes),
  );
}

/** NEW only narrows (or changes nothing reachable): exit 0. */
async function noWidening(old: string, next: string, extra: string[] = []) {
  const r = await diff(old, next, extra);
  assert.equal(r.code, 0, `${JSON.stringify(r.changes)}\n${r.errors}`);
  assert.ok(!r.changes.some((c) => c.effect === "widen"), JSON.stringify(r.changes));
  return r.changes;
}

Deno.test("weir diff: removing the last inbound token widens (the server then answers any caller)", async () => {
  const open = edit(SPEC, `inbound-token ci { value env "CI_TOKEN"; tools "get_ticket"; }\n`, "");
  await widens(SPEC, open, /every inbound token removed \(ci\)/);
  // One of two removed narrows: the other still holds the server shut.
  const two = edit(
    SPEC,
    "inbound-token ci",
    `inbound-token ops { value env "OPS"; tools "get_report"; }\ninbound-token ci`,
  );
  const changes = await noWidening(two, SPEC);
  assert.ok(changes.some((c) => c.effect === "narrow" && /inbound token ops removed/.test(c.what)));
});

Deno.test("weir diff: an extraction that keeps more, or none, widens; one that keeps less narrows", async () => {
  await widens(
    SPEC,
    edit(SPEC, `max-pages="20"`, `max-pages="200"`),
    /extract pdf-text, first 20 -> pdf-text, first 200/,
  );
  await widens(
    SPEC,
    edit(SPEC, `extract "get_report" as="pdf-text" max-pages="20"\n`, ""),
    /the raw answer reaches the agent/,
  );
  await noWidening(SPEC, edit(SPEC, `max-pages="20"`, `max-pages="5"`));
});

Deno.test("weir diff: a restrict narrowed is not a widening (globs and advertised pattern)", async () => {
  for (
    const to of [
      `restrict board matches "demo-a*"`,
      `restrict board matches "demo-[0-9]?"`,
      `restrict board matches "demo-*"\n    restrict board matches "*-x"`,
      `restrict board matches "demo-1" "demo-2"`,
    ]
  ) {
    const changes = await noWidening(SPEC, edit(SPEC, `restrict board matches "demo-*"`, to));
    assert.ok(changes.some((c) => c.effect === "narrow" && /restrict board/.test(c.what)), to);
  }
  for (
    const to of [
      `restrict board matches "demo*"`,
      `restrict board matches "demo-*" "prod-*"`,
      `restrict board matches "*"`,
      `restrict board matches "dem?-*"`,
    ]
  ) {
    await widens(SPEC, edit(SPEC, `restrict board matches "demo-*"`, to), /restrict board/);
  }
  // The wrap form, from the file alone and from the served schemas.
  for (const extra of [[], ["--definitions", "{defs}"]]) {
    await noWidening(WRAP, edit(WRAP, `restrict "acme/*"`, `restrict "acme/a*"`), extra);
    await noWidening(WRAP, edit(WRAP, `restrict "acme/*"`, `restrict "acme/x"`), extra);
    await widens(
      WRAP,
      edit(WRAP, `restrict "acme/*"`, `restrict "acme/**"`),
      /restrict repo/,
      extra,
    );
  }
});

Deno.test("weir diff: a proxied tool's read-only and destructive hints are claims about one operation", async () => {
  const readOnly = `surface read-only=#true\n${WRAP}`;
  const writes = edit(readOnly, "annotations read-only=#true", "annotations read-only=#false");
  // Said to only read under read-only mode: served (was withheld). From the file alone too.
  await widens(writes, readOnly, /now said to only read/);
  await widens(writes, readOnly, /was withheld, now granted/, ["--definitions", "{defs}"]);
  // No longer said to only read: --read-only withholds it; the upstream call is the same.
  await noWidening(WRAP, edit(WRAP, "annotations read-only=#true", "annotations read-only=#false"));
  // The destructive mark dropped hides it from a client that asks before destructive calls.
  const marked = edit(
    WRAP,
    `proxy add { upstream "get-sum"; }`,
    `proxy add { upstream "get-sum"; annotations destructive=#true; }`,
  );
  const unmarked = edit(
    WRAP,
    `proxy add { upstream "get-sum"; }`,
    `proxy add { upstream "get-sum"; annotations destructive=#false; }`,
  );
  await widens(marked, unmarked, /no longer marked destructive/);
  await noWidening(unmarked, marked);
});

Deno.test("weir diff from the file alone: leaving a stated read-only=#false or destructive=#true to the server may widen", async () => {
  const stated = edit(WRAP, "annotations read-only=#true", "annotations read-only=#false");
  const left = edit(WRAP, "annotations read-only=#true\n", "");
  // The server's own readOnlyHint, unread, may say the tool only reads.
  await widens(stated, left, /read-only=#false no longer stated: the server's own readOnlyHint/);
  const readOnly = (text: string) => `surface read-only=#true\n${text}`;
  await widens(readOnly(stated), readOnly(left), /read-only=#false no longer stated/);
  // With the definitions read, the server's hint decides (this echo states none: it writes).
  await noWidening(stated, left, ["--definitions", "{defs}"]);
  // A stated read left to the server, or a write stated where the server decided: no wider.
  assert.ok(
    (await noWidening(WRAP, left)).some((c) => /read-only=#true no longer stated/.test(c.what)),
  );
  assert.ok((await noWidening(left, stated)).some((c) => /now stated to write/.test(c.what)));
  await widens(left, WRAP, /now stated to only read/);
  // The same for a stated destructive=#true: the server's unread hint may say false.
  const bare = `proxy add { upstream "get-sum"; }`;
  const marked = edit(
    WRAP,
    bare,
    `proxy add { upstream "get-sum"; annotations destructive=#true; }`,
  );
  await widens(
    marked,
    WRAP,
    /destructive=#true no longer stated: the server's own destructiveHint/,
  );
  await noWidening(WRAP, marked);
  // With the definitions read, the server's hint decides (get-sum states none: destructive).
  await noWidening(marked, WRAP, ["--definitions", "{defs}"]);
});

Deno.test("weir diff compares a shared rate-limit store without reading its variable", async () => {
  const saved = Deno.env.get("WEIR_TEST_UNSET_REDIS");
  Deno.env.delete("WEIR_TEST_UNSET_REDIS");
  try {
    const shared = `rate-limit "60/1m" { store redis env "WEIR_TEST_UNSET_REDIS"; }\n${SPEC}`;
    const local = `rate-limit "60/1m"\n${SPEC}`;
    await widens(shared, local, /in each process/);
    await noWidening(local, shared);
  } finally {
    if (saved !== undefined) Deno.env.set("WEIR_TEST_UNSET_REDIS", saved);
  }
});

Deno.test("weir diff: a token exchange asking for fewer scopes narrows; for more, widens", async () => {
  const exchange = (scopes: string) =>
    `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"
wrap ward mcp tickets {
    base-url "https://tickets.example.com/api"
    auth token-exchange {
        audience "https://tickets.example.com/api"
        scope ${scopes}
        client-id "weir"
        client-secret { value env "WEIR_CLIENT_SECRET"; }
    }
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
}
`;
  const both = exchange(`"tickets:read" "tickets:write"`);
  const one = exchange(`"tickets:read"`);
  const changes = await noWidening(both, one);
  assert.ok(
    changes.some((c) => c.effect === "narrow" && /asks for scopes tickets:read \(was/.test(c.what)),
  );
  await widens(one, both, /scopes tickets:read tickets:write/);
});
