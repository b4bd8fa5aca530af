/**
 * In spec mode a `restrict` glob's `*` and `?` stop at `/`, also for a path
 * parameter that takes `/` (`slashes="segments"`: a relative path;
 * `slashes="encoded"`: one segment with `/` sent as `%2F`); only `**`
 * crosses it (docs/guardfile.md, `restrict`). No test held this (issue 34
 * item 10): `restrict path matches "docs/*"` must not let `docs/a/b` reach
 * the upstream. Held twice, because two checks stand in the way: the guard's
 * own (`planRequest`, on every form the upstream may decode the value to)
 * and the advertised schema's `pattern` the core checks first; then through
 * the module API against a recording upstream, where nothing is sent.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { createToolApiHandler, McpServer } from "../../mod.ts";
import { createGuard, parseGuardfile } from "../../src/guard/mod.ts";
import type { Guardfile } from "../../src/guardfile/model.ts";
import { indexRestricts, planRequest } from "../../src/guard/request.ts";
import { WeirError } from "../../src/errors/kinds.ts";
import { startRecorder } from "../support/upstream.ts";

const TEXT = `wrap ward mcp t {
    base-url "UPSTREAM"
    auth none
    restrict path matches "docs/*" "img/?.png"
    restrict deep matches "docs/**"
    restrict key matches "grp-*" "k?"
    can get tree { path "/tree/{path}"; param "path" slashes="segments"; }
    can get deep { path "/deep/{deep}"; param "deep" slashes="segments"; }
    can get flat { path "/flat/{key}"; param "key" slashes="encoded"; }
}
`;

function load(url = "http://127.0.0.1:9"): Guardfile {
  const { guardfile, diagnostics } = parseGuardfile(TEXT.replace("UPSTREAM", url), "t.mcp.kdl");
  assert.ok(guardfile, JSON.stringify(diagnostics));
  return guardfile;
}

/** (tool, argument, value, sent?) — `sent` is the path the upstream gets, or undefined. */
const CASES: [string, string, string, string | undefined][] = [
  ["get_tree", "path", "docs/a", "/tree/docs/a"],
  ["get_tree", "path", "docs/a/b", undefined],
  ["get_tree", "path", "docs/", undefined],
  ["get_tree", "path", "img/x.png", "/tree/img/x.png"],
  ["get_tree", "path", "img//.png", undefined],
  ["get_tree", "path", "img/a/b.png", undefined],
  ["get_deep", "deep", "docs/a/b/c", "/deep/docs/a/b/c"],
  ["get_flat", "key", "grp-a", "/flat/grp-a"],
  ["get_flat", "key", "grp-a/b", undefined],
  ["get_flat", "key", "grp-/", undefined],
  ["get_flat", "key", "k/", undefined],
  ["get_flat", "key", "kx", "/flat/kx"],
];

Deno.test("planRequest(): * and ? of a restrict stop at / for slashes=segments and encoded", () => {
  const guardfile = load();
  const restricts = indexRestricts(guardfile);
  for (const [tool, arg, value, sent] of CASES) {
    const grant = guardfile.grants.find((g) => g.tool === tool)!;
    if (sent !== undefined) {
      assert.equal(planRequest(grant, { [arg]: value }, restricts).path, sent, `${tool} ${value}`);
      continue;
    }
    assert.throws(
      () => planRequest(grant, { [arg]: value }, restricts),
      (e: unknown) => e instanceof WeirError && e.kind === "policy_denied",
      `${tool} ${JSON.stringify(value)} must be refused`,
    );
  }
});

Deno.test("planRequest(): a generated value with a / under a one-* glob is refused in both modes", () => {
  const guardfile = load();
  const restricts = indexRestricts(guardfile);
  const tree = guardfile.grants.find((g) => g.tool === "get_tree")!;
  const flat = guardfile.grants.find((g) => g.tool === "get_flat")!;
  const piece = fc.stringMatching(/^[a-z0-9._-]{1,6}$/).filter((p) => p !== "." && p !== "..");
  fc.assert(
    fc.property(piece, piece, (a, b) => {
      assert.throws(() => planRequest(tree, { path: `docs/${a}/${b}` }, restricts), WeirError);
      assert.throws(() => planRequest(flat, { key: `grp-${a}/${b}` }, restricts), WeirError);
      assert.equal(planRequest(tree, { path: `docs/${a}` }, restricts).path, `/tree/docs/${a}`);
    }),
    { numRuns: 300 },
  );
});

Deno.test("the guarded server: a value past a / of a one-* glob never reaches the upstream", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  try {
    const server = new McpServer({
      ...createGuard(load(upstream.url), {
        resolver: { env: () => undefined, readFile: () => Promise.reject(new Error("none")) },
        log: () => {},
      }),
      log: () => {},
    });
    const api = createToolApiHandler(server, { authorize: () => true, allowedOrigins: [] });
    for (const [tool, arg, value, sent] of CASES) {
      const before = upstream.requests.length;
      const response = await api(
        new Request(`http://127.0.0.1/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ [arg]: value }),
        }),
      );
      await response.body?.cancel();
      if (sent === undefined) {
        assert.notEqual(response.status, 200, `${tool} ${value}`);
        assert.equal(upstream.requests.length, before, `${tool} ${value}: nothing is sent`);
      } else {
        assert.equal(response.status, 200, `${tool} ${value}`);
        assert.equal(upstream.requests.at(-1)?.path, sent, `${tool} ${value}`);
      }
    }
  } finally {
    await upstream.close();
  }
});
