/**
 * `weir diff`: each kind of change between two guardfiles, classified as an
 * agent feels it (widen, narrow, change), from the surfaces the guard serves;
 * a widening hidden in a rename; and the CLI as CI runs it: text, JSON,
 * `--fail-on widen` (1 on a widening, 0 on a narrowing-only change) and
 * `--git REV`.
 */
import assert from "node:assert/strict";
import { parseGuardfile } from "../../src/guardfile/load.ts";
import { surfaceOfGuardfile } from "../../src/surface/spec.ts";
import { type Change, diffSurfaces } from "../../src/diff/surface_diff.ts";
import { ROOT, runCommand } from "../support/cli.ts";

const BASE = `
withhold "delete_issue" { reason "Issues are closed, not deleted."; }
confirm "close_issue" message="Close it?"
cache "get_issue" ttl="1m"
pin "list_issue" { query "org" literal "acme"; }
rate-limit "60/1m"
wrap ward mcp tracker {
    base-url "https://tracker.example/api"
    auth bearer { value env "TRACKER_TOKEN"; }
    header "Accept" "application/json"
    restrict owner matches "acme-*"
    can get issue {
        path "/repos/{owner}/issues/{number}"
        param "number" type="integer" minimum=1
    }
    can list issue {
        path "/repos/{owner}/issues"
        scope "issues:read"
        query {
            field "state" type="string" { enum "open" "closed"; }
            field "per_page" type="integer" minimum=1 maximum=50
            field "q" type="string" pattern="^[a-z ]+$" max-length=100
            field "since" type="string" required=#true
        }
    }
    can create issue {
        path "/repos/{owner}/issues"
        body {
            field "title" type="string" required=#true max-length=256
            array "labels" items="string" max-length=20
        }
    }
    can close issue {
        path "/repos/{owner}/issues/{number}"
        set state="closed"
    }
}
`;

function surfaceOf(text: string) {
  const r = parseGuardfile(text, "case.mcp.kdl");
  assert.ok(r.guardfile, r.diagnostics.map((d) => `${d.position?.line}: ${d.message}`).join("\n"));
  return surfaceOfGuardfile(r.guardfile);
}

function diff(next: string, old = BASE): Change[] {
  return diffSurfaces(surfaceOf(old), surfaceOf(next));
}

/** Replace `from` (which must occur) in the base guardfile. */
function edit(from: string, to: string, text = BASE): string {
  assert.ok(text.includes(from), `the base holds ${from}`);
  return text.replace(from, to);
}

