/**
 * `scope` on a grant: the OAuth scopes (RFC 6749 section 3.3) a caller's
 * token must all carry to see and call the tool. Lint checks each value and
 * points at the `scope` node's line:column, as lint and serve load it.
 */
import assert from "node:assert/strict";
import { parseGuardfile } from "../../src/guardfile/load.ts";

function wrap(grants: string): string {
  return `wrap ward mcp t {\n  base-url "t.example"\n  auth none\n${grants}\n}\n`;
}

function load(text: string) {
  return parseGuardfile(text, "scope.mcp.kdl");
}

function errors(text: string): string[] {
  return load(text).diagnostics.filter((d) => d.severity === "error").map((d) =>
    `${d.position?.line}:${d.position?.column} ${d.message}`
  );
}

Deno.test("scope: several per grant, as arguments or repeated nodes, in order", () => {
  const r = load(wrap(
    `  can get ticket { path "/t/{id}"; scope "tickets:read" }
  can create ticket {
    path "/t"
    scope "tickets:write" "audit"
    scope "https://example.com/scopes/admin"
  }
  can list ticket { path "/t" }`,
  ));
  assert.ok(r.guardfile, r.diagnostics.map((d) => d.message).join("\n"));
  const scopes = Object.fromEntries(r.guardfile.grants.map((g) => [g.tool, g.scopes]));
  assert.deepEqual(scopes, {
    get_ticket: ["tickets:read"],
    create_ticket: ["tickets:write", "audit", "https://example.com/scopes/admin"],
    list_ticket: [],
  });
});

const CASES: [string, string, string, RegExp][] = [
  [
    "a scope with a space",
    `  can get t {\n    path "/t"\n    scope "tickets:read tickets:write"\n  }`,
    "6:5",
    /is not an OAuth scope \(RFC 6749 section 3\.3.*write each scope as its own string/,
  ],
  [
    "a scope with a double quote",
    `  can get t {\n    path "/t"\n    scope "a\\"b"\n  }`,
    "6:5",
    /is not an OAuth scope/,
  ],
  [
    "a scope with a backslash",
    `  can get t { path "/t"; scope "a\\\\b" }`,
    "4:26",
    /is not an OAuth scope/,
  ],
  [
    "a non-ASCII scope",
    `  can get t { path "/t"; scope "tickets:lire\u00e9" }`,
    "4:26",
    /is not an OAuth scope/,
  ],
  ["an empty scope", `  can get t { path "/t"; scope "" }`, "4:26", /a scope must not be empty/],
  [
    "a scope that is not a string",
    `  can get t { path "/t"; scope 5 }`,
    "4:26",
    /a scope must be a quoted string, found 5/,
  ],
  [
    "a bare scope",
    `  can get t {\n    path "/t"\n    scope\n  }`,
    "6:5",
    /"scope" takes at least 1 arguments? \(one or more scopes, e.g\. scope "tickets:write"\)/,
  ],
  [
    "the same scope twice",
    `  can get t {\n    path "/t"\n    scope "a"\n    scope "b" "a"\n  }`,
    "7:5",
    /scope "a" is listed twice for this grant; keep one/,
  ],
  [
    "a scope with properties",
    `  can get t { path "/t"; scope "a" required=#true }`,
    "4:26",
    /takes no properties|unknown property/,
  ],
  [
    "a scope with a block",
    `  can get t { path "/t"; scope "a" { x } }`,
    "4:26",
    /"scope" takes no block/,
  ],
];

for (const [name, grants, at, expected] of CASES) {
  Deno.test(`lint refuses ${name}, at the scope node's line:column`, () => {
    const found = errors(wrap(grants));
    const hit = found.find((e) => expected.test(e));
    assert.ok(hit, `expected ${expected}, got:\n${found.join("\n")}`);
    assert.ok(hit.startsWith(`${at} `), `expected the error at ${at}: ${hit}`);
  });
}

Deno.test("oauth: the guardfile equivalent of --oauth-issuer/--oauth-resource", () => {
  const r = load(
    `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"\n` +
      wrap(`  can get t { path "/t"; scope "t:read" }`),
  );
  assert.ok(r.guardfile, r.diagnostics.map((d) => d.message).join("\n"));
  assert.deepEqual(
    { issuer: r.guardfile.oauth?.issuer, resource: r.guardfile.oauth?.resource },
    { issuer: "https://id.example.com", resource: "https://mcp.example.com/mcp" },
  );
  assert.equal(load(wrap(`  can get t { path "/t" }`)).guardfile?.oauth, undefined);
});

const OAUTH_CASES: [string, string, RegExp][] = [
  [
    "oauth without resource",
    `oauth issuer="https://id.example.com"`,
    /"oauth" needs both issuer= and resource=/,
  ],
  [
    "oauth with a plain-http issuer beyond loopback",
    `oauth issuer="http://id.example.com" resource="https://mcp.example.com/mcp"`,
    /oauth issuer="http:\/\/id\.example\.com" must be https \(http only on a loopback host\)/,
  ],
  [
    "oauth with a resource fragment",
    `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp#x"`,
    /must not carry a #fragment/,
  ],
  [
    "oauth with a relative resource",
    `oauth issuer="https://id.example.com" resource="/mcp"`,
    /oauth resource="\/mcp" is not an absolute URL/,
  ],
  [
    "oauth with arguments",
    `oauth "https://id.example.com"`,
    /"oauth" takes issuer= and resource= properties, not arguments/,
  ],
  [
    "oauth with an unknown property",
    `oauth issuer="https://id.example.com" resource="https://m.example.com" audiance="x"`,
    /audiance/,
  ],
];

for (const [name, node, expected] of OAUTH_CASES) {
  Deno.test(`lint refuses ${name}, at the oauth node's line:column`, () => {
    const found = errors(`\n  ${node}\n` + wrap(`  can get t { path "/t" }`));
    const hit = found.find((e) => expected.test(e));
    assert.ok(hit, `expected ${expected}, got:\n${found.join("\n")}`);
    assert.ok(hit.startsWith("2:3 "), `expected the error at 2:3: ${hit}`);
  });
}

Deno.test("lint refuses a second oauth node", () => {
  const one = `oauth issuer="https://id.example.com" resource="https://m.example.com"`;
  const found = errors(`${one}\n${one}\n` + wrap(`  can get t { path "/t" }`));
  assert.ok(found.some((e) => /^2:1 .*"oauth" appears more than once/.test(e)), found.join("\n"));
});
