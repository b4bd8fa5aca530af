/**
 * The upstream answer's limits hold at boundary-1, boundary and boundary+1
 * however the bytes arrive, through the shipped CLI on both upstream routes
 * (weir's HTTP/1.1 client, and fetch with WEIR_UPSTREAM_CLIENT=fetch): the
 * 64 KiB answer head, and --max-response-bytes under Content-Length,
 * chunked and close-delimited framing. A raw TCP upstream writes each answer
 * in one write, byte by byte around the boundary, or at generated points.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { serveHttp, tempGuardfile } from "../support/cli.ts";

const enc = new TextEncoder();
const HEAD = 64 * 1024;
const CAP = 5000;

/** The answer for `/head/<size>` or `/<framing>/<bytes>`, and where its boundary falls. */
function answerFor(path: string): { bytes: Uint8Array; around: number } {
  const [, kind, n] = path.split("/");
  const size = Number(n);
  if (kind === "head") {
    const fixed =
      "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nx-pad: \r\n\r\n";
    const text = fixed.replace("x-pad: ", `x-pad: ${"a".repeat(size - fixed.length)}`) + "{}";
    return { bytes: enc.encode(text), around: size };
  }
  const body = `"${"b".repeat(size - 2)}"`;
  const head = kind === "length"
    ? `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`
    : kind === "chunked"
    ? "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    : "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
  const framed = kind === "chunked"
    ? body.match(/.{1,900}/gs)!.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join("") +
      "0\r\n\r\n"
    : body;
  return { bytes: enc.encode(head + framed), around: head.length + size };
}

/** A raw upstream: the answer by path, written in the pieces the query's `cuts` say. */
function rawUpstream() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const loop = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(65536);
        let seen = "";
        while (!seen.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return;
          seen += new TextDecoder().decode(buf.subarray(0, n));
        }
        const target = new URL(seen.split(" ")[1], "http://x");
        if (target.pathname.startsWith("/held/")) {
          // A declared length, then no body at all until weir gives up on it.
          const size = Number(target.pathname.split("/")[2]);
          await conn.write(enc.encode(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`,
          ));
          while ((await conn.read(buf)) !== null) { /* hold until weir closes */ }
          return;
        }
        const { bytes } = answerFor(target.pathname);
        const cuts = (target.searchParams.get("cuts") ?? "").split(",").filter(Boolean).map(Number);
        let from = 0;
        for (const cut of [...cuts, bytes.length]) {
          if (cut <= from || cut > bytes.length) continue;
          let off = from;
          while (off < cut) off += await conn.write(bytes.subarray(off, cut));
          from = cut;
          if (cut < bytes.length) await new Promise((r) => setTimeout(r, 2));
        }
      })().catch(() => {}).finally(() => {
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    async close() {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

const cutsOf = (length: number, around: number) =>
  fc.oneof(
    fc.constant([] as number[]),
    fc.uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: 5 })
      .map((c) => c.sort((a, b) => a - b)),
    fc.constant(
      Array.from({ length: 6 }, (_, i) => around - 3 + i).filter((c) => c > 0 && c < length),
    ),
  );

for (const client of ["http1", "fetch"]) {
  Deno.test(`weir serve (${client}): the answer head and body caps hold at their boundaries however the bytes arrive`, async () => {
    const upstream = rawUpstream();
    const file = await tempGuardfile(`wrap ward mcp limits {
    base-url "${upstream.url}"
    auth none
    can get answer {
        path "/{kind}/{size}"
        query "cuts"
    }
}
`);
    const server = await serveHttp(file, {
      env: { WEIR_UPSTREAM_CLIENT: client, PATH: Deno.env.get("PATH") ?? "" },
      extra: ["--max-response-bytes", String(CAP)],
    });
    const call = async (kind: string, size: number, cuts: number[]) => {
      const r = await fetch(`${server.url}/api/get_answer`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind, size: String(size), cuts: cuts.join(",") }),
      });
      const text = await r.text();
      return { status: r.status, text };
    };
    try {
      for (const delta of [-1, 0, 1]) {
        const size = HEAD + delta;
        const { bytes, around } = answerFor(`/head/${size}`);
        await fc.assert(
          fc.asyncProperty(cutsOf(bytes.length, around), async (cuts) => {
            const r = await call("head", size, cuts);
            if (delta <= 0) assert.equal(r.status, 200, `${client} head ${size}: ${r.text}`);
            else {
              assert.equal(r.status, 502, `${client}: a ${size}-byte head passed (cuts ${cuts})`);
              assert.match(r.text, /head is over 65536 bytes/);
            }
          }),
          { numRuns: 4 },
        );
      }
      for (const framing of ["length", "chunked", "close"]) {
        for (const delta of [-1, 0, 1]) {
          const size = CAP + delta;
          const { bytes, around } = answerFor(`/${framing}/${size}`);
          await fc.assert(
            fc.asyncProperty(cutsOf(bytes.length, around), async (cuts) => {
              const r = await call(framing, size, cuts);
              if (delta <= 0) {
                assert.equal(r.status, 200, `${client} ${framing} ${size}: ${r.text}`);
              } else {
                assert.equal(
                  r.status,
                  502,
                  `${client} ${framing}: ${size} bytes passed a ${CAP} cap`,
                );
                assert.match(r.text, /upstream_too_large/);
              }
            }),
            { numRuns: 4 },
          );
        }
      }
    } finally {
      await server.stop();
      await upstream.close();
      await Deno.remove(file);
    }
  });
}

for (const client of ["http1", "fetch"]) {
  Deno.test(`weir serve (${client}): a declared length over the cap is refused before any of the body arrives`, async () => {
    // issue 34 item 10: with the declared-length check loosened, weir waited for
    // a body it would refuse anyway (here one that never comes: a timeout).
    const upstream = rawUpstream();
    const file = await tempGuardfile(`wrap ward mcp limits {
    base-url "${upstream.url}"
    auth none
    can get answer { path "/{kind}/{size}"; }
}
`);
    const server = await serveHttp(file, {
      env: { WEIR_UPSTREAM_CLIENT: client, PATH: Deno.env.get("PATH") ?? "" },
      extra: ["--max-response-bytes", String(CAP), "--upstream-timeout", "20000"],
    });
    try {
      for (const size of [CAP + 1, 2 * CAP - 1, 10 * CAP]) {
        const r = await fetch(`${server.url}/api/get_answer`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ kind: "held", size: String(size) }),
        });
        const text = await r.text();
        assert.equal(r.status, 502, `${client} ${size}: ${text}`);
        assert.match(text, /answered more than 5000 bytes; refused/, `${client} ${size}`);
      }
    } finally {
      await server.stop();
      await upstream.close();
    }
  });
}
