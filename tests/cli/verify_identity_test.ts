/**
 * `weir verify` of files that send each caller's identity upstream (token
 * exchange, issue 31), through the shipped CLI with default flags. Before,
 * verify served such a file without callers: every call of a spec-mode file
 * was refused before the upstream (no OAuth token to exchange) and a wrap
 * file's exchange was dropped, and both reported "ok": an assurance about
 * nothing. Now verify serves the file with OAuth against a stand-in identity
 * provider, calls it as several callers, and holds every request that reaches
 * the upstream to its own caller's exchanged token:
 *
 * - every token-exchange example of docs/oauth.md (each profile; client
 *   secret in Basic and form fields, private_key_jwt) passes, its calls
 *   reaching the upstream;
 * - the wrap form's `token-exchange` passes, its calls reaching the server;
 * - a kept (`cache`d) answer is its caller's own, in both forms;
 * - a call whose exchange is refused asks no person (`confirm`), both forms.
 *
 * That these checks fail on a faulty weir is tests/cli/verify_faults_test.ts.
 */
import assert from "node:assert/strict";
import { ROOT, runCli, tempGuardfile } from "../support/cli.ts";

interface JsonReport {
  ok: boolean;
  notes: string[];
  tools: { tool: string; requests: number; refused: number; violations: { message: string }[] }[];
}

async function verify(args: string[]): Promise<JsonReport> {
  const r = await runCli(["verify", ...args, "--format", "json"]);
  const report = JSON.parse(r.stdout) as JsonReport;
  const found = report.tools.flatMap((t) =>
    t.violations.slice(0, 3).map((v) => `${t.tool}: ${v.message}`)
  );
  assert.deepEqual(found, [], r.stderr);
  assert.equal(r.code, 0, r.stderr);
  return report;
}

/** The examples of docs/oauth.md that exchange tokens. */
function docExamples(): string[] {
  const page = Deno.readTextFileSync(`${ROOT}docs/oauth.md`);
  return [...page.matchAll(/```kdl\n([\s\S]*?)```/g)].map((m) => m[1]).filter((k) =>
    k.includes("auth token-exchange")
  );
}

Deno.test("weir verify: every token-exchange example of docs/oauth.md reaches the upstream as its callers", async () => {
  const examples = docExamples();
  // generic, entra (private_key_jwt), okta, auth0 (form fields), keycloak
  assert.ok(examples.length >= 5, `${examples.length} examples`);
  for (const kdl of examples) {
    const file = await tempGuardfile(kdl);
    const report = await verify([file, "--cases", "60", "--seed", "7"]);
    const reached = report.tools.reduce((n, t) => n + t.requests, 0);
    assert.ok(reached >= 10, `${reached} requests reached the upstream:\n${kdl}`);
    assert.match(report.notes.join("\n"), /callers: alice and bob/);
  }
});

const WRAP =
  `oauth issuer="https://sso.example.com/realms/acme" resource="https://mcp.example.com/mcp" \\
    profile="keycloak" audience="weir-mcp"
wrap ward mcp issues {
    mcp-server http "https://mcp.example.com/mcp" {
        token-exchange {
            audience "issues-api"
            client-id "weir-mcp"
            client-secret method="post" { value env "KC_SECRET"; }
        }
    }
    proxy find {
        upstream "search_issues"
        argument "repository" upstream="repo" { restrict "acme-*" "docs"; }
        scope "issues:read"
    }
}
`;
const DEFINITIONS = ["--definitions", "tests/fixtures/verify_wrap_tools.json"];

Deno.test("weir verify: a wrapped server's token-exchange is served, each call carrying its caller's token", async () => {
  const report = await verify([await tempGuardfile(WRAP), ...DEFINITIONS, "--seed", "3"]);
  const find = report.tools.find((t) => t.tool === "find")!;
  assert.ok(find.requests >= 20, JSON.stringify(find));
});

Deno.test("weir verify: client-credentials (weir's own token for its own requests) is asked as the docs say, per profile, and never reaches a caller's call", async () => {
  const own = (scopes: string) =>
    WRAP.replace(
      `client-secret method="post" { value env "KC_SECRET"; }`,
      `client-secret method="post" { value env "KC_SECRET"; }\n            client-credentials${scopes}`,
    );
  const generic = own(` { scope "mcp:connect"; }`)
    .replace(/ \\\n\s*profile="keycloak" audience="weir-mcp"/, "")
    .replace("https://sso.example.com/realms/acme", "https://id.example.com");
  for (const kdl of [own(` { scope "mcp"; }`), own(""), generic]) {
    assert.match(kdl, /client-credentials/);
    const report = await verify([await tempGuardfile(kdl), ...DEFINITIONS, "--seed", "9"]);
    const find = report.tools.find((t) => t.tool === "find")!;
    assert.ok(find.requests >= 20, `${JSON.stringify(find)}\n${kdl}`);
  }
});

const SPEC = Deno.readTextFileSync(`${ROOT}tests/fixtures/verify_exchange.mcp.kdl`);

Deno.test("weir verify: a kept answer is its own caller's, with token exchange (both forms)", async () => {
  const spec = await tempGuardfile(`${SPEC}cache "get_ticket" ttl="15m"\n`);
  const r = await verify([spec, "--tool", "get_ticket", "--seed", "11"]);
  assert.ok(r.tools[0].requests > 20, JSON.stringify(r.tools[0]));
  const wrap = await tempGuardfile(`${WRAP}cache "find" ttl="15m"\n`);
  const w = await verify([wrap, ...DEFINITIONS, "--tool", "find", "--seed", "11"]);
  assert.ok(w.tools[0].requests > 20, JSON.stringify(w.tools[0]));
});
Deno.test("weir verify: a call whose exchange is refused asks no person (confirm), both forms", async () => {
  // The stand-in issuer when the file has no oauth node (serve takes --oauth-issuer).
  const spec = await tempGuardfile(`${SPEC}confirm "create_ticket" message="Create it?"\n`);
  const r = await verify([spec, "--tool", "create_ticket", "--seed", "5"]);
  assert.ok(r.tools[0].requests > 0, JSON.stringify(r.tools[0]));
  assert.match(r.notes.join("\n"), /the OAuth issuer is the stand-in/);
  const wrap = await tempGuardfile(`${WRAP}confirm "find"\n`);
  const w = await verify([wrap, ...DEFINITIONS, "--tool", "find", "--seed", "5"]);
  assert.ok(w.tools[0].requests > 0, JSON.stringify(w.tools[0]));
});
