/**
 * A number argument JSON.parse cannot hold is refused before any request,
 * through the real CLI: `1e400` parses as Infinity, which passed an integer
 * schema (the path said `/items/Infinity`) and went into a body as `null`.
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

Deno.test("a number beyond the largest double is refused by where it is, nothing sent", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(`wrap ward mcp n {
    base-url "${upstream.url}"
    auth none
    can get item {
        path "/items/{index}"
        param "index" type="integer" minimum=0
    }
    can create item {
        path "/items"
        body {
            field "price" type="number"
            field "meta" type="object" raw=#true
        }
    }
}
`);
  const server = await serveHttp(file);
  const api = async (tool: string, body: string) => {
    const r = await fetch(`${server.url}/api/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return { status: r.status, text: await r.text() };
  };
  try {
    const cases: [string, string, RegExp][] = [
      ["get_item", `{"index":1e400}`, /the number at index is an integer beyond 2\^53 or beyond/],
      ["create_item", `{"price":-1e400}`, /the number at price /],
      ["create_item", `{"meta":{"a":[1,1E999]}}`, /the number at meta\.a\[1\] /],
      // More digits than a double holds: JSON.parse would make these 1e21 and 0.1.
      ["get_item", `{"index":1000000000000000000001}`, /the number at index .*more digits/],
      ["create_item", `{"price":0.1000000000000000055511151231257827}`, /the number at price /],
      ["create_item", `{"meta":{"n":[12345678901234567890123]}}`, /the number at meta\.n\[0\] /],
      // As many digits split by the decimal point (or an exponent): JSON.parse
      // would make these 1234567890.1234567, 12345678.12345679 and 123456789.01234567.
      ["create_item", `{"price":1234567890.123456789}`, /the number at price /],
      [
        "create_item",
        `{"meta":{"n":{"m":[12345678.123456789]}}}`,
        /the number at meta\.n\.m\[0\] /,
      ],
      ["create_item", `{"price":123456789012.3456789e-3}`, /the number at price /],
    ];
    for (const [tool, body, message] of cases) {
      const r = await api(tool, body);
      assert.equal(r.status, 400, `${body}: ${r.text}`);
      assert.match(r.text, message);
    }
    assert.equal(upstream.requests.length, 0, "nothing reached the upstream");
    // Large but finite numbers still pass, and so does every number a double holds exactly,
    // however it is spelled.
    assert.equal((await api("create_item", `{"price":1e300}`)).status, 200);
    assert.equal((await api("create_item", `{"price":0.30000000000000004}`)).status, 200);
    assert.equal((await api("create_item", `{"price":1000000000000000000000}`)).status, 200);
    assert.equal((await api("create_item", `{"price":1.50000000000000000000}`)).status, 200);
    assert.equal((await api("create_item", `{"price":1234567890.123456}`)).status, 200);
    assert.equal((await api("get_item", `{"index":42}`)).status, 200);
    assert.equal(upstream.requests.at(-1)!.path, "/items/42");
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});
