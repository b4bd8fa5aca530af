/**
 * Strict UTF-8 on the way in: `decodeUtf8` (a lenient decode, and the strict
 * decoder only when the text holds U+FFFD) must agree with the WHATWG fatal
 * decoder on every input, string for string and refusal for refusal; and the
 * MCP endpoint refuses a body whose only flaw is one bad byte inside a JSON
 * string (where a lenient decode alone would yield valid JSON), while a
 * well-formed U+FFFD passes.
 */
import assert from "node:assert/strict";
import { decodeUtf8 } from "../../src/transport/bytes.ts";
import { createHttpHandler } from "../../src/transport/http.ts";
import { McpServer } from "../../src/mcp/server.ts";

const strict = new TextDecoder("utf-8", { fatal: true });

function outcome(decode: (b: Uint8Array) => string, bytes: Uint8Array): string {
  try {
    return `ok:${decode(bytes)}`;
  } catch (error) {
    assert.ok(error instanceof TypeError, String(error));
    return "refused";
  }
}

Deno.test("decodeUtf8 agrees with the fatal decoder on seeded random bytes", () => {
  let seed = 5;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  // Pieces: ASCII, well-formed 2/3/4-byte sequences, U+FFFD itself, a BOM,
  // encoded surrogates, overlongs, stray continuation and lead bytes, 0xff.
  const pieces = [
    [0x61],
    [0x7b, 0x22],
    [0xc3, 0xa9],
    [0xe2, 0x82, 0xac],
    [0xf0, 0x9f, 0x98, 0x80],
    [0xef, 0xbf, 0xbd],
    [0xef, 0xbb, 0xbf],
    [0xed, 0xa0, 0x80],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0x80],
    [0xc3],
    [0xf0, 0x9f, 0x98],
    [0xff],
    [0xf4, 0x90, 0x80, 0x80],
  ];
  const seen = { ok: 0, refused: 0, replacement: 0 };
  for (let i = 0; i < 20_000; i++) {
    const bytes = new Uint8Array(
      Array.from(
        { length: Math.floor(next() * 6) },
        () => pieces[Math.floor(next() * pieces.length)],
      )
        .flat(),
    );
    const expected = outcome((b) => strict.decode(b), bytes);
    assert.equal(outcome(decodeUtf8, bytes), expected, `bytes ${[...bytes].join(",")}`);
    if (expected === "refused") seen.refused++;
    else if (expected.includes("\ufffd")) seen.replacement++;
    else seen.ok++;
  }
  assert.ok(seen.ok > 1000 && seen.refused > 1000 && seen.replacement > 100, JSON.stringify(seen));
});

Deno.test("the endpoint refuses one bad byte inside a JSON string and takes a real U+FFFD", async () => {
  const server = new McpServer({
    name: "utf8",
    catalog: {
      tools: [{
        name: "echo",
        inputSchema: {
          type: "object",
          properties: { message: { type: "string" } },
          required: ["message"],
        },
      }],
      resources: [],
      prompts: [],
    },
    dispatch: (_name, args) => ({ content: [{ type: "text", text: String(args.message) }] }),
    log: () => {},
  });
  const handler = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const post = async (message: Uint8Array<ArrayBuffer>) => {
    const response = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "echo",
        },
        body: message,
      }),
    );
    return { status: response.status, body: await response.json() };
  };
  const call = (marker: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { message: `a${marker}b` }, _meta: meta },
    });
  const encoded = new TextEncoder().encode(call("\u0001"));
  // The marker's escape `\u0001` is 6 bytes; put one raw 0xff in their place.
  const at = new TextDecoder().decode(encoded).indexOf("\\u0001");
  const bad = new Uint8Array([...encoded.slice(0, at), 0xff, ...encoded.slice(at + 6)]);
  const refused = await post(bad);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.code, -32700);

  const fine = await post(new TextEncoder().encode(call("\ufffd")));
  assert.equal(fine.status, 200);
  assert.equal(fine.body.result.content[0].text, "a\ufffdb");
});
