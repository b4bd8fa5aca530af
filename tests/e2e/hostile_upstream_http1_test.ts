/**
 * A hostile upstream against weir's own HTTP/1.1 client
 * (src/outbound/http1_client.ts), through the real CLI with its defaults:
 * a raw TCP server writes each answer byte for byte. Every bad answer must
 * end in a prompt, named tool error (no crash, no wait for the deadline, no
 * memory blow-up), the credential never appears, and the next call on the
 * same upstream is answered correctly. Where `fetch` (WEIR_UPSTREAM_CLIENT=fetch)
 * answers the caller with the same status, both are compared.
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";

const enc = new TextEncoder();
const TOKEN = "hostile-upstream-token-0123456789";

/** `mib` MiB of zeros in brotli: a few hundred bytes that decode to `mib` MiB. */
async function brotliZeros(mib: number): Promise<Uint8Array> {
  const compress = zlib.createBrotliCompress({
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 },
  });
  const out: Uint8Array[] = [];
  compress.on("data", (c: Uint8Array) => out.push(c));
  const done = new Promise<void>((resolve) => compress.on("end", () => resolve()));
  const chunk = new Uint8Array(1 << 20);
  for (let i = 0; i < mib; i++) {
    if (!compress.write(chunk)) await new Promise((r) => compress.once("drain", r));
  }
  compress.end();
  await done;
  return new Uint8Array(Buffer.concat(out));
}

const json = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n` +
  `${extra}\r\n${body}`;

/**
 * A raw upstream: the last path segment names the script that answers
 * (`ok` by default); every connection is kept for further requests unless
 * the script returns "close".
 */
function rawUpstream(
  scripts: Record<
    string,
    (write: (b: string | Uint8Array) => Promise<void>) => Promise<"keep" | "close">
  >,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const loop = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      (async () => {
        const buf = new Uint8Array(65536);
        let pending = "";
        const write = async (b: string | Uint8Array) => {
          const bytes = typeof b === "string" ? enc.encode(b) : b;
          for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
        };
        try {
          for (;;) {
            while (!pending.includes("\r\n\r\n")) {
              const n = await conn.read(buf);
              if (n === null) return;
              pending += new TextDecoder().decode(buf.subarray(0, n));
            }
            const end = pending.indexOf("\r\n\r\n") + 4;
            const head = pending.slice(0, end);
            pending = pending.slice(end);
            const name = head.split(" ")[1].split("/").pop()!;
            const script = scripts[name] ?? (async (w) => (await w(json('{"ok":"fine"}')), "keep"));
            if ((await script(write)) === "close") return;
          }
        } catch {
          // the client went away
        } finally {
          open.delete(conn);
          try {
            conn.close();
          } catch { /* closed */ }
        }
      })();
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async stop() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await loop.catch(() => {});
    },
  };
}

/** `weir serve FILE --http 127.0.0.1:0` with the process id, for its peak memory. */
async function serveWithPid(file: string, env: Record<string, string>, extra: string[] = []) {
  const served = await serveHttp(file, { env: { TOK: TOKEN, ...env }, extra });
  /** Peak resident memory so far, in MiB (Linux /proc VmHWM). */
  const peakMiB = () =>
    Number(/VmHWM:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${served.pid}/status`))![1]) / 1024;
  return { ...served, peakMiB };
}

const guardfile = (port: number) =>
  tempGuardfile(
    `wrap ward mcp hostile {\n  base-url "http://127.0.0.1:${port}"\n` +
      `  auth bearer { value env "TOK" }\n  can get thing { path "/things/{id}" }\n}\n`,
  );

Deno.test("a brotli bomb is held to --max-response-bytes as it decodes, not inflated whole", async () => {
  const bomb = await brotliZeros(1024); // 1 GiB of zeros in about 1 KiB
  const head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: br\r\n";
  const upstream = rawUpstream({
    length: async (w) => {
      await w(`${head}content-length: ${bomb.length}\r\n\r\n`);
      await w(bomb);
      return "keep";
    },
    chunked: async (w) => {
      await w(`${head}transfer-encoding: chunked\r\n\r\n${bomb.length.toString(16)}\r\n`);
      await w(bomb);
      await w("\r\n0\r\n\r\n");
      return "keep";
    },
  });
  const file = await guardfile(upstream.port);
  const weir = await serveWithPid(file, {});
  try {
    for (const id of ["length", "chunked"]) {
      const r = await callApi(weir.url, "get_thing", { id });
      assert.equal(r.status, 502, r.text);
      assert.match(
        r.text,
        /upstream_too_large: GET \/things\/\{id\} answered more than 8388608 bytes/,
      );
      // Before the fix the whole GiB was decoded in one piece (peak RSS over 1 GiB).
      assert.ok(weir.peakMiB() < 300, `weir's peak RSS reached ${weir.peakMiB()} MiB`);
      const next = await callApi(weir.url, "get_thing", { id: "ok" });
      assert.equal(next.status, 200, next.text);
      assert.match(next.text, /"ok":"fine"/);
    }
  } finally {
    await weir.stop();
    await upstream.stop();
    await Deno.remove(file);
  }
});

