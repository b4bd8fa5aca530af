/**
 * A verb a reader takes for a read never sends a write by default (issue 34,
 * item 8). Through the shipped CLI:
 *
 * - every word of `READ_WORDS` (src/guardfile/verbs.ts, the one list that
 *   src/guardfile/reads.ts reads), in any letter case, is GET: `weir lint
 *   --methods` says so with no "defaults to POST" warning, `describe
 *   --read-only` serves it, and a call sends GET;
 * - a table verb in capitals (`Get`, `DELETE`) is the table's method (it fell
 *   through to POST before);
 * - a compound verb that starts with a read word (`get-open`, `find_by_tag`)
 *   is an error asking for the method, and so is a read word whose grant
 *   sends a body; stating `method` settles both.
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { READ_WORDS, VERB_METHODS } from "../../src/guardfile/verbs.ts";

const HEAD = `wrap ward mcp t {\n    base-url "http://127.0.0.1:9"\n    auth none\n`;

Deno.test("weir lint --methods: every read word, in any case, is GET, with no POST warning", async () => {
  const words = READ_WORDS.filter((w) => !Object.hasOwn(VERB_METHODS, w));
  const spellings = words.flatMap((w) => [w, w.toUpperCase(), w[0].toUpperCase() + w.slice(1)]);
  const file = await tempGuardfile(
    HEAD + spellings.map((v, i) => `    can ${v} thing${i} { path "/things/${i}"; }\n`).join("") +
      "}\n",
  );
  const out = await runCli(["lint", "--methods", file]);
  assert.equal(out.code, 0, out.stderr);
  assert.doesNotMatch(out.stderr, /defaults to POST/);
  const methods = new Map(
    out.stdout.trim().split("\n").map((l) => l.split("\t") as [string, string]),
  );
  spellings.forEach((v, i) => assert.equal(methods.get(`${v}_thing${i}`), "GET", v));
  // --read-only serves every one of them (the read class).
  const ro = await runCli(["describe", "--read-only", "--format", "json", file]);
  assert.equal(ro.code, 0, ro.stderr);
  const tools = JSON.parse(ro.stdout).tools as { name: string; withheld?: unknown }[];
  for (const [i, v] of spellings.entries()) {
    const tool = tools.find((t) => t.name === `${v}_thing${i}`);
    assert.ok(tool && !tool.withheld, `${v}: ${JSON.stringify(tool)}`);
  }
});

Deno.test("weir lint --methods: a table verb in capitals is the table's method", async () => {
  const file = await tempGuardfile(
    HEAD + `    can Get a { path "/a"; }\n    can DELETE b { path "/b"; }\n` +
      `    can Create c { path "/c"; }\n    can LIST-open d { path "/d"; }\n}\n`,
  );
  const out = await runCli(["lint", "--methods", file]);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(
    out.stdout,
    "Create_c\tPOST\nDELETE_b\tDELETE\nGet_a\tGET\nLIST-open_d\tGET\nweir_info\t-\n",
  );
  const described = await runCli(["describe", file]);
  assert.match(described.stdout, /DELETE_b {2}DELETE \/b {2}\[destructive\]/);
});

Deno.test("weir lint: a read-like compound verb, or a read word with a body, must state its method", async () => {
  const cases: [string, RegExp | null][] = [
    [
      `can get-open issue { path "/issues"; }`,
      /the verb "get-open" reads as a read \(it starts with "get"\) but is not in the verb table, so it would send POST, a write: state the method/,
    ],
    [`can find_by_tag pet { path "/pets"; }`, /the verb "find_by_tag" reads as a read/],
    // camelCase is a compound too.
    [
      `can getOpen issue { path "/issues"; }`,
      /the verb "getOpen" reads as a read \(it starts with "get"\)/,
    ],
    [`can Retrieve-all invoice { path "/invoices"; }`, /it starts with "retrieve"/],
    [`can get-open issue { path "/issues"; method "GET"; }`, null],
    [`can approve request { path "/r"; }`, null],
    [
      `can find user { path "/users/find"; body { field "email" type="string"; }; }`,
      /the verb "find" reads as a read and sends GET, but this grant sends a body: state the method/,
    ],
    [`can find user { path "/u"; method "POST"; body { field "email" type="string"; }; }`, null],
  ];
  for (const [grant, says] of cases) {
    const out = await runCli(["lint", await tempGuardfile(`${HEAD}    ${grant}\n}\n`)]);
    if (says === null) assert.equal(out.code, 0, `${grant}: ${out.stderr}`);
    else {
      assert.equal(out.code, 1, `${grant}: ${out.stdout}`);
      assert.match(out.stderr, says);
      assert.doesNotMatch(out.stderr, /defaults to POST/, "the error alone, not the warning too");
    }
  }
});

Deno.test("weir serve: a read verb's call reaches the upstream as GET", async () => {
  const seen: string[] = [];
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname}`);
    return Response.json({ ok: true });
  });
  const file = await tempGuardfile(
    `wrap ward mcp t {\n    base-url "http://127.0.0.1:${upstream.addr.port}"\n    auth none\n` +
      `    can read file { path "/files/{id}/content"; }\n    can Show report { path "/r/{id}"; }\n` +
      // Stripe's own word for a read: POST to this path would update the customer.
      `    can retrieve customer { path "/v1/customers/{id}"; }\n` +
      `    can download report { path "/r/{id}/pdf"; }\n}\n`,
  );
  const server = await serveHttp(file);
  try {
    assert.equal((await callApi(server.url, "read_file", { id: "1" })).status, 200);
    assert.equal((await callApi(server.url, "Show_report", { id: "2" })).status, 200);
    assert.equal((await callApi(server.url, "retrieve_customer", { id: "cus_1" })).status, 200);
    assert.equal((await callApi(server.url, "download_report", { id: "3" })).status, 200);
    assert.deepEqual(seen, [
      "GET /files/1/content",
      "GET /r/2",
      "GET /v1/customers/cus_1",
      "GET /r/3/pdf",
    ]);
  } finally {
    await server.stop();
    await upstream.shutdown();
  }
});
