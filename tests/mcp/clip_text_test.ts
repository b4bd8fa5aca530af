/**
 * Clipped text stays well-formed (issue 22, kind 1): a message that quotes
 * the start of an upstream's text (spec mode's error excerpt, an AWS error
 * message, a database error) never cuts a surrogate pair in two, so the
 * caller never sees half a character (it used to arrive as U+FFFD).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { clipText } from "../../src/mcp/text.ts";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";

Deno.test("clipText: at most max units, a prefix of the text, never a lone surrogate it did not hold", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.nat(70), (text, max) => {
      const clipped = clipText(text, max);
      assert.ok(clipped.length <= max);
      assert.ok(text.startsWith(clipped));
      assert.ok(clipped.isWellFormed());
      assert.ok(clipped.length >= Math.min(text.length, max) - 1);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("spec mode: an upstream error excerpt cut through an emoji is well-formed", async () => {
  let at = 0;
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response("e".repeat(at) + "\u{1F600}".repeat(4) + " end", {
        status: 400,
        headers: { "content-type": "text/plain; charset=utf-8" },
      }),
  );
  const file = await tempGuardfile(`wrap ward mcp clip {
    base-url "http://127.0.0.1:${upstream.addr.port}"
    auth none
    can get thing {
        path "/thing"
    }
}
`);
  const served = await serveHttp(file, { env: { PATH: Deno.env.get("PATH") ?? "" } });
  try {
    for (at = 194; at < 202; at++) {
      const r = await callApi(served.url, "get_thing", {});
      assert.equal(r.status, 502, r.text);
      assert.match(r.text, /^upstream_error: GET \/thing -> 400/);
      assert.ok(r.text.isWellFormed() && !r.text.includes("\ufffd"), JSON.stringify(r.text));
    }
  } finally {
    await served.stop();
    await upstream.shutdown();
  }
});
