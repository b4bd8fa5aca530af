/**
 * The shipped example guardfiles, served by the real CLI against a local
 * upstream standing in for the real API. Only the base-url of a copy is
 * pointed at the recorder (a literal base-url is rewritten; a `value env`
 * one is given the recorder's URL); every grant is exactly as shipped.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { type Recorded, type Recorder, startRecorder } from "../support/upstream.ts";
import { rpcAs } from "../support/revision_http.ts";

async function serveExample(
  example: string,
  upstream: Recorder,
  options: { pathPrefix?: string; env?: Record<string, string> } = {},
) {
  const text = await Deno.readTextFile(`guardfiles/${example}`);
  const copy = text.replace(
    /base-url "[^"]*"/,
    `base-url "${upstream.url}${options.pathPrefix ?? ""}"`,
  );
  const file = await tempGuardfile(copy);
  const server = await serveHttp(file, { env: options.env });
  const call = async (tool: string, args: Record<string, unknown>) => {
    const before = upstream.requests.length;
    const res = await fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    const body = await res.json();
    const sent = upstream.requests.slice(before);
    const text = (body.content ?? []).map((c: { text: string }) => c.text).join("\n");
    return { status: res.status, body, text, sent, req: sent[0] as Recorded | undefined };
  };
  return { server, call };
}

Deno.test("forgejo-issues: read, file, comment, close; delete withheld; owner restricted", async () => {
  const upstream = await startRecorder();
  const { server, call } = await serveExample("forgejo-issues.mcp.kdl", upstream, {
    pathPrefix: "/api/v1",
    env: { FORGEJO_TOKEN: "fj-token-4242" },
  });
  try {
    const get = await call("get_issue", { owner: "coilyco-web", repo: "site", index: 12 });
    assert.equal(get.status, 200, get.text);
    assert.equal(get.req!.method, "GET");
    assert.equal(get.req!.path, "/api/v1/repos/coilyco-web/site/issues/12");
    for (const index of ["12", 0, 1.5]) {
      const bad = await call("get_issue", { owner: "coilyco-web", repo: "site", index });
      assert.equal(bad.status, 400, `index ${JSON.stringify(index)} is refused by the schema`);
      assert.equal(bad.sent.length, 0);
    }
    const merged = await call("list_issue", {
      owner: "coilyco-web",
      repo: "site",
      state: "merged",
    });
    assert.equal(merged.status, 400, "state is one of open, closed, all");
    assert.equal(get.req!.headers.get("authorization"), "token fj-token-4242");

    const list = await call("list_issue", {
      owner: "coilyco-web",
      repo: "site",
      state: "open",
      limit: 20,
    });
    assert.equal(list.req!.query, "limit=20&state=open");
    const tooMany = await call("list_issue", { owner: "coilyco-web", repo: "site", limit: 500 });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.sent.length, 0);

    const create = await call("create_issue", {
      owner: "coilyco-web",
      repo: "site",
      title: "Broken link",
      labels: [3, 7],
    });
    assert.equal(create.req!.method, "POST");
    assert.deepEqual(JSON.parse(create.req!.body), { title: "Broken link", labels: [3, 7] });
    const untitled = await call("create_issue", { owner: "coilyco-web", repo: "site", body: "x" });
    assert.equal(untitled.status, 400);
    assert.match(untitled.text, /missing required argument "title"/);

    const comment = await call("comment_issue", {
      owner: "coilyco-web",
      repo: "site",
      index: 12,
      body: "On it.",
    });
    assert.equal(comment.req!.path, "/api/v1/repos/coilyco-web/site/issues/12/comments");

    const close = await call("close_issue", { owner: "coilyco-web", repo: "site", index: 12 });
    assert.equal(close.req!.method, "PATCH");
    assert.equal(close.req!.body, '{"state":"closed"}');

    const del = await call("delete_issue", {});
    assert.equal(del.status, 403);
    assert.match(del.text, /no undo/);
    assert.equal(del.sent.length, 0);

    const outside = await call("get_issue", { owner: "someone-else", repo: "site", index: 1 });
    // The restrict is the advertised schema's pattern: refused as invalid arguments.
    assert.equal(outside.status, 400);
    assert.equal(outside.sent.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("github-issues: search alias, typed bodies, blank refusal, withheld lock", async () => {
  const upstream = await startRecorder();
  const { server, call } = await serveExample("github-issues.mcp.kdl", upstream, {
    env: { GITHUB_TOKEN: "ghp_example_777" },
  });
  try {
    const search = await call("search_issue", {
      search_text: "repo:acme-x/app is:open",
      per_page: 5,
    });
    assert.equal(search.status, 200, search.text);
    assert.equal(search.req!.path, "/search/issues");
    assert.equal(search.req!.query, "per_page=5&q=repo%3Aacme-x%2Fapp%20is%3Aopen");
    assert.equal(search.req!.headers.get("authorization"), "Bearer ghp_example_777");
    assert.equal(search.req!.headers.get("x-github-api-version"), "2022-11-28");

    const create = await call("create_issue", {
      owner: "acme-x",
      repo: "app",
      title: "Crash on start",
      labels: ["bug"],
      assignees: ["octo"],
    });
    assert.deepEqual(JSON.parse(create.req!.body), {
      title: "Crash on start",
      labels: ["bug"],
      assignees: ["octo"],
    });

    const label = await call("add_label", {
      owner: "acme-x",
      repo: "app",
      issue_number: "4",
      labels: ["triaged"],
    });
    assert.equal(label.req!.method, "POST");
    assert.equal(label.req!.path, "/repos/acme-x/app/issues/4/labels");

    const blank = await call("comment_issue", {
      owner: "acme-x",
      repo: "app",
      issue_number: "4",
      body: " ",
    });
    assert.equal(blank.status, 400);
    assert.match(blank.text, /reject_empty_argument/);
    assert.equal(blank.sent.length, 0);

    const close = await call("close_issue", { owner: "acme-x", repo: "app", issue_number: "4" });
    assert.deepEqual(JSON.parse(close.req!.body), { state: "closed", state_reason: "completed" });

    const lock = await call("lock_issue", { owner: "acme-x" });
    assert.equal(lock.status, 403);
    assert.equal(lock.sent.length, 0);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("open-meteo: credential-free, bounded inputs, cached, a resource", async () => {
  const upstream = await startRecorder((req) =>
    Response.json({
      latitude: 52.5,
      hourly: { time: ["t0", "t1"], temperature_2m: [1, 2] },
      at: req.query,
    })
  );
  const { server, call } = await serveExample("open-meteo.mcp.kdl", upstream);
  try {
    const args = {
      latitude: 52.52,
      longitude: 13.41,
      hourly: ["temperature_2m"],
      forecast_days: 2,
    };
    const first = await call("get_forecast", args);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.req!.path, "/forecast");
    assert.equal(
      first.req!.query,
      "forecast_days=2&hourly=temperature_2m&latitude=52.52&longitude=13.41",
    );
    assert.equal(first.req!.headers.get("authorization"), null, "auth none sends no credential");
    assert.deepEqual(first.body.structuredContent.coverage.items, {
      "hourly.time": 2,
      "hourly.temperature_2m": 2,
    });
    const again = await call("get_forecast", args);
    assert.equal(again.status, 200);
    assert.equal(again.sent.length, 0, "served from the 10m cache");
    const off = await call("get_forecast", { latitude: 91, longitude: 0 });
    assert.equal(off.status, 400);
    assert.equal(off.sent.length, 0);
    const days = await call("get_forecast", { latitude: 1, longitude: 1, forecast_days: 30 });
    assert.equal(days.status, 400);

    const mcp = await rpcAs<{ result: { contents: { text: string }[] } }>(
      server.url,
      "2026-07-28",
      "resources/read",
      { uri: "weather://units" },
    );
    assert.match(mcp.result.contents[0].text, /degrees Celsius/);
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("plausible-stats: the site is pinned, not chosen; the Sites API is withheld", async () => {
  const upstream = await startRecorder((req) =>
    Response.json({ results: { visitors: { value: 42 } }, query: req.query })
  );
  const { server, call } = await serveExample("plausible-stats.mcp.kdl", upstream, {
    pathPrefix: "/api/v1/stats",
    env: { PLAUSIBLE_API_KEY: "pl-key-99", PLAUSIBLE_SITE: "example.com" },
  });
  try {
    const agg = await call("get_aggregate", { period: "30d", metrics: "visitors,pageviews" });
    assert.equal(agg.status, 200, agg.text);
    assert.equal(agg.req!.path, "/api/v1/stats/aggregate");
    assert.equal(agg.req!.query, "metrics=visitors%2Cpageviews&period=30d&site_id=example.com");
    assert.equal(agg.req!.headers.get("authorization"), "Bearer pl-key-99");

    const other = await call("get_aggregate", { site_id: "competitor.com" });
    assert.equal(other.status, 400, "site_id is not an input");
    assert.match(other.text, /unexpected argument "site_id"/);
    assert.equal(other.sent.length, 0);

    const breakdown = await call("get_breakdown", { property: "visit:source", limit: 10 });
    assert.equal(breakdown.req!.query, "limit=10&property=visit%3Asource&site_id=example.com");
    const unbounded = await call("get_breakdown", { property: "visit:source", limit: 1000 });
    assert.equal(unbounded.status, 400);

    for (const tool of ["delete_site", "create_site", "create_shared-link"]) {
      const r = await call(tool, { site_id: "example.com" });
      assert.equal(r.status, 403, tool);
      assert.equal(r.sent.length, 0, tool);
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
});

Deno.test("stripe-billing: form bodies as Stripe reads them, the agent's Idempotency-Key; no money moves", async () => {
  const upstream = await startRecorder(() => Response.json({ id: "cus_123", object: "customer" }));
  const { server, call } = await serveExample("stripe-billing.mcp.kdl", upstream, {
    env: { STRIPE_SECRET_KEY: "rk_test_0123456789abcdef" },
  });
  try {
    const created = await call("create_customer", {
      email: "ada@example.com",
      name: "Ada Lovelace & Co.",
      metadata: { crm_id: "42", "note with space": "a=b+c" },
      preferred_locales: ["en", "fr"],
      idempotency_key: "cust-ada-0001",
    });
    assert.equal(created.status, 200, created.text);
    const req = created.req!;
    assert.equal(req.method, "POST");
    assert.equal(req.path, "/v1/customers");
    assert.equal(req.headers.get("content-type"), "application/x-www-form-urlencoded");
    assert.equal(req.headers.get("idempotency-key"), "cust-ada-0001");
    assert.equal(req.headers.get("stripe-version"), "2024-06-20");
    assert.equal(req.headers.get("authorization"), "Bearer rk_test_0123456789abcdef");
    assert.equal(
      req.body,
      "email=ada%40example.com&name=Ada+Lovelace+%26+Co.&metadata%5Bcrm_id%5D=42" +
        "&metadata%5Bnote+with+space%5D=a%3Db%2Bc&preferred_locales%5B%5D=en" +
        "&preferred_locales%5B%5D=fr",
    );

    const item = await call("create_invoice-item", {
      customer: "cus_123",
      amount: 1999,
      currency: "eur",
    });
    assert.equal(item.status, 200, item.text);
    assert.equal(item.req!.body, "customer=cus_123&amount=1999&currency=eur");
    assert.equal(item.req!.headers.get("idempotency-key"), null, "none given, none sent");

    const key = await call("create_invoice-item", {
      customer: "cus_123",
      amount: 1,
      currency: "eur",
      idempotency_key: "retry\r\nStripe-Account: acct_other",
    });
    assert.equal(key.status, 400, key.text);
    assert.equal(key.sent.length, 0);

    for (const tool of ["create_charge", "create_refund", "delete_customer"]) {
      const r = await call(tool, { amount: 100 });
      assert.equal(r.status, 403, tool);
      assert.equal(r.sent.length, 0, tool);
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
});
