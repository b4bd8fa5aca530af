/**
 * Spec mode sends every `pin` of a grant on every call (issue 34 item 10: a
 * mutation that sent only the secret pins survived; the pin is what narrows
 * the upstream, `org=acme`, so dropping it widens the call). Each kind of
 * pin (a literal, an environment variable, a secret, one query parameter
 * taken from a URL with `from=`) reaches the upstream exactly once, after the
 * caller's inputs, and a caller cannot send a pinned name.
 */
import assert from "node:assert/strict";
import { createToolApiHandler, McpServer } from "../../mod.ts";
import { createGuard, parseGuardfile } from "../../src/guard/mod.ts";
import { startRecorder } from "../support/upstream.ts";

const FILE = `pin "list_repo" {
    query "org" literal "acme"
    query "team" env "TEAM"
    query "key" env "API_KEY" secret=#true
    query "sig" env "SIGNED_URL" from="query:sig"
}
wrap ward mcp t {
    base-url "UPSTREAM"
    auth none
    can list repo { path "/repos"; query "q"; }
    can get repo { path "/repos/{id}"; }
}
`;

const ENV: Record<string, string> = {
  TEAM: "platform",
  API_KEY: "k-0123456789abcdef",
  SIGNED_URL: "https://files.example/x?sig=s1gn4tur3-value&exp=9",
};

Deno.test("every query pin of a grant reaches the upstream, once, on every call; a caller cannot send one", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  try {
    const { guardfile, diagnostics } = parseGuardfile(
      FILE.replace("UPSTREAM", upstream.url),
      "t.mcp.kdl",
    );
    assert.ok(guardfile, JSON.stringify(diagnostics));
    const server = new McpServer({
      ...createGuard(guardfile, {
        resolver: {
          env: (name) => ENV[name],
          readFile: () => Promise.reject(new Error("none")),
        },
        log: () => {},
      }),
      log: () => {},
    });
    const api = createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
    const call = async (tool: string, args: Record<string, unknown>) => {
      const r = await api(
        new Request(`http://127.0.0.1/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(args),
        }),
      );
      await r.body?.cancel();
      return r.status;
    };
    for (const args of [{}, { q: "weir" }]) {
      assert.equal(await call("list_repo", args), 200);
      const query = new URLSearchParams(upstream.requests.at(-1)!.query);
      assert.deepEqual(query.getAll("org"), ["acme"]);
      assert.deepEqual(query.getAll("team"), ["platform"]);
      assert.deepEqual(query.getAll("key"), [ENV.API_KEY]);
      assert.deepEqual(query.getAll("sig"), ["s1gn4tur3-value"]);
      assert.deepEqual(query.getAll("q"), "q" in args ? ["weir"] : []);
    }
    // A grant without pins sends none of them.
    assert.equal(await call("get_repo", { id: "7" }), 200);
    assert.equal(upstream.requests.at(-1)!.query, "");
    // A pinned name is no input of the tool: refused by its schema, nothing sent.
    const before = upstream.requests.length;
    for (const name of ["org", "team", "key", "sig"]) {
      assert.equal(await call("list_repo", { [name]: "evil" }), 400, name);
    }
    assert.equal(upstream.requests.length, before);
  } finally {
    await upstream.close();
  }
});
