/** `weir lint` as a user runs it: the real CLI, real files, exit codes. */
import assert from "node:assert/strict";
import { runCli, tempGuardfile } from "../support/cli.ts";

const VALID = `wrap ward mcp tickets {
    base-url "tickets.example/api/v2"
    auth bearer { value env "TICKETS_TOKEN" }
    can list issue { path "/issues"; query "state" }
    can get issue { path "/issues/{id}" }
}
`;

/** stderr without lint's surface-size report line (a report, not a diagnostic). */
function diag(stderr: string): string {
  return stderr.split("\n").filter((l) => !/^weir: .*: surface: \d+ tools/.test(l)).join("\n");
}

Deno.test("every shipped guardfile lints clean, with its tools on stdout", async () => {
  const files = [...Deno.readDirSync("guardfiles")].filter((e) => e.name.endsWith(".mcp.kdl"))
    .map((e) => `guardfiles/${e.name}`).sort();
  assert.ok(files.length >= 2);
  for (const file of files) {
    const r = await runCli(["lint", file]);
    assert.equal(r.code, 0, `${file}: ${r.stderr}`);
    assert.ok(r.stdout.trim().split("\n").length >= 2, file);
  }
});

Deno.test("lint prints served tool names sorted, one per line, no secrets needed", async () => {
  const file = await tempGuardfile(VALID);
  const r = await runCli(["lint", file], { env: {} });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "get_issue\nlist_issue\nweir_info\n");
  assert.equal(diag(r.stderr), "");
});

Deno.test("--methods adds the method; stubs say WITHHELD, the info tool -", async () => {
  const file = await tempGuardfile(`withhold "delete_issue" { reason "no undo" }
wrap ward mcp t {
    base-url "t.example"
    auth none
    can transfer issue { path "/i/{id}/transfer" }
    can close issue { path "/i/{id}"; set state="closed" }
    can reopen issue { path "/i/{id}"; set state="open" }
}
`);
  const r = await runCli(["lint", "--methods", file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "close_issue\tPATCH\ndelete_issue\tWITHHELD\nreopen_issue\tPATCH\ntransfer_issue\tPOST\nweir_info\t-\n",
  );
  // The fall-through warning goes to stderr only, names tool, verb and POST.
  assert.match(r.stderr, /warning: .*transfer_issue.*"transfer".*fallthrough.*POST/);
  assert.doesNotMatch(diag(r.stderr), /close_issue|reopen_issue/);
});

Deno.test("a stated method silences the fall-through warning", async () => {
  const file = await tempGuardfile(`wrap ward mcp t {
    base-url "t.example"
    auth none
    can transfer issue { path "/i/{id}/transfer"; method "post" }
}
`);
  const r = await runCli(["lint", "--methods", file]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "transfer_issue\tPOST\nweir_info\t-\n");
  assert.equal(diag(r.stderr), "");
});

Deno.test("a broken file: every error with file:line:column, stdout empty, exit 1", async () => {
  const file = await tempGuardfile(`withold "delete_issue" { reason "x" }
wrap ward mcp broken {
    base-url "https://api.example.com"
    auth bearer { value env "TOKEN" }
    auth none
    can get issue {
        path "/repos/{owner}/issues/{index}"
        colour "red"
    }
    can get issue { path "/x" }
}
`);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 4, r.stderr);
  assert.match(
    lines[0],
    new RegExp(`^weir: ${file}:1:1: .*unknown top-level node "withold"; did you mean "withhold"`),
  );
  assert.match(
    lines[1],
    new RegExp(`^weir: ${file}:5:5: wrap > auth none: "auth" appears more than once`),
  );
  assert.match(lines[2], new RegExp(`^weir: ${file}:8:9: .*unknown node "colour"`));
  assert.match(lines[3], new RegExp(`^weir: ${file}:10:5: .*duplicate tool name "get_issue"`));
});

Deno.test("a KDL syntax error names the file, line:column and parse KDL", async () => {
  const file = await tempGuardfile(`wrap ward mcp t {\n    can get issue {\n        path "/a"\n`);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, new RegExp(`${file}:4:1: parse KDL: .*never closed`));
});

Deno.test("--format json reports tools and diagnostics per file", async () => {
  const good = await tempGuardfile(VALID);
  const bad = await tempGuardfile(
    `wrap ward mcp t {\n    base-url "x.example"\n    can get x { path "/x"; }\n}\n`,
  );
  const r = await runCli(["lint", "--format", "json", good, bad]);
  assert.equal(r.code, 1);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.ok, false);
  assert.deepEqual(doc.files[0].tools.map((t: { name: string }) => t.name), [
    "get_issue",
    "list_issue",
    "weir_info",
  ]);
  assert.equal(doc.files[1].ok, false);
  assert.match(doc.files[1].diagnostics[0].message, /`auth` block is required/);
  assert.equal(doc.files[1].diagnostics[0].line, 1);
});

