/**
 * The package as JSR would publish it, used as a JSR user would: the exact
 * file list `deno publish --dry-run` reports is copied to a temp dir outside
 * the checkout, bare specifiers are rewritten to their deno.json targets (what
 * JSR does at publish time; one that deno.json does not map fails here), and
 * a user script in another temp dir imports the three entry points and runs
 * them with `--no-config`, so nothing of the checkout's configuration helps.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT } from "./support/cli.ts";

const config = JSON.parse(await Deno.readTextFile(CONFIG));
const imports: Record<string, string> = config.imports;

async function publishedFiles(): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty", "--config", CONFIG],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  assert.ok(out.success, plain);
  const root = `file://${ROOT}`;
  return [...plain.matchAll(/^\s+(file:\/\/\S+) \(/gm)].map((m) => m[1].slice(root.length));
}

const FILES = await publishedFiles();

/** Rewrite `from "x"` / `import("x")` / `import "x"` bare specifiers the way JSR does. */
function unfurl(file: string, source: string): string {
  return source.split("\n").map((line) =>
    /^\s*(\*|\/\/)/.test(line) ? line : unfurlLine(file, line)
  )
    .join("\n");
}

function unfurlLine(file: string, source: string): string {
  return source.replace(
    /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])([^"'\n]+)\2/g,
    (whole, lead: string, quote: string, spec: string) => {
      if (/^(\.{1,2}\/|\/|[a-z]+:)/.test(spec)) return whole;
      const exact = imports[spec];
      const prefix = Object.keys(imports).filter((k) => k.endsWith("/") && spec.startsWith(k))
        .sort((a, b) => b.length - a.length)[0];
      const target = exact ?? (prefix ? imports[prefix] + spec.slice(prefix.length) : undefined);
      assert.ok(target, `${file}: bare specifier "${spec}" is not mapped in deno.json imports`);
      return `${lead}${quote}${target}${quote}`;
    },
  );
}

Deno.test("the published file list is the library, the guard, the CLI and what they need", () => {
  const files = FILES;
  for (const entry of Object.values(config.exports as Record<string, string>)) {
    assert.ok(files.includes(entry.replace(/^\.\//, "")), `${entry} is published`);
  }
  for (const needed of ["LICENSE", "README.md", "CHANGELOG.md", "guardfiles/demo.mcp.kdl"]) {
    assert.ok(files.includes(needed), `${needed} is published`);
  }
  const stray = files.filter((f) =>
    /^(tests|bench|scripts|deploy|\.ci|dist)\//.test(f) || f === "deno.lock" ||
    f === "Dockerfile" || /_test\.ts$/.test(f)
  );
  assert.deepEqual(stray, [], "nothing test-, bench- or build-only is published");
});

Deno.test("the packed module graph runs from outside the checkout without --config", async () => {
  const pkg = await Deno.makeTempDir({ prefix: "weir-pkg-" });
  const user = await Deno.makeTempDir({ prefix: "weir-user-" });
  try {
    for (const file of FILES) {
      const target = `${pkg}/${file}`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
      if (file.endsWith(".ts")) {
        await Deno.writeTextFile(target, unfurl(file, await Deno.readTextFile(`${ROOT}${file}`)));
      } else {
        await Deno.copyFile(`${ROOT}${file}`, target);
      }
    }
    const base = new URL(`file://${pkg}/`);
    await Deno.writeTextFile(
      `${user}/main.ts`,
      `import { McpServer } from "${new URL("mod.ts", base)}";
import { createGuard, parseGuardfile } from "${new URL("src/guard/mod.ts", base)}";
import { main } from "${new URL("cli.ts", base)}";

const { guardfile, diagnostics } = parseGuardfile(
  await Deno.readTextFile(${JSON.stringify(`${pkg}/guardfiles/demo.mcp.kdl`)}),
  "demo.mcp.kdl",
);
if (!guardfile) throw new Error(diagnostics.map((d) => d.message).join("; "));
const server = new McpServer(createGuard(guardfile, {
  resolver: { env: (n) => Deno.env.get(n), readFile: (p) => Deno.readTextFile(p) },
}));
console.log("tools:", server.capabilities.tools ? "yes" : "no");
Deno.exit(await main(["lint", ${JSON.stringify(`${pkg}/guardfiles/demo.mcp.kdl`)}]));
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-config", "--no-lock", "-A", "main.ts"],
      cwd: user,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(stdout, /^tools: yes$/m);
    assert.match(stdout, /^delete_ticket$/m);

    const version = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-config", "--no-lock", "-A", `${pkg}/cli.ts`, "--version"],
      cwd: user,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(version.stdout).trim(), `weir ${config.version}`);
  } finally {
    await Deno.remove(pkg, { recursive: true });
    await Deno.remove(user, { recursive: true });
  }
});

Deno.test("deno doc --lint passes on every entry point", async () => {
  for (const entry of Object.values(config.exports as Record<string, string>)) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["doc", "--lint", "--config", CONFIG, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr).replace(/\x1b\[[0-9;]*m/g, "");
    assert.ok(
      out.success,
      `deno doc --lint ${entry}: document every exported symbol and field, and export ` +
        `the types public ones name:\n${text.slice(0, 3000)}`,
    );
  }
});