const CASES: { name: string; next: string; expect: [Change["effect"], string, RegExp][] }[] = [
  {
    name: "a tool added",
    next: edit(
      `    can close issue {`,
      `    can delete label {\n        path "/labels/{id}"\n    }\n    can close issue {`,
    ),
    expect: [["widen", "delete_label", /new tool: DELETE \/labels\/\{id\} \[destructive\]/]],
  },
  {
    name: "a tool removed",
    next: edit(
      `    can create issue {\n        path "/repos/{owner}/issues"\n        body {\n            field "title" type="string" required=#true max-length=256\n            array "labels" items="string" max-length=20\n        }\n    }\n`,
      "",
    ),
    expect: [["narrow", "create_issue", /tool removed \(was POST/]],
  },
  {
    name: "a method change",
    next: edit(`        set state="closed"`, `        set state="closed"\n        method "PUT"`),
    expect: [["widen", "close_issue", /now PUT .* \(was PATCH/]],
  },
  {
    name: "a path change",
    next: edit(
      `path "/repos/{owner}/issues/{number}"\n        param`,
      `path "/repos/{owner}/issues/{number}/full"\n        param`,
    ),
    expect: [["widen", "get_issue", /now GET \/repos\/\{owner\}\/issues\/\{number\}\/full/]],
  },
  {
    name: "an input added",
    next: edit(
      `field "since" type="string" required=#true`,
      `field "since" type="string" required=#true\n            field "sort" type="string"`,
    ),
    expect: [["widen", "list_issue", /input "sort" added \(string\)/]],
  },
  {
    name: "an input removed",
    next: edit(`            array "labels" items="string" max-length=20\n`, ""),
    expect: [["narrow", "create_issue", /input "labels" removed/]],
  },
  {
    name: "a type widened",
    next: edit(`param "number" type="integer" minimum=1`, `param "number" type="string"`),
    expect: [["widen", "get_issue", /input "number": type integer -> string/]],
  },
  {
    name: "a bound widened",
    next: edit(`maximum=50`, `maximum=100`),
    expect: [["widen", "list_issue", /input "per_page": maximum 50 -> 100/]],
  },
  {
    name: "a bound removed",
    next: edit(`max-length=256`, ``),
    expect: [["widen", "create_issue", /input "title": maxLength 256 -> none/]],
  },
  {
    name: "a bound narrowed",
    next: edit(`max-length=100`, `max-length=50`),
    expect: [["narrow", "list_issue", /input "q": maxLength 100 -> 50/]],
  },
  {
    name: "an enum widened",
    next: edit(`enum "open" "closed";`, `enum "open" "closed" "all";`),
    expect: [["widen", "list_issue", /input "state": enum adds "all"/]],
  },
  {
    name: "an enum narrowed",
    next: edit(`enum "open" "closed";`, `enum "open";`),
    expect: [["narrow", "list_issue", /input "state": enum drops "closed"/]],
  },
  {
    name: "a pattern changed",
    next: edit(`pattern="^[a-z ]+$"`, `pattern="^[a-z0-9 ]+$"`),
    expect: [["widen", "list_issue", /input "q": pattern "\^\[a-z \]\+\$" -> .*may admit/]],
  },
  {
    name: "a pattern removed",
    next: edit(`pattern="^[a-z ]+$" `, ``),
    expect: [["widen", "list_issue", /input "q": pattern .* removed/]],
  },
  {
    name: "no longer required",
    next: edit(`field "since" type="string" required=#true`, `field "since" type="string"`),
    expect: [["widen", "list_issue", /input "since" no longer required/]],
  },
  {
    name: "now required",
    next: edit(
      `            array "labels" items="string" max-length=20`,
      `            array "labels" items="string" max-length=20 required=#true`,
    ),
    expect: [["narrow", "create_issue", /input "labels" now required/]],
  },
  {
    name: "the metacharacter gate lifted",
    next: edit(`max-length=100`, `max-length=100 metacharacters="allow"`),
    expect: [["widen", "list_issue", /input "q": now allows shell metacharacters/]],
  },
  {
    name: "a restrict widened",
    next: edit(`restrict owner matches "acme-*"`, `restrict owner matches "acme-*" "beta-*"`),
    expect: [["widen", "get_issue", /restrict owner: "acme-\*" -> "acme-\*" or "beta-\*"/]],
  },
  {
    name: "a restrict removed",
    next: edit(`    restrict owner matches "acme-*"\n`, ""),
    expect: [["widen", "list_issue", /restrict owner: "acme-\*" -> none/]],
  },
  {
    name: "a restrict narrowed",
    next: edit(`restrict owner matches "acme-*"`, `restrict owner matches "acme-web"`),
    expect: [["narrow", "create_issue", /restrict owner/]],
  },
  {
    name: "a pin removed",
    next: edit(`pin "list_issue" { query "org" literal "acme"; }\n`, ""),
    expect: [["widen", "list_issue", /pin on query org removed/]],
  },
  {
    name: "a withhold granted back",
    next: edit(`withhold "delete_issue" { reason "Issues are closed, not deleted."; }\n`, "")
      .replace(
        `    can close issue {`,
        `    can delete issue {\n        path "/repos/{owner}/issues/{number}"\n    }\n    can close issue {`,
      ),
    expect: [["widen", "delete_issue", /was withheld, now granted: DELETE/]],
  },
  {
    name: "a grant withheld",
    next: edit(`confirm "close_issue" message="Close it?"\n`, "")
      .replace(
        `    can close issue {\n        path "/repos/{owner}/issues/{number}"\n        set state="closed"\n    }\n`,
        "",
      )
      .replace(
        `withhold "delete_issue"`,
        `withhold "close_issue" { reason "Not now."; }\nwithhold "delete_issue"`,
      ),
    expect: [["narrow", "close_issue", /was granted .*now withheld/]],
  },
  {
    name: "confirm removed",
    next: edit(`confirm "close_issue" message="Close it?"\n`, ""),
    expect: [["widen", "close_issue", /no longer asks a person to confirm/]],
  },
  {
    name: "rate-limit raised",
    next: edit(`rate-limit "60/1m"`, `rate-limit "600/1m"`),
    expect: [["widen", "", /rate-limit 60 per 60000 ms: calls per window 60 -> 600/]],
  },
  {
    name: "rate-limit added narrows, removed widens",
    next: edit(`rate-limit "60/1m"\n`, ""),
    expect: [["widen", "", /rate-limit 60 per 60000 ms removed/]],
  },
  {
    name: "cache changed",
    next: edit(`ttl="1m"`, `ttl="1h"`),
    expect: [["change", "get_issue", /cache 60000 ms -> 3600000 ms/]],
  },
  {
    name: "a scope dropped",
    next: edit(`        scope "issues:read"\n`, ""),
    expect: [["widen", "list_issue", /no longer needs scope issues:read/]],
  },
  {
    name: "a fixed body changed",
    next: edit(`set state="closed"`, `set state="open"`),
    expect: [["widen", "close_issue", /fixed body \{"state":"closed"\} -> \{"state":"open"\}/]],
  },
  {
    name: "the upstream and a header changed",
    next: edit(`https://tracker.example/api`, `https://other.example/api`)
      .replace(`header "Accept" "application/json"`, `header "Accept" "text/plain"`),
    expect: [
      ["widen", "", /upstream https:\/\/tracker.example\/api -> https:\/\/other.example\/api/],
      ["widen", "", /header accept changed/],
    ],
  },
  {
    name: "a widening hidden in a rename",
    next: edit(`    can list issue {`, `    can search issue {`).replace(
      `maximum=50`,
      `maximum=5000`,
    )
      .replace(`pin "list_issue"`, `pin "search_issue"`),
    expect: [
      ["change", "search_issue", /renamed from list_issue/],
      ["widen", "search_issue", /input "per_page": maximum 50 -> 5000/],
    ],
  },
];

for (const c of CASES) {
  Deno.test(`diffSurfaces(): ${c.name}`, () => {
    const changes = diff(c.next);
    for (const [effect, tool, what] of c.expect) {
      assert.ok(
        changes.some((x) => x.effect === effect && x.tool === tool && what.test(x.what)),
        `expected ${effect} ${tool} ${what} in:\n${
          changes.map((x) => `${x.effect} ${x.tool}: ${x.what}`).join("\n")
        }`,
      );
    }
    // Widening changes come first.
    const order = changes.map((x) => ({ widen: 0, narrow: 1, change: 2 })[x.effect]);
    assert.deepEqual(order, [...order].sort((a, b) => a - b));
  });
}

Deno.test("diffSurfaces(): the same file, and a pure rename, widen nothing", () => {
  assert.deepEqual(diff(BASE), []);
  const renamed = diff(
    edit(`    can get issue {`, `    can view issue {`).replace(
      `cache "get_issue"`,
      `cache "view_issue"`,
    ),
  );
  assert.deepEqual(renamed.filter((c) => c.effect === "widen"), []);
  assert.ok(renamed.some((c) => c.what === "renamed from get_issue"));
});

Deno.test("diffSurfaces(): the reverse of a widening narrows", () => {
  const wider = edit(`maximum=50`, `maximum=100`);
  const back = diff(BASE, wider);
  assert.ok(back.some((c) => c.effect === "narrow" && /maximum 100 -> 50/.test(c.what)));
  assert.ok(!back.some((c) => c.effect === "widen"));
});

/** The changes between two whole guardfiles, as `effect tool: what` lines. */
function lines(old: string, next: string): string[] {
  return diffSurfaces(surfaceOf(old), surfaceOf(next)).map((c) =>
    `${c.effect} ${c.tool || "(server)"}: ${c.what}`
  );
}

const GRAPHQL = `
wrap ward mcp gh {
    base-url "https://api.github.example"
    auth bearer { value env "GH_TOKEN"; }
    can get viewer {
        path "/graphql"
        method "POST"
        graphql { document "query { viewer { login } }"; }
    }
}
`;

Deno.test("diffSurfaces(): a GraphQL document change widens, renamed or not", () => {
  const mutation = GRAPHQL.replace(
    "query { viewer { login } }",
    'mutation { deleteRepository(input: {repositoryId: \\"R_1\\"}) { clientMutationId } }',
  );
  const same = lines(GRAPHQL, mutation);
  assert.ok(
    same.some((l) => /^widen get_viewer: graphql document changed/.test(l)),
    same.join("\n"),
  );
  // Another tool on the same endpoint is not a rename of the first: a new tool.
  const renamed = lines(GRAPHQL, mutation.replace("can get viewer", "can delete repo"));
  assert.ok(
    renamed.some((l) => /^widen delete_repo: new tool: POST \/graphql/.test(l)),
    renamed.join("\n"),
  );
  assert.ok(!renamed.some((l) => /renamed from/.test(l)), renamed.join("\n"));
  // The same document under another name is a rename that widens nothing.
  const pure = lines(GRAPHQL, GRAPHQL.replace("can get viewer", "can view viewer"));
  assert.deepEqual(pure, ["change view_viewer: renamed from get_viewer"]);
});

const LITERALS = `
pin "get_item" { query "site" literal "my-site.example"; }
wrap ward mcp t {
    base-url { value literal "https://api.example.com"; }
    auth bearer { value literal "token-for-reading-only-1234"; }
    can get item { path "/items/{id}" }
}
`;

Deno.test("diffSurfaces(): a literal base-url, credential or pin that changes widens, and is never printed", () => {
  const next = LITERALS.replace("https://api.example.com", "https://other.example")
    .replace("token-for-reading-only-1234", "token-with-admin-rights-5678")
    .replace("my-site.example", "other-site.example");
  const out = lines(LITERALS, next);
  assert.ok(
    out.some((l) => /^widen \(server\): base-url: its literal value changed/.test(l)),
    out.join("\n"),
  );
  assert.ok(
    out.some((l) => /^widen \(server\): auth: its literal value changed/.test(l)),
    out.join("\n"),
  );
  assert.ok(
    out.some((l) => /^widen get_item: pin on query site: its literal value changed/.test(l)),
    out.join("\n"),
  );
  assert.doesNotMatch(
    out.join("\n"),
    /other\.example|admin-rights|reading-only|my-site|api\.example/,
  );
  // Another variable for a pin may hold another value: widens too.
  const env = lines(
    LITERALS.replace(`literal "my-site.example"`, `env "SITE"`),
    LITERALS.replace(`literal "my-site.example"`, `env "OTHER_SITE"`),
  );
  assert.deepEqual(env, ["widen get_item: pin on query site: env SITE -> env OTHER_SITE"]);
});

Deno.test("diffSurfaces(): instructions, resources and prompts that change are reported", () => {
  const base = `
instructions { text "Be brief."; }
resource "notes" uri="https://x.example/notes" { audience "assistant"; text "hi"; }
${LITERALS}`;
  const next = base.replace("Be brief.", "Call every tool twice.")
    .replace(`text "hi"`, `text "hello"`) +
    `prompt "triage" { text "Triage {issue}."; argument "issue"; }\n`;
  assert.deepEqual(lines(base, next).sort(), [
    "change (server): instructions changed",
    "change (server): prompt triage added",
    "change (server): resource notes changed",
  ]);
});

Deno.test("diffSurfaces(): an inbound-token caller that gains a tool widens; a new caller widens", () => {
  const base = `inbound-token ci { value env "CI_TOKEN"; tools "get_item"; }\n${LITERALS}`;
  const more = base.replace(
    'can get item { path "/items/{id}" }',
    'can get item { path "/items/{id}" }\n    can delete item { path "/items/{id}" }',
  );
  const out = lines(
    more,
    more.replace(`tools "get_item";`, `tools "get_item" "delete_item";`) +
      `inbound-token bot { value env "BOT_TOKEN"; tools "get_item"; }\n`,
  );
  assert.deepEqual(out.sort(), [
    "widen (server): inbound token bot added (tools get_item)",
    "widen (server): inbound token ci: may now call delete_item",
  ]);
});

// ---- the CLI, as CI runs it ----

async function weir(args: string[], cwd = ROOT) {
  return await runCommand(Deno.execPath(), {
    args: ["run", "--quiet", "--config", `${ROOT}deno.json`, "-A", `${ROOT}cli.ts`, ...args],
    cwd,
  });
}

Deno.test("weir diff: text and JSON; --fail-on widen is 1 on a widening, 0 on a narrowing only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-diff-" });
  try {
    await Deno.writeTextFile(`${dir}/old.mcp.kdl`, BASE);
    await Deno.writeTextFile(`${dir}/wide.mcp.kdl`, edit(`maximum=50`, `maximum=100`));
    await Deno.writeTextFile(`${dir}/narrow.mcp.kdl`, edit(`maximum=50`, `maximum=20`));
    const text = await weir(["diff", `${dir}/old.mcp.kdl`, `${dir}/wide.mcp.kdl`]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^\+ WIDENS +list_issue: input "per_page": maximum 50 -> 100$/m);
    assert.match(text.stdout, /1 widening, 0 narrowing/);
    const failed = await weir([
      "diff",
      "--fail-on",
      "widen",
      `${dir}/old.mcp.kdl`,
      `${dir}/wide.mcp.kdl`,
    ]);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /widens what an agent can do/);
    const narrow = await weir([
      "diff",
      "--fail-on",
      "widen",
      "--format",
      "json",
      `${dir}/old.mcp.kdl`,
      `${dir}/narrow.mcp.kdl`,
    ]);
    assert.equal(narrow.code, 0, narrow.stderr);
    const doc = JSON.parse(narrow.stdout);
    assert.equal(doc.widened, false);
    assert.equal(doc.narrowed, true);
    assert.deepEqual(doc.changes, [
      { tool: "list_issue", effect: "narrow", what: `input "per_page": maximum 50 -> 20` },
    ]);
    const any = await weir([
      "diff",
      "--fail-on",
      "any",
      `${dir}/old.mcp.kdl`,
      `${dir}/narrow.mcp.kdl`,
    ]);
    assert.equal(any.code, 1);
    const same = await weir([
      "diff",
      "--fail-on",
      "any",
      `${dir}/old.mcp.kdl`,
      `${dir}/old.mcp.kdl`,
    ]);
    assert.equal(same.code, 0);
    assert.match(same.stdout, /no change in what an agent can do/);
    const usage = await weir(["diff", `${dir}/old.mcp.kdl`]);
    assert.equal(usage.code, 2);
    await Deno.writeTextFile(
      `${dir}/wrap.mcp.kdl`,
      `wrap ward mcp e {\n    mcp-server stdio "e"\n    proxy echo\n}\n`,
    );
    // A file that wraps an MCP server is compared too (its own rules, the server held fixed).
    const wrapped = await weir(["diff", `${dir}/wrap.mcp.kdl`, `${dir}/wrap.mcp.kdl`]);
    assert.equal(wrapped.code, 0, wrapped.stderr);
    assert.match(wrapped.stdout, /no change in what an agent can do/);
    const broken = await weir(["diff", `${dir}/old.mcp.kdl`, `${dir}/missing.mcp.kdl`]);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /missing\.mcp\.kdl.*no such file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("weir diff --git REV FILE compares with the file as committed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-diff-git-" });
  try {
    const git = (...args: string[]) =>
      runCommand("git", {
        args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
        cwd: dir,
      });
    assert.equal((await git("init", "-q")).code, 0);
    await Deno.writeTextFile(`${dir}/tracker.mcp.kdl`, BASE);
    await git("add", "tracker.mcp.kdl");
    assert.equal((await git("commit", "-qm", "base")).code, 0);
    await Deno.writeTextFile(
      `${dir}/tracker.mcp.kdl`,
      edit(`enum "open" "closed";`, `enum "open" "closed" "all";`),
    );
    const r = await weir(["diff", "--fail-on", "widen", "--git", "HEAD", "tracker.mcp.kdl"], dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /weir diff HEAD:tracker\.mcp\.kdl -> tracker\.mcp\.kdl/);
    assert.match(r.stdout, /\+ WIDENS +list_issue: input "state": enum adds "all"/);
    const bad = await weir(["diff", "--git", "no-such-rev", "tracker.mcp.kdl"], dir);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /git show no-such-rev:tracker\.mcp\.kdl/);
    // What to do: a CI checkout is often shallow, without the branch compared with.
    assert.match(bad.stderr, /this clone has no no-such-rev: fetch it first \(git fetch origin/);
    const outside = await Deno.makeTempDir({ prefix: "weir-diff-no-git-" });
    try {
      await Deno.writeTextFile(`${outside}/loose.mcp.kdl`, BASE);
      const loose = await weir(["diff", "--git", "HEAD", "loose.mcp.kdl"], outside);
      assert.equal(loose.code, 1);
      assert.match(
        loose.stderr,
        /not a git repository.*; --git reads FILE from the git repository/,
      );
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
    // A guardfile the revision does not have yet: everything it serves is new.
    await Deno.writeTextFile(`${dir}/added.mcp.kdl`, BASE);
    const added = await weir(["diff", "--fail-on", "widen", "--git", "HEAD", "added.mcp.kdl"], dir);
    assert.equal(added.code, 1, added.stderr);
    assert.match(added.stdout, /weir diff HEAD:added\.mcp\.kdl \(absent\) -> added\.mcp\.kdl/);
    assert.match(
      added.stdout,
      /\+ WIDENS +get_issue: new tool: GET \/repos\/\{owner\}\/issues\/\{number\}/,
    );
    assert.match(
      added.stdout,
      /\+ WIDENS +\(server\): upstream none -> https:\/\/tracker\.example\/api/,
    );
    const shown = await weir(["diff", "--git", "HEAD", "added.mcp.kdl"], dir);
    assert.equal(shown.code, 0, shown.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- the four misses of issue 35, and their reverses ----

const FOUR = `
inbound-token ci { value env "CI_TOKEN"; tools "get_project"; }
pin "get_project" { query "site" env "SITE" secret=#true; }
rate-limit "60/1m" { store redis literal "redis://127.0.0.1:6379"; bucket "shared"; }
wrap ward mcp four {
    base-url "https://api.example.com"
    auth none
    can get project {
        path "/projects/{pid}"
        param "pid" slashes="encoded"
    }
}
`;

Deno.test("diffSurfaces(): each of issue 35's four misses widens, and its reverse narrows", () => {
  const cases: [string, string, RegExp][] = [
    [
      `param "pid" slashes="encoded"`,
      `param "pid" slashes="segments"`,
      /^widen get_project: input "pid": one segment, \/ sent as %2F -> relative path of segments$/,
    ],
    [
      ` secret=#true;`,
      `;`,
      /^widen get_project: pin on query site: no longer secret: its value is no longer redacted/,
    ],
    [
      `env "CI_TOKEN"`,
      `env "OTHER_TOKEN"`,
      /^widen \(server\): inbound token ci: its token is now read from env OTHER_TOKEN \(was env CI_TOKEN\)$/,
    ],
    [
      ` { store redis literal "redis://127.0.0.1:6379"; bucket "shared"; }`,
      ``,
      /^widen \(server\): rate-limit 60 per 60000 ms: state shared in redis .* -> in each process \(N replicas allow N times the calls\)$/,
    ],
  ];
  for (const [from, to, expected] of cases) {
    const next = edit(from, to, FOUR);
    const out = lines(FOUR, next);
    assert.ok(out.some((l) => expected.test(l)), `${from} -> ${to}:\n${out.join("\n")}`);
    // The reverse narrows; another token variable, or the other way of placing a
    // slash (a value then reaches a path the first never sent), widens again.
    const back = lines(next, FOUR);
    assert.ok(back.length > 0, `${to} -> ${from} is reported`);
    if (!/OTHER_TOKEN|slashes/.test(to)) {
      assert.ok(!back.some((l) => l.startsWith("widen")), `${to} -> ${from}:\n${back.join("\n")}`);
    }
  }
  // Back to refusing a slash narrows.
  const refused = lines(FOUR, edit(`param "pid" slashes="encoded"`, `param "pid"`, FOUR));
  assert.ok(refused.some((l) => /^narrow get_project: input "pid": .* -> one segment$/.test(l)));
  // ...and lifts the 1024-character cap a path of segments has: that part widens, and says so.
  assert.deepEqual(
    refused.filter((l) => l.startsWith("widen")),
    [`widen get_project: input "pid": maxLength 1024 -> none`],
  );
  // Another shared bucket starts full: a widening too.
  assert.ok(
    lines(FOUR, edit(`bucket "shared"`, `bucket "other"`, FOUR)).some((l) =>
      /^widen \(server\): rate-limit .*bucket shared\) -> .*bucket other\)/.test(l)
    ),
  );
});

Deno.test("weir diff compares AWS policies: another prefix or bucket widens, read-only narrows", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-diff-aws-" });
  try {
    const shipped = await Deno.readTextFile(`${ROOT}guardfiles/s3-assets.mcp.kdl`);
    await Deno.writeTextFile(`${dir}/old.mcp.kdl`, shipped);
    await Deno.writeTextFile(
      `${dir}/wide.mcp.kdl`,
      shipped.replace(`prefix "charts"`, `prefix "c"`),
    );
    await Deno.writeTextFile(`${dir}/ro.mcp.kdl`, `surface read-only=#true\n${shipped}`);
    const wide = await weir([
      "diff",
      "--fail-on",
      "widen",
      `${dir}/old.mcp.kdl`,
      `${dir}/wide.mcp.kdl`,
    ]);
    assert.equal(wide.code, 1, wide.stderr);
    assert.match(
      wide.stdout,
      /\+ WIDENS +\(server\): aws policy key prefix "charts\/" -> "c\/"/,
    );
    const ro = await weir([
      "diff",
      "--fail-on",
      "widen",
      `${dir}/old.mcp.kdl`,
      `${dir}/ro.mcp.kdl`,
    ]);
    assert.equal(ro.code, 0, ro.stdout + ro.stderr);
    assert.match(ro.stdout, /- narrows +\(server\): read-only mode turned on/);
    assert.match(ro.stdout, /- narrows +put_object: was granted \(PutObject .*\), now withheld/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
