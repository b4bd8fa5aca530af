/**
 * The schema check every other test relies on really rejects responses the
 * official schemas forbid: a check that could not fail would prove nothing.
 */
import assert from "node:assert/strict";
import { assertValidResponse, LEGACY, MODERN } from "../support/schemas.ts";

const serverInfo = { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } };

Deno.test("a conforming response passes under its revision", () => {
  assertValidResponse(MODERN, {
    jsonrpc: "2.0",
    id: 1,
    result: {
      tools: [],
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
      _meta: serverInfo,
    },
  }, "tools/list");
  assertValidResponse(LEGACY, { jsonrpc: "2.0", id: 1, result: { tools: [] } }, "tools/list");
});

Deno.test("a 2026-07-28 list without resultType or cache hints is refused", () => {
  assert.throws(
    () =>
      assertValidResponse(MODERN, { jsonrpc: "2.0", id: 1, result: { tools: [] } }, "tools/list"),
    /resultType/,
  );
  assert.throws(
    () =>
      assertValidResponse(MODERN, {
        jsonrpc: "2.0",
        id: 1,
        result: { tools: [], resultType: "complete", ttlMs: 0, cacheScope: "everyone" },
      }, "tools/list"),
    /cacheScope/,
  );
});

Deno.test("a result is checked against its method's definition", () => {
  assert.throws(
    () =>
      assertValidResponse(LEGACY, { jsonrpc: "2.0", id: 1, result: { tools: [{}] } }, "tools/list"),
    /name|inputSchema/,
  );
  assert.throws(
    () =>
      assertValidResponse(LEGACY, {
        jsonrpc: "2.0",
        id: 1,
        result: { contents: [{ uri: "demo://x", blob: "not base64!" }] },
      }, "resources/read"),
    /format/,
  );
  assert.throws(
    () => assertValidResponse(LEGACY, { jsonrpc: "2.0", id: 1, result: {} }),
    /no result definition/,
  );
});

Deno.test("a 2026-07-28 error is checked against the definition for its code", () => {
  assert.throws(
    () =>
      assertValidResponse(MODERN, {
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32022, message: "Unsupported", data: { supported: ["2026-07-28"] } },
      }),
    /requested/,
  );
  assertValidResponse(MODERN, {
    jsonrpc: "2.0",
    id: 1,
    error: {
      code: -32022,
      message: "Unsupported",
      data: { supported: ["2026-07-28"], requested: "1999-01-01" },
    },
  });
  assert.throws(
    () =>
      assertValidResponse([LEGACY, MODERN], { jsonrpc: "2.0", error: { code: "x", message: 1 } }),
    /code|message/,
  );
});
