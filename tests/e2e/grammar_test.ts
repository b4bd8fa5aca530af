/**
 * Every grammar feature, driven through the real CLI (`weir serve --http`)
 * against a local upstream that records each request: the request a valid
 * call produces, and the refusal, with no request, that each violated
 * constraint produces.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { serveHttp } from "../support/cli.ts";
import { type Recorded, startRecorder } from "../support/upstream.ts";

function answer(req: Recorded): Response {
  if (req.path === "/feed.xml") {
    return new Response("<feed><entry>one</entry></feed>", {
      headers: { "content-type": "application/atom+xml" },
    });
  }
  // The pinned tool's upstream echoes its query, so a pin that should be redacted would show.
  if (req.path === "/pinned") return Response.json({ echoed: req.query });
  const checked = /^\/checked\/(.+)$/.exec(req.path);
  if (checked) return Response.json({ status: checked[1] === "bad" ? "failed" : "ok", owner: "x" });
  const empty = /^\/empty\/(.+)$/.exec(req.path);
  if (empty) {
    const bodies: Record<string, string | null> = {
      null: "null",
      list: "[]",
      obj: "{}",
      blank: '""',
      zero: "0",
      false: "false",
      none: null,
      some: '{"rows":[1]}',
    };
    const body = bodies[empty[1]];
    return body === null
      ? new Response(null, { status: 204 })
      : new Response(body, { headers: { "content-type": "application/json" } });
  }
  return Response.json({ ok: true, at: req.path, n: Math.random() });
}

Deno.test("every grammar feature through weir serve", async (t) => {
  const upstream = await startRecorder(answer);
  const server = await serveHttp("tests/fixtures/grammar.mcp.kdl", {
    env: {
      GRAMMAR_BASE_URL: upstream.url,
      GRAMMAR_ORG_URL: "https://vault.example/secret?org=acme-org-77&x=1",
    },
  });
  const sent = () => upstream.requests.length;
  const last = () => upstream.requests.at(-1)!;
  const api = async (tool: string, args: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    const body = await res.json();
    return {
      status: res.status,
      body,
      text: body.content?.map((c: { text: string }) => c.text).join("\n") ?? "",
    };
  };
  /** A call that must succeed with exactly one upstream request; returns it. */
  const ok = async (tool: string, args: Record<string, unknown>) => {
    const before = sent();
    const r = await api(tool, args);
    assert.equal(r.status, 200, `${tool} ${JSON.stringify(args)}: ${r.text}`);
    assert.equal(sent(), before + 1, `${tool} sent exactly one request`);
    return { req: last(), result: r.body };
  };
  /** A call that must be refused with no upstream request; returns the message. */
  const refused = async (tool: string, args: Record<string, unknown>, pattern: RegExp) => {
    const before = sent();
    const r = await api(tool, args);
    assert.notEqual(r.status, 200, `${tool} ${JSON.stringify(args)} should be refused`);
    assert.equal(r.body.isError, true);
    assert.match(r.text, pattern);
    assert.equal(sent(), before, `${tool} ${JSON.stringify(args)} sent nothing`);
    return r;
  };

  try {
    await t.step("typed query: types, alias, arrays in caller order, keys sorted", async () => {
      const { req } = await ok("search_ticket", {
        text: "bug + more",
        limit: 25,
        ratio: 0.5,
        open: true,
        label: ["zeta", "alpha"],
        ids: [3, 1],
      });
      assert.equal(req.method, "GET");
      assert.equal(req.path, "/search");
      assert.equal(
        req.query,
        "ids=3&ids=1&label=zeta&label=alpha&limit=25&open=true&q=bug%20%2B%20more&ratio=0.5",
      );
    });

    await t.step(
      "typed query: each violated constraint is refused before any request",
      async () => {
        await refused("search_ticket", { limit: 5 }, /missing required argument "text"/);
        await refused("search_ticket", { text: "a", limit: "25" }, /argument "limit".*integer/);
        await refused("search_ticket", { text: "a", limit: 0 }, /argument "limit"/);
        await refused("search_ticket", { text: "a", limit: 51 }, /argument "limit"/);
        await refused("search_ticket", { text: "a", limit: 2.5 }, /argument "limit"/);
        await refused("search_ticket", { text: "a", ratio: 1.5 }, /argument "ratio"/);
        await refused("search_ticket", { text: "a", open: "yes" }, /argument "open"/);
        await refused("search_ticket", { text: "a", label: [] }, /argument "label"/);
        await refused(
          "search_ticket",
          { text: "a", label: ["a", "b", "c", "d"] },
          /argument "label"/,
        );
        await refused("search_ticket", { text: "a", ids: ["1"] }, /argument "ids\[0\]"/);
        await refused("search_ticket", { text: "a", q: "x" }, /unexpected argument "q"/);
        await refused(
          "search_ticket",
          { text: "a", before: "x", after: "y" },
          /before.*after|after.*before|at most one/,
        );
        await refused("search_ticket", { text: "a;rm" }, /policy_denied/);
      },
    );

    await t.step("typed body: the declared shape exactly, nested and raw", async () => {
      const args = {
        title: "T",
        points: 3,
        urgent: false,
        watchers: [1, 2],
        meta: { source: "agent", origin: { team: "ops" } },
        extra: { anything: ["goes", 1] },
        anything: [{ a: 1 }, "b"],
      };
      const { req } = await ok("create_ticket", args);
      assert.equal(req.method, "POST");
      assert.deepEqual(JSON.parse(req.body), args);
      assert.equal(req.headers.get("content-type"), "application/json");
    });

    await t.step("typed body: violations are refused before any request", async () => {
      await refused("create_ticket", { points: 1 }, /missing required argument "title"/);
      await refused("create_ticket", { title: "T", points: "3" }, /argument "points"/);
      await refused("create_ticket", { title: "T", watchers: ["x"] }, /argument "watchers\[0\]"/);
      await refused(
        "create_ticket",
        { title: "T", meta: {} },
        /missing required argument "meta.source"/,
      );
      await refused(
        "create_ticket",
        { title: "T", meta: { source: "a", secret: 1 } },
        /unexpected argument "meta.secret"/,
      );
      await refused("create_ticket", { title: "T", colour: "red" }, /unexpected argument "colour"/);
      await refused("create_ticket", { title: "T", extra: [1] }, /argument "extra"/);
    });

    await t.step(
      "reject-empty-argument: a blank title is refused, an absent one is the schema's business",
      async () => {
        await refused("create_ticket", { title: "   " }, /reject_empty_argument: "title"/);
      },
    );

    await t.step("body map: only the mapped values, at their targets", async () => {
      const { req } = await ok("move_ticket", { id: "9", target: { board: "b-1", lane: "done" } });
      assert.equal(req.method, "POST");
      assert.equal(req.path, "/tickets/9/move");
      assert.deepEqual(JSON.parse(req.body), { board_id: "b-1", lane: "done" });
      await refused(
        "move_ticket",
        { id: "9", target: { board: "b-1" } },
        /missing required argument "target.lane"/,
      );
      await refused(
        "move_ticket",
        { id: "9", target: { board: 1, lane: "x" } },
        /argument "target.board"/,
      );
    });

    await t.step("set: the body exactly as written, property and block forms merged", async () => {
      const { req } = await ok("reset_ticket", { id: "4" });
      assert.equal(req.method, "PUT");
      assert.deepEqual(JSON.parse(req.body), {
        status: "open",
        points: 0,
        flags: { pinned: false, labels: ["a", "b"] },
      });
      await refused("reset_ticket", { id: "4", status: "closed" }, /unexpected argument "status"/);
    });

    await t.step("method override: DELETE, and it is marked destructive", async () => {
      const { req } = await ok("purge_ticket", { id: "4" });
      assert.equal(req.method, "DELETE");
      assert.equal(req.body, "");
    });

    await t.step("header: static headers on every request", async () => {
      const { req } = await ok("get_cached", { id: "hdr" });
      assert.equal(req.headers.get("x-client"), "weir-tests");
      assert.equal(req.headers.get("user-agent"), "grammar-fixture/1");
    });

    await t.step("raw-response: the body passes through as text", async () => {
      const { result } = await ok("get_feed", {});
      assert.equal(result.structuredContent.result, "<feed><entry>one</entry></feed>");
    });

    await t.step(
      "fail-when: a truthy expression over the answer (inputs as $name) is a tool error",
      async () => {
        const good = await ok("get_checked", { id: "fine" });
        assert.equal(good.result.structuredContent.result.status, "ok");
        const before = sent();
        const bad = await api("get_checked", { id: "bad" });
        assert.equal(bad.status, 502);
        assert.match(bad.text, /fail-when/);
        assert.equal(sent(), before + 1, "the request was sent; the answer was refused");
        const owner = await api("get_checked", { id: "x" });
        assert.equal(owner.status, 502, "owner == $id");
      },
    );

    await t.step("graphql: the document and the declared variables", async () => {
      const { req } = await ok("query_graph", { owner: "octo", first: 5 });
      assert.equal(req.method, "POST");
      assert.deepEqual(JSON.parse(req.body), {
        query:
          "query($owner: String!, $first: Int) { repos(owner: $owner, first: $first) { name } }",
        variables: { owner: "octo", first: 5 },
      });
      await refused(
        "query_graph",
        { owner: "octo", query: "{ admin }" },
        /unexpected argument "query"/,
      );
    });

    await t.step("cache: a repeat is served without a request; other arguments miss", async () => {
      const first = await ok("get_cached", { id: "c1" });
      const before = sent();
      const again = await api("get_cached", { id: "c1" });
      assert.equal(again.status, 200);
      assert.equal(sent(), before, "served from cache");
      assert.deepEqual(again.body.structuredContent, first.result.structuredContent);
      await ok("get_cached", { id: "c2" });
    });

    await t.step(
      "reject-empty: null, [], {}, blank and no body are refused; 0 and false are answers",
      async () => {
        for (const kind of ["null", "list", "obj", "blank", "none"]) {
          const r = await api("get_empty", { kind });
          assert.equal(r.status, 502, kind);
          assert.match(r.text, /reject_empty/);
        }
        for (const kind of ["zero", "false", "some"]) {
          const r = await api("get_empty", { kind });
          assert.equal(r.status, 200, kind);
        }
      },
    );

    await t.step(
      "pin: server-side query values, absent from the schema; one taken from a URL-valued secret is redacted",
      async () => {
        const { req, result } = await ok("get_pinned", { page: "2" });
        assert.equal(req.query, "api_key=pinned-secret-55&org=acme-org-77&page=2");
        const text = JSON.stringify(result);
        // A literal pin is written in the file: policy, shown as sent.
        assert.match(text, /api_key=pinned-secret-55/);
        // from="query:org" reads a URL-valued secret: redacted wherever it shows.
        assert.match(text, /org=\[redacted\]&page=2/);
        assert.ok(!text.includes("acme-org-77"), text);
        await refused("get_pinned", { api_key: "mine" }, /unexpected argument "api_key"/);
      },
    );

    await t.step("value chain base-url: the first set, non-empty variable wins", async () => {
      const first = await startRecorder();
      const both = await serveHttp("tests/fixtures/grammar.mcp.kdl", {
        env: { GRAMMAR_UNSET_BASE: first.url, GRAMMAR_BASE_URL: upstream.url },
      });
      const empty = await serveHttp("tests/fixtures/grammar.mcp.kdl", {
        env: { GRAMMAR_UNSET_BASE: "", GRAMMAR_BASE_URL: first.url },
      });
      try {
        const before = sent();
        for (const url of [both.url, empty.url]) {
          const res = await fetch(`${url}/api/get_cached`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: '{"id":"chain"}',
            signal: AbortSignal.timeout(30_000),
          });
          assert.equal(res.status, 200, await res.text());
        }
        assert.equal(
          first.requests.length,
          2,
          "the first variable, then the one after an empty one",
        );
        assert.equal(sent(), before, "GRAMMAR_BASE_URL was not used while the first was set");
      } finally {
        await both.stop();
        await empty.stop();
        await first.close();
      }
    });

    await t.step("MCP surface: metadata, annotations, resources, prompts, icons", async () => {
      const client = new Client(
        { name: "weir-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      try {
        const { tools } = await client.listTools();
        const search = tools.find((x) => x.name === "search_ticket")!;
        // Lean: no title that only repeats the name; annotations only where they
        // differ from the MCP defaults (destructive and idempotent mean nothing for a read).
        assert.equal(search.title, undefined);
        assert.equal(search.description, "Search tickets by typed filters.");
        assert.deepEqual(search.annotations, { readOnlyHint: true });
        const props = search.inputSchema.properties as Record<string, Record<string, unknown>>;
        assert.deepEqual(Object.keys(props).sort(), [
          "after",
          "before",
          "ids",
          "label",
          "limit",
          "open",
          "ratio",
          "text",
        ]);
        assert.deepEqual(props.limit.type, ["integer", "null"], "optional: null is not given");
        assert.equal(props.limit.minimum, 1);
        assert.equal(props.label.maxItems, 3);
        assert.deepEqual(search.inputSchema.required, ["text"]);
        assert.equal(
          search.outputSchema,
          undefined,
          "the envelope is described once, not per tool",
        );
        const purge = tools.find((x) => x.name === "purge_ticket")!;
        // destructiveHint true and readOnlyHint false are the defaults: left out.
        assert.deepEqual(purge.annotations, { idempotentHint: true });
        const create = tools.find((x) => x.name === "create_ticket")!;
        assert.match(create.description ?? "", /POST \/tickets/);
        assert.deepEqual(create.annotations, { destructiveHint: false });
        assert.match(client.getInstructions() ?? "", /null, which means not given/);
        assert.match(client.getInstructions() ?? "", /read coverage first/);

        const info = client.getServerVersion() as { icons?: unknown[] } | undefined;
        assert.deepEqual(info?.icons, [{
          src: "data:image/png;base64,iVBORw0KGgo=",
          mimeType: "image/png",
          sizes: ["16x16"],
        }]);
        const { resources } = await client.listResources();
        assert.deepEqual(resources.map((r) => r.uri), ["docs://policy"]);
        assert.deepEqual(resources[0].annotations, { audience: ["assistant"], priority: 0.8 });
        const read = await client.readResource({ uri: "docs://policy" });
        assert.deepEqual(read.contents, [{
          uri: "docs://policy",
          mimeType: "text/markdown",
          text: "Only team boards.\nNo deletes.",
        }]);
        const prompt = await client.getPrompt({ name: "triage", arguments: { id: "42" } });
        assert.deepEqual(prompt.messages, [{
          role: "user",
          content: { type: "text", text: "Triage ticket 42 in a  tone." },
        }]);
        await assert.rejects(client.getPrompt({ name: "triage", arguments: {} }), /id/);
      } finally {
        await client.close();
      }
    });
  } finally {
    await server.stop();
    await upstream.close();
  }
  assert.ok(!server.stderr().includes("pinned-secret-55"), "pins are not logged");
  assert.ok(!server.stderr().includes("acme-org-77"), "pins are not logged");
});
