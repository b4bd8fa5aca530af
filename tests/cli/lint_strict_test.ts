/**
 * `weir lint` refuses what would make the file and the wire disagree, and
 * points at the node: a property given twice, names every JavaScript object
 * already has, tool names MCP cannot list; the boolean shim leaves quoted
 * strings alone (checked on the wire through `weir serve`); positions count
 * every KDL v2 newline; a top-level name like `toString` is just unknown.
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

/** Lint `text` from a temp file (removed afterwards); returns exit code and stderr. */
async function lint(text: string, name = "strict.mcp.kdl") {
  const dir = await Deno.makeTempDir({ prefix: "weir-strict-" });
  try {
    const file = `${dir}/${name}`;
    await Deno.writeTextFile(file, text);
    const r = await runCli(["lint", file]);
    return { ...r, stderr: r.stderr.replaceAll(`weir: ${file}:`, "") };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const wrap = (grant: string, top = "") =>
  `${top}
wrap ward mcp strict {
    base-url "http://127.0.0.1:9"
    auth none
${grant}
}
`;

Deno.test("a property given twice is an error at its node, never last-wins", async () => {
  const cases: [string, RegExp][] = [
    [
      `    can create ticket {\n        path "/t"\n        set state="closed" state="open"\n    }`,
      /^7:\d+: parse KDL: property "state" is given more than once on "set"/m,
    ],
    [
      `    can list ticket {\n        path "/t"\n        query "q" max-length=10 max-length=100000\n    }`,
      /^7:\d+: parse KDL: property "max-length" is given more than once on "query"/m,
    ],
    [
      `    can list ticket {\n        path "/t"\n        body {\n            field "x" type="integer" type="string"\n        }\n    }`,
      /^8:\d+: parse KDL: property "type" is given more than once on "field"/m,
    ],
  ];
  for (const [grant, expected] of cases) {
    const r = await lint(wrap(grant));
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, expected);
  }
  // A slashdashed property is a comment, not a repeat.
  const commented = await lint(
    wrap(
      `    can create ticket {\n        path "/t"\n        set state="closed" /-state="open"\n    }`,
    ),
  );
  assert.equal(commented.code, 0, commented.stderr);
});

Deno.test("names every JavaScript object has are refused wherever a guardfile names one", async () => {
  const cases: [string, string][] = [
    [
      wrap(
        `    can list ticket {\n        path "/t"\n        body { field "__proto__" type="string"; }\n    }`,
      ),
      `"__proto__"`,
    ],
    [
      wrap(`    can list ticket {\n        path "/t"\n        query "constructor"\n    }`),
      `"constructor"`,
    ],
    [wrap(`    can get ticket {\n        path "/t/{toString}"\n    }`), `"toString"`],
    [
      wrap(`    can create ticket {\n        path "/t"\n        set __proto__="x"\n    }`),
      `property __proto__=`,
    ],
    [
      wrap(
        `    can create ticket {\n        path "/t"\n        body { map "a.hasOwnProperty" to="k"; }\n    }`,
      ),
      `"hasOwnProperty"`,
    ],
    [
      wrap(
        `    can create ticket {\n        path "/t"\n        body { map "a.b" to="valueOf"; }\n    }`,
      ),
      `"valueOf"`,
    ],
    [
      wrap(
        `    can list ticket { path "/t"; }`,
        `prompt "p" {\n    argument "__proto__"\n    text "x"\n}`,
      ),
      `"__proto__"`,
    ],
  ];
  for (const [text, what] of cases) {
    const r = await lint(text);
    assert.equal(r.code, 1, `${what}: ${r.stderr}`);
    assert.ok(
      r.stderr.includes(`${what} is a name every JavaScript object already has`),
      `${what}: ${r.stderr}`,
    );
    assert.match(r.stderr, /^\d+:\d+: /m, "with line:column");
  }
});

Deno.test("the boolean shim rewrites raw=/required= outside strings only; quoted text reaches the wire as written", async () => {
  const upstream = await startRecorder();
  const dir = await Deno.makeTempDir({ prefix: "weir-strict-" });
  const file = `${dir}/shim.mcp.kdl`;
  await Deno.writeTextFile(
    file,
    `// a comment saying raw=true changes nothing
wrap ward mcp shim {
    base-url { value env "SHIM_BASE"; }
    auth none
    can close ticket {
        path "/t"
        set note="raw=true" other=#"required=false"# third="a raw=true b"
    }
    can create ticket {
        path "/t"
        body { field "title" type="string" required=true; }
    }
}
`,
  );
  const served = await serveHttp(file, { env: { SHIM_BASE: upstream.url } });
  try {
    const r = await callApi(served.url, "close_ticket", {});
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(JSON.parse(upstream.requests[0].body), {
      note: "raw=true",
      other: "required=false",
      third: "a raw=true b",
    });
    const missing = await callApi(served.url, "create_ticket", {});
    assert.equal(missing.status, 400, "required=true outside a string still means #true");
  } finally {
    await served.stop();
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lint points at the node: tool names MCP cannot list, every KDL newline, unknown top-level names", async () => {
  const soft = await lint(
    wrap(`    can get ticket { path "/t/{id}"; }`, `withhold "\u00AD" { reason "r"; }`),
  );
  assert.equal(soft.code, 1);
  assert.match(
    soft.stderr,
    /^1:1: withhold "\\u00ad": withhold names the tool "\\u00ad": a tool name is 1-128 characters/m,
  );
  assert.ok(!soft.stderr.includes("tools["), soft.stderr);
  const info = await lint(wrap(`    can get ticket { path "/t/{id}"; }`, `server-info name="a b"`));
  assert.equal(info.code, 1);
  assert.match(info.stderr, /^1:1: server-info: server-info name="a b": a tool name/m);

  // The same file with each newline KDL v2 knows: the error is on line 6, column 9.
  const lines = [
    "wrap ward mcp t {",
    '    base-url "http://127.0.0.1:9"',
    "    auth none",
    "    can get ticket {",
    '        path "/t/{id}"',
    "        bogus 1",
    "    }",
    "}",
    "",
  ];
  for (const newline of ["\n", "\r\n", "\r", "\u0085", "\u000c", "\u2028", "\u2029"]) {
    const r = await lint(lines.join(newline));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^6:9: wrap > can get ticket > bogus: unknown node "bogus"/m,
      JSON.stringify(newline),
    );
  }

  for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
    const r = await lint(wrap(`    can get ticket { path "/t/{id}"; }`, `${name} "x"`));
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^1:1: ${name} x: unknown top-level node "${name}"`, "m"));
    assert.ok(!r.stderr.includes("native code"), r.stderr);
  }
  const command = await runCli(["toString"]);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /unknown command "toString"/);
  const level = await runCli(["serve", "x.kdl", "--stdio", "--log-level", "constructor"]);
  assert.equal(level.code, 2);
  assert.match(level.stderr, /--log-level: unknown level "constructor"/);
});

Deno.test("a control character written into a guardfile string is an error at its entry", async () => {
  const cases: [string, string, RegExp][] = [
    [
      "withhold reason (ESC, clears a terminal)",
      wrap(`    can get a { path "/a" }`, `withhold "delete_a" { reason "gone \\u{1b}[2J"; }`),
      /^1:\d+: parse KDL: a string on "reason" holds the control character U\+001B/m,
    ],
    [
      "grant describe (an OSC title ended by BEL)",
      wrap(`    can get a {\n        path "/a"\n        describe "x \\u{1b}]0;t\\u{7}"\n    }`),
      /^7:\d+: parse KDL: a string on "describe" holds the control character U\+001B/m,
    ],
    [
      "instructions (C1 CSI)",
      wrap(`    can get a { path "/a" }`, `instructions { text "a \\u{9b}31m b"; }`),
      /^1:\d+: .*holds the control character U\+009B/m,
    ],
    [
      "a set value (NUL)",
      wrap(`    can close a {\n        path "/a"\n        set note="x\\u{0}y"\n    }`),
      /^7:\d+: .*on "set" holds the control character U\+0000/m,
    ],
  ];
  for (const [label, text, message] of cases) {
    const r = await lint(text);
    assert.equal(r.code, 1, `${label}: ${r.stderr}`);
    assert.match(r.stderr, message, label);
    assert.ok(!/[\u001b\u0007\u009b]/.test(r.stderr), `${label}: stderr holds a control`);
  }
  // Tab and line breaks stay allowed (multi-line text).
  const ok = await lint(
    wrap(`    can get a { path "/a" }`, `instructions { text "line one\\n\\tline two"; }`),
  );
  assert.equal(ok.code, 0, ok.stderr);
});
