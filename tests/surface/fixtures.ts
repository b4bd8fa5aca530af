/**
 * Guardfiles that set every field of the surface model (src/surface/model.ts)
 * between them: a spec-mode file with every grant shape and control, and a
 * file that wraps an MCP server with every rule, read from the file alone
 * and with the host's decisions. Shared by the surface tests.
 */
import assert from "node:assert/strict";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import type { Guardfile } from "../../src/guardfile/model.ts";
import type { McpWrap } from "../../src/guardfile/mcp_wrap.ts";
import type { Surface } from "../../src/surface/model.ts";
import { surfaceOfGuardfile } from "../../src/surface/spec.ts";
import { surfaceOfWrap } from "../../src/surface/wrap.ts";

/** A spec-mode guardfile with every node weir reads. */
export const FULL_SPEC = `
instructions { text "Be brief."; }
server-info name="about"
resource "notes" uri="https://x.example/notes" { audience "assistant"; text "hi"; }
prompt "triage" { text "Triage {issue}."; argument "issue"; }
icon "https://x.example/icon.png"
withhold "purge_item" { reason "Purged items cannot come back."; alternative "get_item"; }
confirm "create_item" message="Create it?"
cache "get_item" ttl="1m"
reject-empty "get_item"
reject-empty-argument "create_item" field="title"
pin "get_item" { query "site" env "SITE"; query "key" env "SITE_URL" from="query:key" secret=#true; }
extract "get_report" as="pdf-text" max-pages="2"
rate-limit "60/1m" { store redis literal "redis://127.0.0.1:6379"; bucket "b"; }
oauth issuer="https://issuer.example" resource="https://weir.example/mcp"
surface max-tokens=4000 max-tool-tokens=400 schema-profile="gemini"
inbound-token ci { value env "CI_TOKEN"; tools "get_item"; }
wrap ward mcp full {
    base-url "https://api.example.com"
    auth header-token {
        header "X-Api-Key"
        prefix "key "
        value env "API_KEY"
    }
    header "Accept" "application/json"
    database pgx { value env "DSN"; }
    restrict owner matches "acme-*"
    can get item {
        path "/{owner}/items/{id}"
        param "id" type="integer" minimum=1 maximum=999
        describe "One item."
        scope "items:read"
        fail-when "error != null"
        query {
            field "q" type="string" pattern="^[a-z]+$" min-length=1 max-length=40 metacharacters="allow"
            field "state" type="string" { enum "open" "closed"; }
            array "tag" items="string" min-items=1 max-items=5
            field "before" type="string"
            field "after" type="string"
            field "page" type="integer" upstream="p"
            mutually-exclusive "before" "after"
        }
    }
    can get file {
        path "/{owner}/files/{path}"
        param "path" slashes="segments"
    }
    can get project {
        path "/projects/{pid}"
        param "pid" slashes="encoded"
    }
    can get report { path "/reports/{name}"; raw-response; }
    can create item {
        path "/{owner}/items"
        body {
            field "title" type="string" required=#true max-length=100
            object "meta" {
                field "color" type="string"
            }
        }
    }
    can move item {
        path "/{owner}/items/{id}/move"
        method "POST"
        body {
            map "target.board" to="board_id"
        }
    }
    can close item {
        path "/{owner}/items/{id}/close"
        set state="closed"
    }
    can query graph {
        path "/graphql"
        method "POST"
        graphql { document "query($id: ID!) { node(id: $id) { id } }"; variable "id"; }
    }
    can list orders {
        sql {
            statement "SELECT id FROM orders WHERE total >= $1"
            param "min_total" type="integer" required=#true
            max-rows "20"
        }
    }
}
`;

/** A guardfile that wraps an MCP server, with every rule and control. */
export const FULL_WRAP = `
inbound-token ci { value env "CI_TOKEN"; tools "find"; }
pin "find" { argument "org" env "ORG" secret=#true; }
rate-limit "10/1m"
confirm "find" message="Search now?"
cache "list" ttl="30s"
reject-empty "find"
reject-empty-argument "find" field="repository"
withhold "delete_issue" { reason "No undo."; }
surface read-only=#true
wrap ward mcp gh {
    mcp-server http "https://mcp.example/mcp?tenant=1" {
        header "X-Tenant" "acme"
        header "Authorization" { prefix "Bearer "; value env "GH_TOKEN"; }
        connect-timeout "5s"
        request-timeout "30s"
        max-response-bytes "100000"
        max-staleness "1m"
    }
    proxy-resource "ui://find/view"
    proxy "find" {
        upstream "search_issues"
        title "Find issues"
        describe "Search the issues."
        annotations read-only=#true idempotent=#true open-world=#false
        scope "issues:read"
        argument "repository" upstream="repo" max-length=40 { restrict "acme/*"; }
        argument "limit" minimum=1 maximum=50
        argument "token" hide=#true
        accept-finding "long-text:0123456789abcdef" reason="our own long description"
    }
    proxy "list" { upstream "list_issues"; }
}
`;

/** Load a spec-mode guardfile's text (it must load). */
export function specOf(text: string, file = "case.mcp.kdl"): Guardfile {
  const loaded = loadGuardfileText(text, file);
  assert.ok(
    loaded.guardfile,
    loaded.diagnostics.map((d) => `${d.position?.line}: ${d.message}`).join("\n"),
  );
  return loaded.guardfile;
}

/** Load a wrap file's text (it must load). */
export function wrapOf(text: string, file = "case.mcp.kdl"): McpWrap {
  const loaded = loadGuardfileText(text, file);
  assert.ok(
    loaded.mcpWrap,
    loaded.diagnostics.map((d) => `${d.position?.line}: ${d.message}`).join("\n"),
  );
  return loaded.mcpWrap;
}

/** The surfaces that set every field between them. */
export function fullSurfaces(): Surface[] {
  const wrap = wrapOf(FULL_WRAP);
  return [
    surfaceOfGuardfile(specOf(FULL_SPEC)),
    surfaceOfWrap(wrap),
    surfaceOfWrap(wrap, [{
      name: "find",
      spec: {
        name: "find",
        title: "Find issues",
        description: "Search the issues.",
        inputSchema: {
          type: "object",
          properties: {
            repository: { type: "string", maxLength: 40 },
            limit: { type: "integer", minimum: 1, maximum: 50 },
            tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
            kind: { type: "string", enum: ["bug", "task"], minLength: 1, pattern: "^[a-z]+$" },
          },
          required: ["repository"],
        },
        outputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      },
      uiResource: "ui://find/view",
      accepted: [{ id: "long-text:0123456789abcdef", pointer: "/description" }],
    }]),
  ];
}
