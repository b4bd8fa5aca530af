/**
 * The authorization server's metadata is read up to its 256 KiB cap and no
 * further: an issuer (or anything answering at its discovery URL) sending an
 * endless document is cut off at the cap, not read whole into memory first.
 */
import assert from "node:assert/strict";
import { discoverIssuer } from "../../src/oauth/access_tokens.ts";

Deno.test("discovery stops reading a metadata document at the cap", async () => {
  let sent = 0;
  const LIMIT = 64 << 20; // the stream ends here, if anything reads that far
  const chunk = new TextEncoder().encode(`{"issuer":"${"x".repeat(65_000)}`);
  const endless: typeof fetch = () => {
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= LIMIT) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "application/json" } }),
    );
  };
  await assert.rejects(
    discoverIssuer("https://issuer.example", { fetch: endless }),
    /metadata document too large/,
  );
  // Two discovery URLs tried, each read to just past 256 KiB.
  assert.ok(sent < 2 << 20, `read ${sent} bytes`);
});
