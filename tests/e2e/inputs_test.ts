/**
 * Path parameters (one segment, several segments, encoded), typed path
 * parameters, value rules (pattern, lengths, enum), null for optional inputs
 * and the per-input metacharacter opt-out, driven through the real CLI
 * (`weir serve --http`) against a recording upstream: the request each valid
 * call produces, and the refusal, with no request, of each violation.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { callApi, serveHttp } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

Deno.test("path, query and body input rules through weir serve", async (t) => {
  const upstream = await startRecorder();
  const server = await serveHttp("tests/fixtures/inputs.mcp.kdl", {
    env: { INPUTS_BASE_URL: upstream.url },
  });
  const sent = () => upstream.requests.length;
  const ok = async (tool: string, args: Record<string, unknown>) => {
    const before = sent();
    const r = await callApi(server.url, tool, args);
    assert.equal(r.status, 200, `${tool} ${JSON.stringify(args)}: ${r.text}`);
    assert.equal(sent(), before + 1, `${tool} sent exactly one request`);
    return upstream.requests.at(-1)!;
  };
  const refused = async (tool: string, args: Record<string, unknown>, pattern: RegExp) => {
    const before = sent();
    const r = await callApi(server.url, tool, args);
    assert.notEqual(r.status, 200, `${tool} ${JSON.stringify(args)} should be refused`);
    assert.equal(r.body.isError, true);
    assert.match(r.text, pattern, `${tool} ${JSON.stringify(args)}`);
    assert.equal(sent(), before, `${tool} ${JSON.stringify(args)} sent nothing`);
  };
  try {
    await t.step("slashes=segments: a relative path, each segment encoded", async () => {
      const intro = await ok("get_contents", { owner: "acme", path: "docs/guide/intro.md" });
      assert.equal(intro.path, "/repos/acme/contents/docs/guide/intro.md");
      const spaced = await ok("get_contents", { owner: "acme", path: "docs/a b?#.md" });
      assert.equal(spaced.path, "/repos/acme/contents/docs/a%20b%3F%23.md");
      const readme = await ok("get_contents", { owner: "acme", path: "README.md" });
      assert.equal(readme.path, "/repos/acme/contents/README.md");
    });

    await t.step("slashes=segments: dot, empty and absolute paths are refused", async () => {
      const c = (path: string) => ({ owner: "acme", path });
      await refused("get_contents", c("docs/../secret"), /has a "\.\." segment/);
      // Outside the restrict globs: the advertised pattern refuses it first.
      await refused("get_contents", c("/abs"), /argument "path": must match the pattern \^/);
      await refused("get_contents", c("docs//b"), /empty segment/);
      await refused("get_contents", c("docs/./b"), /has a "\." segment/);
      await refused("get_contents", c("docs/"), /empty segment/);
      await refused("get_contents", c("docs/a%2Fb"), /percent-encoded "\/"/);
      await refused("get_contents", c("docs/a\\..\\x"), /contains "\\"/);
      await refused("get_contents", c("docs/" + "a/".repeat(600) + "b"), /argument "path"/);
      await refused("get_contents", c("secret/key"), /"path": must match the pattern/);
    });

    await t.step("a one-segment parameter refuses / and \\ by name", async () => {
      await refused("get_contents", { owner: "a/b", path: "README.md" }, /"owner" contains "\/"/);
      await refused("get_contents", { owner: "a%2fb", path: "README.md" }, /"owner".*%2F/);
      await refused("get_label", { name: "a/b" }, /argument "name"|"name" contains/);
    });

    await t.step("percent-encoded dot segments and slashes are refused", async () => {
      // An upstream that decodes before routing (the reason %2F is refused)
      // turns %2e%2e into "..": refused in every slashes mode, nothing sent.
      for (const owner of ["%2e%2e", "%2E", ".%2e", "%252e%252e", "%25252E."]) {
        await refused("get_contents", { owner, path: "README.md" }, /"owner".*dot segment/);
      }
      await refused("get_contents", { owner: "a%252Fb", path: "README.md" }, /"owner".*%2F/);
      const c = (path: string) => ({ owner: "acme", path });
      await refused("get_contents", c("docs/%2e%2e/secret"), /dot segment/);
      await refused("get_contents", c("docs/%252E"), /dot segment/);
      await refused("get_project", { id: "a/%2e%2e/admin" }, /dot segment/);
      // Text that only looks like an escape is data.
      const dots = await ok("get_contents", { owner: "a%2e%2eb", path: "docs/v%2e1.md" });
      assert.equal(dots.path, "/repos/a%252e%252eb/contents/docs/v%252e1.md");
    });

    await t.step("slashes=encoded: one segment with %2F, never climbing", async () => {
      const req = await ok("get_project", { id: "group/sub/project" });
      assert.equal(req.path, "/projects/group%2Fsub%2Fproject");
      await refused("get_project", { id: "../admin" }, /"\.\." segment/);
      await refused("get_project", { id: "a//b" }, /empty segment/);
      await refused("get_project", { id: "a\\b" }, /contains "\\"/);
    });

    await t.step("integer path parameter: a number in decimal, a string refused", async () => {
      assert.equal((await ok("get_item", { index: 42 })).path, "/items/42");
      assert.equal((await ok("get_item", { index: 1e21 })).path, "/items/1000000000000000000000");
      await refused("get_item", { index: "42" }, /argument "index".*integer/);
      await refused("get_item", { index: 0 }, /argument "index"/);
      await refused("get_item", { index: 1.5 }, /argument "index"/);
      await refused("get_item", { index: null }, /argument "index"/);
    });

    await t.step("string path parameter: pattern and max-length", async () => {
      assert.equal((await ok("get_label", { name: "bug-1" })).path, "/labels/bug-1");
      await refused("get_label", { name: "Bug" }, /argument "name"/);
      await refused("get_label", { name: "a".repeat(13) }, /argument "name"/);
    });

    await t.step("metacharacters=allow on a path parameter; controls still refused", async () => {
      const req = await ok("get_report", { file: "report (1) Q&A;$x.pdf" });
      assert.equal(req.path, "/reports/report%20(1)%20Q%26A%3B%24x.pdf");
      await refused("get_report", { file: "a\nb" }, /control character/);
      await refused("get_report", { file: "a/b" }, /contains "\/"/);
    });

    await t.step("metacharacters=allow on one query field; its neighbours stay gated", async () => {
      const promql = 'sum by (job) (rate(x{job="a|b"}[5m])) > 0; $`&<';
      const req = await ok("search_issue", { expr: promql });
      assert.equal(new URLSearchParams(req.query).get("query"), promql);
      assert.equal(
        req.query,
        "query=sum%20by%20(job)%20(rate(x%7Bjob%3D%22a%7Cb%22%7D%5B5m%5D))%20%3E%200%3B%20%24%60%26%3C",
      );
      await refused("search_issue", { expr: "up", q: "a;b" }, /"q".*metacharacters="allow"/);
      await refused("search_issue", { expr: "up\r\n" }, /control character/);
      await refused("search_issue", { expr: "x".repeat(201) }, /argument "expr"/);
    });

    await t.step("enum, pattern on items; null means not given", async () => {
      const req = await ok("search_issue", {
        expr: "up",
        state: "open",
        page: 2,
        tag: ["a", "b"],
        q: null,
      });
      assert.equal(req.query, "page=2&query=up&state=open&tag=a&tag=b");
      const nulls = await ok("search_issue", { expr: "up", state: null, page: null, tag: null });
      assert.equal(nulls.query, "query=up", "null optional inputs send nothing");
      await refused("search_issue", { expr: "up", state: "merged" }, /argument "state"/);
      await refused("search_issue", { expr: "up", page: 4 }, /argument "page"/);
      await refused("search_issue", { expr: "up", tag: ["A"] }, /argument "tag\[0\]"/);
      await refused("search_issue", { expr: null }, /argument "expr"/);
      const ratio = await ok("search_issue", { expr: "up", ratio: 1.5, q: "ab" });
      assert.equal(ratio.query, "q=ab&query=up&ratio=1.5");
      await refused("search_issue", { expr: "up", ratio: 1 }, /argument "ratio"/);
      await refused("search_issue", { expr: "up", q: "a" }, /argument "q"/);
    });

    await t.step("body: lengths, enum, and null optional fields at any depth", async () => {
      const req = await ok("create_issue", {
        title: "T",
        kind: "bug",
        note: null,
        meta: { owner: "o", team: null },
      });
      assert.deepEqual(JSON.parse(req.body), { title: "T", kind: "bug", meta: { owner: "o" } });
      await refused("create_issue", { title: "" }, /argument "title"/);
      await refused("create_issue", { title: "x".repeat(11) }, /argument "title"/);
      await refused("create_issue", { title: "T", kind: "feature" }, /argument "kind"/);
      const labelled = await ok("create_issue", { title: "T", labels: ["docs", "bug"] });
      assert.deepEqual(JSON.parse(labelled.body), { title: "T", labels: ["docs", "bug"] });
      await refused(
        "create_issue",
        { title: "T", labels: ["bug", "wontfix"] },
        /argument "labels\[1\]"/,
      );
      await refused("create_issue", { title: "T", meta: { owner: null } }, /argument "meta.owner"/);
      await refused("create_issue", { title: null }, /argument "title"/);
    });

    await t.step("the schema advertises what is enforced", async () => {
      const client = new Client(
        { name: "weir-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      try {
        const { tools } = await client.listTools();
        const props = (name: string) =>
          tools.find((x) => x.name === name)!.inputSchema.properties as Record<
            string,
            Record<string, unknown>
          >;
        assert.deepEqual(
          { ...props("get_item").index, description: undefined },
          { type: "integer", minimum: 1, description: undefined },
        );
        assert.equal(props("get_label").name.pattern, "^[a-z][a-z0-9-]*$");
        assert.equal(props("get_label").name.maxLength, 12);
        assert.equal(props("get_contents").path.maxLength, 1024);
        const search = props("search_issue");
        assert.deepEqual(search.state.type, ["string", "null"]);
        assert.deepEqual(search.state.enum, ["open", "closed", null]);
        assert.deepEqual(search.page.enum, [1, 2, 3, null]);
        assert.equal((search.tag.items as Record<string, unknown>).pattern, "^[a-z]+$");
        assert.equal(search.expr.type, "string", "a required input does not admit null");
        // The gate holds for every URL value (said once, in the instructions); an
        // input that opts out says so on itself, and only there.
        assert.equal(search.expr.description, "Any characters.");
        assert.equal(search.q.description, undefined);
        const create = props("create_issue");
        assert.equal(create.title.minLength, 1);
        assert.deepEqual(create.kind.enum, ["bug", "docs", null]);
      } finally {
        await client.close();
      }
    });
  } finally {
    await server.stop();
    await upstream.close();
  }
});
