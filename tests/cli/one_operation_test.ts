/**
 * `weir lint` on names that may name one operation (issue 34, item 3), as a
 * user runs it: the error stays where a spelling would serve a withheld
 * operation, or two names reach one operation (method and path; one MCP
 * tool) under different controls; metadata and content (`get_file`,
 * `read_file` on other paths) are two operations and load; two names for
 * one operation with the same controls, or names differing only by case,
 * load with a warning; unlike names reaching one operation with different
 * guarding controls load with a warning. In spec mode and in the form that
 * wraps an MCP server.
 */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const HTTP = `    base-url "https://api.example.com"\n    auth none\n`;
const MCP = `    mcp-server http "http://127.0.0.1:9/mcp"\n`;

interface Case {
  name: string;
  text: string;
  /** 0: loads; 1: refused. */
  code: 0 | 1;
  /** What stderr must say (for a refusal, on an error line; else on a warning line), or `null`: nothing about names. */
  says: RegExp | null;
}

const CASES: Case[] = [
  {
    name: "metadata and content: get_file and read_file on other paths",
    text: `wrap ward mcp files {\n${HTTP}    can get file { path "/files/{id}"; }\n` +
      `    can read file { method "GET"; path "/files/{id}/content"; }\n}\n`,
    code: 0,
    says: null,
  },
  {
    name: "get_report and view_report on one path, other extraction bounds",
    text: `extract "get_report" as="pdf-text" max-pages="5"\n` +
      `extract "view_report" as="pdf-text" max-pages="50"\n` +
      `wrap ward mcp reports {\n${HTTP}` +
      `    can get report { path "/reports/{id}"; raw-response; }\n` +
      `    can view report { path "/reports/{id}"; raw-response; }\n}\n`,
    code: 0,
    says:
      /warning: .*"view_report".*"get_report".*both reach GET \/reports\/\{\}: one operation under two names/,
  },
  {
    name: "one operation, confirm on one name only",
    text: `confirm "delete_ticket"\nwrap ward mcp t {\n${HTTP}` +
      `    can delete ticket { path "/tickets/{id}"; }\n` +
      `    can remove ticket { path "/tickets/{ticket}"; }\n}\n`,
    code: 1,
    says:
      /:6:5: wrap > can remove ticket: .*"remove_ticket".*"delete_ticket".*both reach DELETE \/tickets\/\{\} with different controls \(confirm\)/,
  },
  {
    name: "one operation, restrict on one path parameter only",
    text: `wrap ward mcp t {\n${HTTP}    restrict "id" matches "public-*"\n` +
      `    can get doc { path "/docs/{id}"; }\n    can fetch doc { method "GET"; path "/docs/{doc}"; }\n}\n`,
    code: 1,
    says: /"fetch_doc".*"get_doc".*different controls \(path values\)/,
  },
  {
    name: "one operation, a scope on one name only",
    text: `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"\n` +
      `wrap ward mcp t {\n${HTTP}    can get doc { path "/docs/{id}"; scope "docs:read"; }\n` +
      `    can show doc { method "GET"; path "/docs/{id}"; }\n}\n`,
    code: 1,
    says: /"show_doc".*"get_doc".*different controls \(scope\)/,
  },
  {
    name: "a spelling of a withheld operation",
    text: `withhold "delete_ticket" { reason "No undo."; }\nwrap ward mcp t {\n${HTTP}` +
      `    can remove ticket { path "/t/{id}"; }\n}\n`,
    code: 1,
    says:
      /"remove_ticket".*"delete_ticket".*is withheld, and serving "remove_ticket" would serve it/,
  },
  {
    name: "names that differ only by case, on other paths",
    text: `wrap ward mcp t {\n${HTTP}    can get file { path "/a/{id}"; }\n` +
      `    can get File { path "/b/{id}"; }\n}\n`,
    code: 0,
    says: /warning: .*"get_File".*"get_file".*only by letter case, but reach different operations/,
  },
  {
    name: "unlike names, one operation, confirm on one only",
    text: `confirm "delete_ticket"\nwrap ward mcp t {\n${HTTP}` +
      `    can delete ticket { path "/tickets/{id}"; }\n` +
      `    can purge-all ticket { method "DELETE"; path "/tickets/{id}"; }\n}\n`,
    code: 0,
    says:
      /warning: .*"purge-all_ticket".*"delete_ticket".*both reach DELETE \/tickets\/\{\}, with different confirm/,
  },
  {
    name: "MCP form: two proxies of one tool, restrict on one only",
    text: `wrap ward mcp s {\n${MCP}    proxy find_issues {\n        upstream "search"\n` +
      `        argument "repo" { restrict "acme-*"; }\n    }\n` +
      `    proxy search_issues {\n        upstream "search"\n    }\n}\n`,
    code: 1,
    says:
      /"search_issues".*"find_issues".*both reach the MCP server's "search" with different controls \(arguments\)/,
  },
  {
    name: "MCP form: two proxies of one tool, the same rules",
    text: `wrap ward mcp s {\n${MCP}    proxy find_issues {\n        upstream "search"\n    }\n` +
      `    proxy search_issues {\n        upstream "search"\n    }\n}\n`,
    code: 0,
    says: /warning: .*"search_issues".*"find_issues".*one operation under two names/,
  },
  {
    name: "MCP form: synonyms of two tools",
    text: `wrap ward mcp s {\n${MCP}    proxy get_file\n    proxy read_file\n}\n`,
    code: 0,
    says: null,
  },
];

for (const c of CASES) {
  Deno.test(`weir lint, one operation, one name: ${c.name}`, async () => {
    const file = await tempGuardfile(c.text);
    const out = await runCli(["lint", file]);
    assert.equal(out.code, c.code, out.stderr);
    if (c.says) assert.match(out.stderr, c.says);
    else assert.doesNotMatch(out.stderr, /differ only|both reach|two names/, out.stderr);
    if (c.code === 1) {
      assert.doesNotMatch(out.stderr.split("\n").find((l) => c.says!.test(l))!, /warning:/);
    }
  });
}
