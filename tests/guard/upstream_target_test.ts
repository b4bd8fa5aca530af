/**
 * The request target of a guarded call, built without parsing the URL when
 * every character of its path and query is plain (src/guard/outgoing.ts
 * `plainTarget`): whenever the shortcut is taken, its parts are exactly what
 * the WHATWG URL parser makes of the same URL, so the bytes sent and the
 * upstream-scope check are the same as when the URL is parsed.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { indexRestricts, planRequest } from "../../src/guard/request.ts";
import { buildUpstreamRequest, plainTarget } from "../../src/guard/outgoing.ts";
import type { UrlTarget } from "../../src/guard/send.ts";
import { ToolError } from "../../src/mcp/server.ts";

const BASES = [
  "http://127.0.0.1:8080",
  "https://api.example.com",
  "https://api.example.com/v2",
  "http://[::1]:9000/a/b",
  "https://xn--bcher-kva.example/api%20x",
  "http://h.example:80/p",
  "https://h.example:443",
];

function partsOf(url: UrlTarget): UrlTarget {
  const { protocol, host, hostname, port, pathname, search } = url;
  return { protocol, host, hostname, port, pathname, search };
}

/** Pieces a path or query may hold: mostly plain ones, and every awkward kind. */
const awkward = fc.oneof(
  fc.constantFrom(
    ".",
    "..",
    "%2e",
    "%2E",
    ".%2e",
    "%",
    "%2",
    "%zz",
    "%41",
    "'",
    "`",
    "^",
    "|",
    "\\",
    "?",
    "#",
    " ",
    "\t",
    "\n",
    '"',
    "<",
    ">",
    "{",
    "}",
    "[",
    "]",
    "~",
    "!",
    "$",
    "&",
    "(",
    ")",
    "*",
    "+",
    ",",
    ";",
    "=",
    ":",
    "@",
    "/",
    "é",
    "\u00a0",
    "\ufffd",
  ),
  fc.string({ unit: "grapheme-ascii", maxLength: 4 }),
);
const plainPiece = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9\-._~!$&()*+,;=:@]{1,4}$/),
  fc.constantFrom("%20", "%2F", "%2f", "%C3%A9", "%25", "%3F", "%2E"),
);
const piece = fc.oneof({ arbitrary: plainPiece, weight: 12 }, { arbitrary: awkward, weight: 1 });
const segment = fc.array(piece, { maxLength: 5 }).map((p) => p.join(""));

Deno.test("a plain target has the parts the URL parser gives the same URL", () => {
  let plainCount = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(...BASES),
      fc.array(segment, { minLength: 1, maxLength: 5 }),
      fc.option(fc.array(piece, { maxLength: 8 }).map((p) => p.join(""))),
      (base, segments, query) => {
        const url = base + "/" + segments.join("/") + (query === null ? "" : `?${query}`);
        const plain = plainTarget(base, url);
        if (plain === undefined) return;
        plainCount++;
        assert.deepEqual(plain, partsOf(new URL(url)), url);
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(plainCount > 300, `the shortcut was taken only ${plainCount} times`);
});

Deno.test("the plain shortcut is taken for an ordinary call, and not for what the parser rewrites", () => {
  const base = "https://api.example.com/v2";
  assert.deepEqual(
    plainTarget(base, `${base}/things/abc-123?b=x%20y&c=1`),
    partsOf(new URL(`${base}/things/abc-123?b=x%20y&c=1`)),
  );
  for (const rewritten of ["/a/%2E%2e/b", "/a/./b", "/a?q='", "/a b", "/a\\b", "/a/.."]) {
    assert.equal(plainTarget(base, base + rewritten), undefined, rewritten);
  }
});

function grantOf(body: string, baseUrl = "https://api.example.com/v2") {
  const { guardfile, diagnostics } = parseGuardfile(
    `wrap ward mcp t {\n  base-url "${baseUrl}"\n  auth none\n  ${body}\n}`,
    "t.mcp.kdl",
  );
  assert.ok(guardfile, diagnostics.map((d) => d.message).join("\n"));
  return { guardfile, grant: guardfile.grants[0], restricts: indexRestricts(guardfile) };
}

Deno.test("a built request's target is what the URL parser makes of its URL, for any arguments", () => {
  const { guardfile, grant, restricts } = grantOf(
    `can get item { path "/o/{owner}/i/{id}"; param "id" slashes="segments" metacharacters="allow"; param "owner" metacharacters="allow"; query { field "q" type="string" metacharacters="allow"; field "tag" type="string"; } }`,
  );
  const value = fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => p.join(""));
  let built = 0;
  fc.assert(
    fc.property(value, value, fc.option(value), fc.option(value), (owner, id, q, tag) => {
      const args: Record<string, unknown> = { owner, id };
      if (q !== null) args.q = q;
      if (tag !== null) args.tag = tag;
      let request;
      try {
        const planned = planRequest(grant, args, restricts);
        request = buildUpstreamRequest(guardfile, grant, planned, {
          base: guardfile.baseUrl as string,
          pins: [],
          authQuery: [],
        });
      } catch (error) {
        if (error instanceof ToolError) return;
        throw error;
      }
      built++;
      assert.deepEqual(partsOf(request.target), partsOf(new URL(request.url)), request.url);
    }),
    { numRuns: 2000 },
  );
  assert.ok(built > 100, `only ${built} requests were built`);
});
