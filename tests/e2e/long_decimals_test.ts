/**
 * Numbers with more significant digits than a double holds, written with
 * the digits split by a decimal point (`1234567890.123456789`, 19 digits)
 * rather than as one run of 16 or more: through the real CLI, an upstream's
 * answer passes them on digit for digit, and an argument holding one is
 * refused by its path (nothing sent) over the tool API and over MCP.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { postMcp } from "../support/raw_upstream.ts";

/** Each is the only number in its text, so nothing else sends the text down the exact path. */
const LONG = ["1234567890.123456789", "12345678.123456789", "123456789012.3456789e-3"];

Deno.test("a long decimal split by its point: passed on exact from the upstream, refused as an argument", async () => {
  let answer = "";
  const upstream = await startRecorder(() =>
    new Response(answer, { headers: { "content-type": "application/json" } })
  );
  const file = await tempGuardfile(`wrap ward mcp decimals {
    base-url "${upstream.url}"
    auth none
    can get thing { path "/things/{id}" }
    can create thing {
        path "/things"
        body { field "price" type="number"; field "meta" type="object" raw=#true; }
    }
}
`);
  const server = await serveHttp(file);
  try {
    for (const n of LONG) {
      answer = `{"n":${n}}`;
      const r = await callApi(server.url, "get_thing", { id: "1" });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.text.includes(`"result":{"n":${n}}`), `${n}: ${r.text}`);
    }
    const before = upstream.requests.length;
    for (const n of LONG) {
      for (
        const [args, at] of [[`{"price":${n}}`, "price"], [`{"meta":{"a":[${n}]}}`, "meta.a[0]"]]
      ) {
        const api = await fetch(`${server.url}/api/create_thing`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: args,
        });
        const text = await api.text();
        assert.equal(api.status, 400, `${args}: ${text}`);
        assert.ok(text.includes(`the number at ${at} `), `${args}: ${text}`);
        const rawText = await postMcp(
          server.url,
          `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_thing","arguments":${args}}}`,
        );
        assert.ok(rawText.includes(`the number at ${at} `), `MCP ${args}: ${rawText}`);
      }
    }
    assert.equal(upstream.requests.length, before, "no argument with a long decimal was sent");
    // Sixteen digits a double holds exactly still pass.
    assert.equal(
      (await callApi(server.url, "create_thing", { price: 1234567890.123456 })).status,
      200,
    );
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});