Deno.test("bytes after the end of a deflate or br stream, inside the body's length, are refused, not left for the next call", async () => {
  const fake = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 18\r\n\r\n" +
    '{"evil":"smuggled"}'.slice(0, 18);
  const answers: Record<string, Uint8Array> = {
    deflate: new Uint8Array(zlib.deflateSync('{"a":1}')),
    br: new Uint8Array(zlib.brotliCompressSync('{"a":1}')),
  };
  const upstream = rawUpstream(Object.fromEntries(
    Object.entries(answers).map(([coding, coded]) => [coding, async (w) => {
      await w(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" +
          `content-encoding: ${coding}\r\ncontent-length: ${coded.length + fake.length}\r\n\r\n`,
      );
      await w(coded);
      await new Promise((r) => setTimeout(r, 50)); // the rest in a later read
      await w(fake);
      return "keep";
    }]),
  ));
  const file = await guardfile(upstream.port);
  const weir = await serveWithPid(file, {});
  try {
    for (const coding of Object.keys(answers)) {
      const r = await callApi(weir.url, "get_thing", { id: coding });
      assert.equal(r.status, 502, `${coding}: ${r.text}`);
      assert.match(r.text, /upstream_cut_off: GET \/things\/\{id\} answered 200/);
      const next = await callApi(weir.url, "get_thing", { id: "ok" });
      assert.equal(next.status, 200, next.text);
      assert.match(next.text, /"ok":"fine"/);
    }
  } finally {
    await weir.stop();
    await upstream.stop();
    await Deno.remove(file);
  }
});

/** The hostile answers compared between weir's client and fetch: [id, status, text pattern]. */
const CASES: [string, number, RegExp][] = [
  // A corrupt gzip body: the request was delivered, so not "could not be sent".
  [
    "gzipcorrupt",
    502,
    /upstream_cut_off: GET \/things\/\{id\} answered 200 but the body broke off/,
  ],
  // Status 000 is no status (RFC 9110 section 15): refused at once, not read as an interim answer.
  ["status000", 502, /upstream_unreachable: GET \/things\/\{id\} could not be sent/],
  // A bare CR or a NUL inside a field value (RFC 9110 section 5.5, RFC 9112 section 2.2).
  ["barecr", 502, /upstream_unreachable: GET \/things\/\{id\} could not be sent/],
  ["nul", 502, /upstream_unreachable: GET \/things\/\{id\} could not be sent/],
  // Trailer fields without end (with no deadline at all): refused, not read forever.
  ["trailerflood", 502, /upstream_cut_off/],
  // A chunk-size with leading zeros is valid (RFC 9112 section 7.1: 1*HEXDIG).
  ["leadingzeros", 200, /"a":1/],
  // A 204 has no body, so its (unknown) Content-Encoding decodes nothing.
  ["nocontent", 200, /204 No Content/],
];

Deno.test("hostile answers: a prompt named error (as fetch gives), and the next call is still right", async () => {
  const upstream = rawUpstream({
    gzipcorrupt: async (w) => (await w(json("0123456789", "content-encoding: gzip\r\n")), "keep"),
    status000: async (w) => (await w("HTTP/1.1 000 Zero\r\ncontent-length: 2\r\n\r\n{}"), "keep"),
    barecr: async (
      w,
    ) => (await w(json('{"a":1}', "x-evil: 1\rcontent-type: text/html\r\n")), "keep"),
    nul: async (w) => (await w(json('{"a":1}', "x-evil: a\0b\r\n")), "keep"),
    trailerflood: async (w) => {
      await w(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
      );
      await w('7\r\n{"a":1}\r\n0\r\n');
      const lines = `x-t: ${"a".repeat(1000)}\r\n`.repeat(64);
      for (let i = 0; i < 2000; i++) await w(lines); // 128 MB at most; weir stops far sooner
      return "close";
    },
    leadingzeros: async (w) => {
      await w(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
      );
      await w('00000000000000000007\r\n{"a":1}\r\n0000000000000000\r\n\r\n');
      return "keep";
    },
    nocontent: async (
      w,
    ) => (await w("HTTP/1.1 204 No Content\r\ncontent-encoding: x-custom\r\n\r\n"), "keep"),
  });
  const file = await guardfile(upstream.port);
  // No deadline at all: every refusal must come from the answer itself.
  const extra = ["--upstream-timeout", "0"];
  const own = await serveWithPid(file, {}, extra);
  const viaFetch = await serveWithPid(file, { WEIR_UPSTREAM_CLIENT: "fetch" }, extra);
  try {
    for (const [id, status, pattern] of CASES) {
      for (const [name, weir] of [["own", own], ["fetch", viaFetch]] as const) {
        const r = await callApi(weir.url, "get_thing", { id }, { timeoutMs: 15_000 });
        assert.equal(r.status, status, `${name} ${id}: ${r.text}`);
        assert.match(r.text, pattern, `${name} ${id}`);
        assert.ok(!JSON.stringify(r.body).includes(TOKEN), `${name} ${id}: the credential leaked`);
        const next = await callApi(weir.url, "get_thing", { id: "ok" }, { timeoutMs: 15_000 });
        assert.equal(next.status, 200, `${name} after ${id}: ${next.text}`);
        assert.match(next.text, /"ok":"fine"/, `${name} after ${id}`);
      }
    }
    assert.ok(!own.stderr().includes(TOKEN) && !viaFetch.stderr().includes(TOKEN));
  } finally {
    await own.stop();
    await viaFetch.stop();
    await upstream.stop();
    await Deno.remove(file);
  }
});
