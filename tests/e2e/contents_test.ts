/**
 * guardfiles/github-contents.mcp.kdl, a contents-style grant with a
 * multi-segment path parameter, served by the real CLI against a recording
 * upstream (only the base-url of a copy points at the recorder): the request
 * a file path produces, segment by segment, and the refusals, with no request,
 * of dot, empty and absolute paths and of paths outside the restrict globs.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

Deno.test("github-contents: docs/guide/intro.md as three segments; traversal refused", async (t) => {
  const upstream = await startRecorder();
  const shipped = await Deno.readTextFile("guardfiles/github-contents.mcp.kdl");
  const copy = shipped.replace(`base-url "https://api.github.com"`, `base-url "${upstream.url}"`);
  assert.notEqual(copy, shipped, "the copy points at the recorder");
  const server = await serveHttp(await tempGuardfile(copy), {
    env: { GITHUB_TOKEN: "ghp_contents_test_token_1" },
  });
  const sent = () => upstream.requests.length;
  const refused = async (args: Record<string, unknown>, pattern: RegExp) => {
    const before = sent();
    const r = await callApi(server.url, "get_contents", args);
    assert.ok(r.status === 400 || r.status === 403, `${JSON.stringify(args)}: ${r.status}`);
    assert.match(r.text, pattern, JSON.stringify(args));
    assert.equal(sent(), before, `${JSON.stringify(args)} sent nothing`);
  };
  const file = (path: string) => ({ owner: "acme-docs", repo: "handbook", path });
  try {
    await t.step("a file path is sent as its encoded segments", async () => {
      const r = await callApi(server.url, "get_contents", {
        ...file("docs/guide/intro.md"),
        ref: "release/2.0",
      });
      assert.equal(r.status, 200, r.text);
      const req = upstream.requests.at(-1)!;
      assert.equal(req.path, "/repos/acme-docs/handbook/contents/docs/guide/intro.md");
      assert.equal(req.query, "ref=release%2F2.0");
      assert.equal(req.headers.get("authorization"), "Bearer ghp_contents_test_token_1");
      const odd = await callApi(server.url, "get_contents", file("docs/Q&A (draft)/ü #1.md"));
      assert.equal(odd.status, 403, "( ) & are still gated on this parameter");
      const spaced = await callApi(server.url, "get_contents", file("docs/a b/ü.md"));
      assert.equal(spaced.status, 200, spaced.text);
      assert.equal(
        upstream.requests.at(-1)!.path,
        "/repos/acme-docs/handbook/contents/docs/a%20b/%C3%BC.md",
      );
      const readme = await callApi(server.url, "get_contents", file("README.md"));
      assert.equal(readme.status, 200, readme.text);
    });

    await t.step("dot, empty and absolute paths are refused by name, nothing sent", async () => {
      await refused(file("docs/../secret"), /"path" has a "\.\." segment/);
      await refused(file("/abs"), /"path": must match the pattern/);
      await refused(file("docs//b"), /"path" has an empty segment/);
      await refused(file("docs/./b"), /"path" has a "\." segment/);
      await refused(file("docs/"), /"path" has an empty segment/);
      await refused(file("docs/..%2F..%2Fsecret"), /percent-encoded "\/"/);
      await refused(file("docs/..\\secret"), /contains "\\"/);
      await refused(file(".github/workflows/ci.yml"), /"path": must match the pattern/);
      await refused(file("docs"), /"path": must match the pattern/);
      await refused({ ...file("docs/x.md"), repo: "handbook/../other" }, /argument "repo"/);
      // "acme-*" stops at "/": the advertised pattern refuses it.
      await refused({ ...file("docs/x.md"), owner: "acme-docs/x" }, /"owner": must match/);
      await refused({ ...file("docs/x.md"), owner: "other" }, /"owner": must match the pattern/);
      await refused({ ...file("docs/x.md"), ref: "main;ls" }, /argument "ref"/);
    });

    await t.step("writes are withheld", async () => {
      const r = await callApi(server.url, "set_contents", file("docs/x.md"));
      assert.equal(r.status, 403);
      assert.match(r.text, /verb_withheld/);
    });
  } finally {
    await server.stop();
    await upstream.close();
  }
});