Deno.test("several files: each line starts with the file", async () => {
  const a = await tempGuardfile(VALID);
  const r = await runCli(["lint", a, "guardfiles/demo.mcp.kdl"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.includes(`${a}\tget_issue\n`));
  assert.ok(r.stdout.includes(`guardfiles/demo.mcp.kdl\tdelete_ticket\n`));
});

Deno.test("a missing file says read guardfile and exits 1", async () => {
  const r = await runCli(["lint", "no/such.mcp.kdl"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /read guardfile "no\/such.mcp.kdl": no such file/);
});

Deno.test("usage errors exit 2 and say what is wrong", async () => {
  for (const args of [["lint"], ["frobnicate"], ["lint", "--bogus", "x"], ["serve", "x.kdl"], []]) {
    const r = await runCli(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.notEqual(r.stderr, "");
  }
  const unknown = await runCli(["frobnicate"]);
  assert.match(unknown.stderr, /lint/);
});

Deno.test("--help and --version", async () => {
  const help = await runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /weir lint/);
  const serveHelp = await runCli(["serve", "--help"]);
  assert.match(serveHelp.stdout, /--stdio/);
  const version = await runCli(["--version"]);
  assert.match(version.stdout, /^weir \d+\.\d+\.\d+/);
});

Deno.test("serve refuses a broken guardfile before listening", async () => {
  const file = await tempGuardfile(
    `wrap ward mcp t {\n    auth none\n    can get x { path "/x" }\n}\n`,
  );
  const r = await runCli(["serve", file, "--http", "127.0.0.1:0"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /missing "base-url"/);
  assert.doesNotMatch(r.stderr, /serving/);
});

Deno.test("resource audience warnings go to stderr and change neither stdout nor the exit code", async () => {
  const file = await tempGuardfile(`resource "a" uri="docs://a" { audience "assistant"; text "a" }
resource "b" uri="docs://b" { audience "user"; text "b" }
resource "c" uri="docs://c" { text "c" }
resource "d" uri="docs://d" priority=0.5 { text "d" }
wrap ward mcp t {
    base-url "t.example"
    auth bearer { value env "T" }
    can get issue { path "/issues/{id}" }
}
`);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "get_issue\nweir_info\n");
  const warnings = diag(r.stderr).trim().split("\n");
  assert.equal(warnings.length, 2, r.stderr);
  assert.match(warnings[0], /warning: .*resource "c".*"assistant".*"user"/);
  assert.match(warnings[1], /warning: .*resource "d"/);
});

Deno.test("lint serves http and sql grants, confirm and extract side by side, and names what it does not serve", async () => {
  const text = `confirm "create_order"
extract "get_doc" as="pdf-text"
wrap ward mcp shop {
    base-url "shop.example"
    database pgx { value env "DSN" }
    auth none
    can create order { path "/orders"; body "sku" }
    can list orders { sql { statement "select * from orders" } }
    can get doc { path "/doc"; raw-response }
}
`;
  const clean = await runCli(["lint", await tempGuardfile(text)]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.equal(clean.stdout, "create_order\nget_doc\nlist_orders\nweir_info\n");
  const r = await runCli([
    "lint",
    await tempGuardfile(text.replace("can get doc", `proxy x { upstream a b }\n    can get doc`)),
  ]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /"proxy" serves a tool of an MCP server, and this wrap names an HTTP API/);
});

Deno.test("a grant that brings a withheld operation back under a verb synonym is an error", async () => {
  const file = await tempGuardfile(`withhold "delete_note" { reason "gone for good" }
wrap ward mcp notes {
    base-url "notes.example"
    auth none
    can get note { path "/notes/{id}" }
    can remove note { path "/notes/{id}" }
}
`);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /:6:5: .*"remove_note".*"delete_note".*verb synonym/);
  assert.doesNotMatch(r.stderr, /get_note/);
});

Deno.test("a grant that sends the withheld kind of operation under another verb is warned about", async () => {
  const file = await tempGuardfile(`withhold "Edit-Note" { reason "notes are final" }
wrap ward mcp notes {
    base-url "notes.example"
    auth none
    can get note { path "/notes/{id}" }
    can close note { path "/notes/{id}" }
}
`);
  const r = await runCli(["lint", file]);
  assert.equal(r.code, 0, "a warning, not an error");
  assert.equal(r.stdout, "Edit-Note\nclose_note\nget_note\nweir_info\n");
  assert.match(
    r.stderr,
    /warning: .*"close_note" sends PATCH \/notes\/\{id\}.*"Edit-Note" withholds/,
  );
  assert.doesNotMatch(diag(r.stderr), /get_note/);
});

Deno.test("a file with errors still gets its warnings, errors first (text and --format json)", async () => {
  const file = await tempGuardfile(`wrap ward mcp notes {
    base-url "http://127.0.0.1:9"
    auth none
    can frobnicate note {
        path "/notes"
    }
    can get note {
        path "notes/{id}"
    }
    bogus-node 1
}
withhold "edit_note" { reason "never"; }
can close note { path "/notes/{id}" }
`);
  const text = await runCli(["lint", file]);
  assert.equal(text.code, 1);
  assert.equal(text.stdout, "");
  const lines = text.stderr.trim().split("\n");
  const kinds = lines.map((l) => (/: warning: /.test(l) ? "warning" : "error"));
  assert.ok(kinds.includes("error") && kinds.includes("warning"), text.stderr);
  assert.deepEqual(kinds, [...kinds].sort(), `errors first:\n${text.stderr}`);
  assert.match(
    text.stderr,
    /warning: .*verb "frobnicate" is not in the verb table \(fallthrough\)/,
  );
  assert.match(text.stderr, /must start with "\/"/);

  const json = await runCli(["lint", "--format", "json", file]);
  assert.equal(json.code, 1);
  const diagnostics = JSON.parse(json.stdout).files[0].diagnostics as {
    severity: string;
    message: string;
  }[];
  const severities = diagnostics.map((d) => d.severity);
  assert.deepEqual(severities, [...severities].sort());
  assert.ok(
    diagnostics.some((d) => d.severity === "warning" && /fallthrough/.test(d.message)),
    json.stdout,
  );
  assert.equal(
    diagnostics.filter((d) => d.severity === "error").length,
    lines.filter((l) => !/: warning: /.test(l)).length,
    "the same errors in both forms",
  );
});
