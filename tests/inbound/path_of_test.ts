/**
 * pathOf keeps the last URL's path: over generated request URLs (repeated,
 * alternating, unparsable), it answers exactly what parsing each one anew does.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { pathOf } from "../../src/inbound/checks.ts";

/** What pathOf answered before the memo: the path of a fresh parse, or null. */
function parsedPath(url: string): string | null {
  try {
    return new URL(url).pathname;
  } catch {
    return null;
  }
}

/** A request whose `url` is any text (a served request's URL is built from its Host header). */
function requestAt(url: string): Request {
  return { url } as unknown as Request;
}

const hosts = fc.constantFrom("127.0.0.1:8787", "localhost", "[::1]:9", "a b", "x%", "", "[::1");
const paths = fc.constantFrom("/mcp", "/api/get_thing", "/mcp/../api/x", "/%2e%2e/mcp", "/", "");
const urls = fc.oneof(
  fc.tuple(hosts, paths).map(([h, p]) => `http://${h}${p}`),
  fc.string(),
  fc.constant(""),
);

Deno.test("pathOf answers what a fresh parse of each URL answers", () => {
  fc.assert(
    fc.property(fc.array(urls, { minLength: 1, maxLength: 8 }), (list) => {
      for (const url of [...list, ...list]) assert.equal(pathOf(requestAt(url)), parsedPath(url));
    }),
  );
});

Deno.test("pathOf: a request whose url throws has no path", () => {
  const request = {
    get url(): string {
      throw new TypeError("closed");
    },
  } as unknown as Request;
  assert.equal(pathOf(request), null);
  assert.equal(pathOf(requestAt("http://127.0.0.1/mcp")), "/mcp");
});
