/**
 * nameGrant(): scaffolded tool names read like the examples in `guardfiles/`
 * (a verb, then a singular noun phrase): GitHub-style `tag/verb-rest` ids put
 * the tag in the singular, a tag that is the verb leads, a word is not said
 * twice in a row, a word that is no verb gives way to the method's verb.
 */
import assert from "node:assert/strict";
import { nameGrant, singular, words } from "../../src/scaffold/naming.ts";
import type { HttpMethod } from "../../src/guardfile/model.ts";

function name(method: HttpMethod, path: string, id?: string): string {
  const n = nameGrant(method, path, id, new Set());
  return `${n.tool}${n.statesMethod ? ` (method ${method})` : ""}`;
}

Deno.test("nameGrant(): GitHub's operationIds give the house style's names", () => {
  const cases: [HttpMethod, string, string, string][] = [
    ["GET", "/repos/{owner}/{repo}/issues/{issue_number}", "issues/get", "get_issue"],
    ["POST", "/repos/{owner}/{repo}/issues", "issues/create", "create_issue"],
    ["GET", "/repos/{owner}/{repo}/issues", "issues/list-for-repo", "list_issue-for-repo"],
    [
      "POST",
      "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      "issues/create-comment",
      "create_issue-comment",
    ],
    ["GET", "/search/issues", "search/issues-and-pull-requests", "search_issues-and-pull-requests"],
    ["GET", "/search/code", "search/code", "search_code"],
    [
      "GET",
      "/repos/{owner}/{repo}/actions/cache/usage",
      "actions/get-actions-cache-usage",
      "get_action-cache-usage",
    ],
    [
      "GET",
      "/orgs/{org}/copilot/metrics/reports/organization-1-day",
      "copilot/copilot-organization-one-day-usage-metrics",
      "get_copilot-organization-one-day-usage-metrics",
    ],
    [
      "POST",
      "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun",
      "actions/re-run-workflow",
      "rerun_action-workflow (method POST)",
    ],
    ["GET", "/repos/{owner}/{repo}/pulls/{pull_number}", "pulls/get", "get_pull"],
    [
      "GET",
      "/advisories",
      "security-advisories/list-global-advisories",
      "list_security-advisory-global-advisories",
    ],
    [
      "GET",
      "/orgs/{org}/private-registries",
      "private-registries/list-org-private-registries",
      "list_private-registry-org-private-registries",
    ],
  ];
  for (const [method, path, id, expected] of cases) {
    assert.equal(name(method, path, id), expected, id);
  }
});

Deno.test("nameGrant(): camelCase ids keep their verb; a first word that is no verb gives way to the method's", () => {
  // `find` is a read word: the verb table sends it GET, so no method is stated (issue 34).
  assert.equal(name("GET", "/pet/findByStatus", "findPetsByStatus"), "find_pets-by-status");
  assert.equal(
    name("POST", "/pet/findByTags", "findPetsByTags"),
    "find_pets-by-tags (method POST)",
  );
  assert.equal(name("GET", "/store/order/{id}", "getOrderById"), "get_order-by-id");
  assert.equal(name("GET", "/apis", "getAPIs"), "get_apis");
  assert.equal(name("POST", "/apply", "applyToReadMe"), "apply_to-read-me (method POST)");
  assert.equal(name("GET", "/x", "weir_info"), "get_weir-info");
  assert.equal(name("GET", "/reports", "monthlyReport"), "get_monthly-report");
  assert.equal(name("DELETE", "/x/{id}", "2fa-reset"), "delete_2fa-reset");
  assert.equal(name("GET", "/items", undefined), "list_items");
  assert.equal(name("GET", "/items/{id}", undefined), "get_items");
});

Deno.test("nameGrant(): names stay unique in a file, and never the info tool's", () => {
  const taken = new Set<string>(["get_issue"]);
  assert.equal(nameGrant("GET", "/a", "issues/get", taken).tool, "get_issue-2");
  assert.equal(nameGrant("GET", "/b", "issues/get", taken).tool, "get_issue-3");
  assert.equal(nameGrant("GET", "/c", "info", new Set(["get_info"])).tool, "get_info-2");
});

Deno.test("singular() and words(): English plurals and acronyms", () => {
  assert.deepEqual(
    [
      "issues",
      "repos",
      "registries",
      "advisories",
      "licenses",
      "branches",
      "boxes",
      "status",
      "analysis",
      "gas",
      "emojis",
    ]
      .map(singular),
    [
      "issue",
      "repo",
      "registry",
      "advisory",
      "license",
      "branch",
      "box",
      "status",
      "analysis",
      "gas",
      "emojis",
    ],
  );
  assert.deepEqual(words("getAPIs"), ["get", "apis"]);
  assert.deepEqual(words("createAPIKey"), ["create", "api", "key"]);
  assert.deepEqual(words("issues/list-for-repo"), ["issues", "list", "for", "repo"]);
});

Deno.test("nameGrant(): two operations never get names differing only by case or separators; a verb synonym is their own", () => {
  const taken = new Set<string>();
  const a = nameGrant("DELETE", "/repos/{o}/{r}/labels/{name}", "issues/delete-label", taken);
  const b = nameGrant(
    "DELETE",
    "/repos/{o}/{r}/issues/{n}/labels/{name}",
    "issues/remove-label",
    taken,
  );
  assert.equal(a.tool, "delete_issue-label");
  // Another path: two operations, which the loader tells apart (issue 34, item 3).
  assert.equal(b.tool, "remove_issue-label");
  assert.equal(nameGrant("GET", "/z", "get-Issue_Label", taken).tool, "get_issue-label");
  assert.equal(nameGrant("GET", "/w", "getIssueLabel", taken).tool, "get_issue-label-2");
  assert.equal(nameGrant("GET", "/x", "viewWeirInfo", taken).tool, "view_weir-info");
  assert.equal(nameGrant("GET", "/y", "weir-info", new Set()).tool, "get_weir-info");
});

Deno.test("nameOperations(): every operation of GitHub's REST document gets a grant the loader accepts beside all the others", async () => {
  const { readOpenApi } = await import("../../src/scaffold/document.ts");
  const { buildScaffold } = await import("../../src/scaffold/scaffold.ts");
  const text = JSON.stringify(
    // A JSON import: the package is an npm one (no file URL to read with nodeModulesDir none).
    (await import("@octokit/openapi/generated/api.github.com.json", { with: { type: "json" } }))
      .default,
  );
  const doc = await readOpenApi(text, "api.github.com.json");
  const s = buildScaffold(doc, { source: "api.github.com.json", maxBytes: 1 << 20 });
  const refused = s.derivations.filter((d) => /loader refuses/.test(d.reason ?? ""));
  assert.deepEqual(refused.map((d) => `${d.key}: ${d.reason}`), []);
});
