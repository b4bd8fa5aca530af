/**
 * A compressed upstream answer is held to `--max-response-bytes` as decoded:
 * its Content-Length counts the gzip bytes, so a small declared length can
 * inflate to gigabytes (a "gzip bomb"). weir stops reading once the decoded
 * bytes pass the cap, and answers `upstream_too_large`, through the real CLI.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";

/** gzip of `mib` MiB of zeros (about 1 KiB of gzip per MiB). */
async function gzipZeros(mib: number): Promise<Uint8Array> {
  const chunk = new Uint8Array(1 << 20);
  let n = 0;
  const zeros = new ReadableStream<BufferSource>({
    pull(c) {
      if (n++ >= mib) c.close();
      else c.enqueue(chunk);
    },
  });
  return new Uint8Array(
    await new Response(zeros.pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
  );
}

Deno.test("a gzip answer with a small Content-Length is capped as decoded, not read whole", async () => {
  const gz = await gzipZeros(256); // 256 MiB decoded, about 260 KiB sent
  let pulled = 0;
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    let offset = 0;
    // Paced 1 KiB at a time, so how much the upstream had to send shows whether
    // weir stopped at the cap (about 8 KiB of gzip) or read the whole body.
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (offset >= gz.length) return c.close();
        await new Promise((r) => setTimeout(r, 5));
        const piece = gz.subarray(offset, offset + 1024);
        offset += piece.length;
        pulled = offset;
        c.enqueue(piece);
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": String(gz.length),
      },
    });
  });
  const file = await tempGuardfile(
    `wrap ward mcp z {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
      `  can get blob { path "/blob" }\n}\n`,
  );
  const server = await serveHttp(file);
  try {
    const r = await callApi(server.url, "get_blob", {});
    const sentByThen = pulled;
    assert.equal(r.status, 502, r.text);
    assert.match(r.text, /upstream_too_large: GET \/blob answered more than 8388608 bytes/);
    assert.ok(
      sentByThen < gz.length / 2,
      `weir answered after ${sentByThen} of ${gz.length} gzip bytes`,
    );
  } finally {
    await server.stop();
    await upstream.shutdown();
    await Deno.remove(file);
  }
});
