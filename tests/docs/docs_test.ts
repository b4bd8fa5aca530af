/**
 * The README and the pages under docs/ as a reader uses them: every relative
 * link reaches a file and every anchor a heading; every guardfile example
 * lints clean with the real CLI; every `weir` command line names a command and
 * flags that `weir help` knows; and every other command or program example is
 * run here or names the test that runs it.
 *
 * How a page says what checks a code block: an HTML comment on the line before
 * its fence (blank lines between are allowed),
 *
 *   <!-- docs-check: lint-in tests/fixtures/docs/inside_wrap.mcp.kdl -->
 *
 * - (none) on a `kdl` block: the block is a whole guardfile; it must lint clean.
 * - `lint-in FILE`: a fragment; it replaces the line of FILE holding
 *   `docs-check: block`, and the result must lint clean.
 * - `run`: the block is run with bash (`weir` is this checkout's CLI,
 *   `npx -y PKG` is `deno run -A npm:PKG`) in a temporary directory; it must exit 0.
 * - `tested-by FILE... [-- why]`: the named test files run it.
 * - `not-run -- why`: it cannot run here, and the reason says why.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CLI,
  CONFIG,
  ROOT,
  runCli,
  serveHttp,
  tempGuardfile,
  weirCommand,
} from "../support/cli.ts";
import { startDemoUpstream } from "../../src/demo/ticket_api.ts";
import { HEALTH_CHECK } from "../support/haproxy.ts";

interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  check?: string;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

interface Page {
  name: string;
  slugs: Set<string>;
  links: Link[];
  blocks: Block[];
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
function slugger(): (heading: string) => string {
  const seen = new Map<string, number>();
  return (heading) => {
    const base = heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "")
      .replaceAll(" ", "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}-${n}`;
  };
}

function readPage(name: string): Page {
  const lines = Deno.readTextFileSync(`${ROOT}${name}`).split("\n");
  const slug = slugger();
  const page: Page = { name, slugs: new Set(), links: [], blocks: [] };
  let open: Block | undefined;
  let body: string[] = [];
  lines.forEach((line, i) => {
    if (open) {
      if (/^```\s*$/.test(line)) {
        open.text = body.join("\n");
        page.blocks.push(open);
        open = undefined;
      } else {
        body.push(line);
      }
      return;
    }
    const fence = /^```(\S*)/.exec(line);
    if (fence) {
      let j = i - 1;
      while (j >= 0 && lines[j].trim() === "") j--;
      const check = j >= 0 ? /^<!-- docs-check: (.+?) -->$/.exec(lines[j].trim())?.[1] : undefined;
      open = { page: name, line: i + 1, lang: fence[1], text: "", check };
      body = [];
      return;
    }
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading) page.slugs.add(slug(heading[1]));
    const prose = line.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      page.links.push({ page: name, line: i + 1, target: m[1] });
    }
  });
  assert.equal(open, undefined, `${name}: a code block is never closed`);
  return page;
}

const PAGE_NAMES = [
  "README.md",
  ...[...Deno.readDirSync(`${ROOT}docs`)].filter((e) => e.isFile && e.name.endsWith(".md"))
    .map((e) => `docs/${e.name}`).sort(),
];
const PAGES = new Map(PAGE_NAMES.map((n) => [n, readPage(n)]));
const BLOCKS = [...PAGES.values()].flatMap((p) => p.blocks);
const where = (b: { page: string; line: number }) => `${b.page}:${b.line}`;

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Resolve `target` (a path relative to `page`'s folder) to a repository path. */
function resolve(page: string, target: string): string {
  const url = new URL(target, `file:///repo/${page}`);
  return decodeURIComponent(url.pathname.slice("/repo/".length));
}

Deno.test("docs: every relative link in README.md and docs/*.md reaches a file and its anchor", () => {
  assert.ok(PAGES.size >= 10, `README.md and the docs/ pages: found ${[...PAGES.keys()]}`);
  const broken: string[] = [];
  for (const page of PAGES.values()) {
    for (const link of page.links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // https:, mailto:
      const [path, anchor] = link.target.split("#", 2) as [string, string | undefined];
      const file = path === "" ? page.name : resolve(page.name, path);
      if (!exists(`${ROOT}${file}`)) {
        broken.push(`${where(link)}: ${link.target}: no file ${file}`);
        continue;
      }
      if (anchor === undefined) continue;
      const target = PAGES.get(file) ?? (file.endsWith(".md") ? readPage(file) : undefined);
      if (!target) {
        broken.push(`${where(link)}: ${link.target}: an anchor into a file that is not Markdown`);
      } else if (!target.slugs.has(anchor)) {
        broken.push(`${where(link)}: ${link.target}: ${file} has no heading #${anchor}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("docs: the README stays a front page (at most ~250 lines) and links the architecture page near the top", () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`).split("\n");
  assert.ok(readme.length <= 260, `README.md has ${readme.length} lines`);
  const top = readme.slice(0, 30).join("\n");
  assert.match(top, /\]\(docs\/architecture\.md\)/);
});

const COMMAND_LANGS = new Set(["sh", "bash", "shell", "console", "json", "ts", "js"]);

/** A line that starts a `weir` command (not a benchmark's output row naming weir). */
const WEIR_COMMAND = /^weir (?:[a-z][a-z0-9-]*|--[a-z][a-z-]*)(?:\s|$)/;

/** `weir ...` command lines of a block, `\` continuations and indented lines joined. */
function weirLines(block: Block): string[] {
  const out: string[] = [];
  let current: string | undefined;
  for (const raw of block.text.split("\n")) {
    const line = raw.replace(/\s+#\s.*$/, "");
    if (current !== undefined && (/^\s/.test(raw) || current.endsWith("\\"))) {
      current = current.replace(/\\$/, "") + " " + line.trim();
      continue;
    }
    if (current !== undefined) out.push(current);
    current = WEIR_COMMAND.test(line) ? line.trim() : undefined;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** A block that shows commands or a program, so a check must say how it is exercised. */
function isCommandBlock(block: Block): boolean {
  return COMMAND_LANGS.has(block.lang) ||
    (block.lang === "text" && weirLines(block).length > 0);
}

/** A block made only of `weir` command lines (a synopsis): checked against `weir help`. */
function onlyWeirLines(block: Block): boolean {
  return block.text.split("\n").every((l) =>
    l.trim() === "" || /^\s/.test(l) || WEIR_COMMAND.test(l)
  ) &&
    weirLines(block).length > 0;
}

Deno.test("docs: every command or program example is run here or names the test that runs it", () => {
  const problems: string[] = [];
  for (const block of BLOCKS) {
    const check = block.check;
    if (block.lang === "json") {
      try {
        JSON.parse(block.text);
      } catch (error) {
        problems.push(`${where(block)}: not JSON: ${(error as Error).message}`);
      }
    }
    if (block.lang === "kdl") {
      if (check && !/^lint-in \S+$/.test(check)) {
        problems.push(`${where(block)}: a kdl block takes no check, or "lint-in FILE"`);
      }
      continue;
    }
    if (!check) {
      if (isCommandBlock(block) && !onlyWeirLines(block)) {
        problems.push(
          `${where(block)}: a ${block.lang} example with no "<!-- docs-check: ... -->" line`,
        );
      }
      continue;
    }
    const [kind, ...rest] = check.split(" -- ")[0].trim().split(/\s+/);
    const reason = check.split(" -- ")[1]?.trim();
    if (kind === "tested-by") {
      if (rest.length === 0) problems.push(`${where(block)}: tested-by names no test`);
      for (const file of rest) {
        if (!/_test\.ts$/.test(file) || !exists(`${ROOT}${file}`)) {
          problems.push(`${where(block)}: tested-by ${file}: no such test file`);
        }
      }
    } else if (kind === "not-run") {
      if (!reason) problems.push(`${where(block)}: not-run needs "-- the reason"`);
    } else if (kind !== "run") {
      problems.push(`${where(block)}: unknown check "${check}"`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(BLOCKS.some((b) => b.check === "run"), "at least one example is run as written");
});

Deno.test("docs: every guardfile example lints clean with weir lint", async () => {
  const kdl = BLOCKS.filter((b) => b.lang === "kdl");
  assert.ok(kdl.length >= 8, `found ${kdl.length} kdl blocks`);
  const files = new Map<string, Block>();
  for (const block of kdl) {
    let text = block.text;
    const host = block.check?.replace(/^lint-in /, "");
    if (host) {
      const hostText = await Deno.readTextFile(`${ROOT}${host}`);
      const marker = hostText.split("\n").find((l) => l.includes("docs-check: block"));
      assert.ok(marker, `${host}: no "docs-check: block" line`);
      text = hostText.replace(marker, block.text);
    }
    files.set(await tempGuardfile(text), block);
  }
  // A rate-limit store's URL variable is read by lint (never connected to).
  const lint = await runCli(["lint", ...files.keys()], {
    env: { REDIS_URL: "redis://127.0.0.1:6379" },
  });
  let report = lint.stderr;
  for (const [file, block] of files) report = report.replaceAll(file, where(block));
  assert.equal(lint.code, 0, report);
});

/** `weir help CMD` (or `weir help`) text, once per command. */
const helpTexts = new Map<string, Promise<string>>();
function helpOf(command: string): Promise<string> {
  let text = helpTexts.get(command);
  if (!text) {
    text = runCli(command === "" ? ["help"] : ["help", command]).then((r) => {
      assert.equal(r.code, 0, `weir help ${command}: ${r.stderr}`);
      return r.stdout;
    });
    helpTexts.set(command, text);
  }
  return text;
}

Deno.test("docs: every weir command line names a command and flags that weir help knows", async () => {
  const problems: string[] = [];
  let count = 0;
  for (const block of BLOCKS) {
    if (!["sh", "bash", "shell", "console", "text"].includes(block.lang)) continue;
    for (const line of weirLines(block)) {
      count++;
      const words = line.split(/\s+/);
      const command = /^[a-z][a-z0-9-]*$/.test(words[1] ?? "") && words[1] !== "help"
        ? words[1]
        : "";
      const help = await helpOf(command);
      const listed = new RegExp(`^\\s*weir ${command}(?:\\s|$)`, "m");
      if (command !== "" && !listed.test(await helpOf(""))) {
        problems.push(`${where(block)}: "weir ${command}" is not a command weir help lists`);
      }
      // Flags after " -- " belong to the upstream command weir starts.
      const own = line.split(" -- ")[0];
      for (const flag of own.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) {
        if (!new RegExp(`(?<![\\w-])${flag[0]}(?![\\w-])`).test(help)) {
          problems.push(`${where(block)}: ${flag[0]} is not in "weir help ${command}"`);
        }
      }
    }
  }
  assert.ok(count >= 10, `found ${count} weir command lines`);
  assert.deepEqual(problems, []);
});

Deno.test("docs: the examples marked run exit 0 when run as written", async () => {
  const runs = BLOCKS.filter((b) => b.check === "run");
  const dir = await Deno.makeTempDir({ prefix: "weir-docs-run-" });
  try {
    for (const block of runs) {
      const script = block.text
        .replace(/^weir\s/gm, `deno run --quiet -A --config ${CONFIG} ${CLI} `)
        .replace(/\bnpx -y (\S+)/g, "deno run --quiet -A npm:$1");
      const out = await new Deno.Command("bash", {
        args: ["-euo", "pipefail", "-c", script],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const text = new TextDecoder();
      assert.equal(
        out.code,
        0,
        `${where(block)} exited ${out.code}:\n${text.decode(out.stdout)}${text.decode(out.stderr)}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The README's guardfile (its first kdl block), the one docs/cli.md's examples serve. */
function readmeGuardfile(): string {
  const block = BLOCKS.find((b) => b.page === "README.md" && b.lang === "kdl");
  assert.ok(block, "README.md shows a guardfile");
  return block.text;
}

Deno.test("docs/cli.md: the curl tools/call example answers credential_missing from weir serve of the README guardfile", async () => {
  const block = BLOCKS.find((b) => b.page === "docs/cli.md" && /^curl -s /.test(b.text));
  assert.ok(block, "docs/cli.md shows the curl example");
  const file = await tempGuardfile(readmeGuardfile());
  const served = await serveHttp(file, { env: { FORGEJO_TOKEN: "" } });
  try {
    const script = block.text.replaceAll("http://127.0.0.1:8080", served.url);
    assert.notEqual(script, block.text, "the example names http://127.0.0.1:8080");
    const out = await new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", script],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const answer = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(answer.id, 1);
    assert.equal(answer.result.isError, true);
    assert.match(answer.result.content[0].text, /^credential_missing: .*FORGEJO_TOKEN/);
  } finally {
    await served.stop();
  }
});

Deno.test("docs/cli.md: the stdio client entry starts weir and serves the README guardfile's tools", async () => {
  const block = BLOCKS.find((b) => b.page === "docs/cli.md" && b.lang === "json");
  assert.ok(block, "docs/cli.md shows a client entry");
  const entry = JSON.parse(block.text) as { command: string; args: string[]; env: object };
  const file = await tempGuardfile(readmeGuardfile());
  const args = entry.args.map((a) =>
    a.replace("/path/to/weir/", ROOT).replace("/path/to/forgejo.mcp.kdl", file)
  );
  assert.deepEqual(args.slice(0, 2), ["run", "-A"]);
  const client = new Client({ name: "docs-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: entry.command === "deno" ? Deno.execPath() : entry.command,
      args: ["run", "--quiet", "--config", CONFIG, ...args.slice(1)],
      env: { ...Deno.env.toObject(), ...entry.env as Record<string, string> },
      cwd: ROOT,
      stderr: "pipe",
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(names, ["close_issue", "delete_issue", "get_issue", "weir_info"]);
  } finally {
    await client.close();
  }
});

/**
 * docs/spec-mode.md "Confirming by hand": the demo guardfile with the confirm
 * line the page names, in front of the demo's ticket API, in a temp directory.
 */
async function confirmSetup() {
  const page = Deno.readTextFileSync(`${ROOT}docs/spec-mode.md`);
  const line = /`(confirm "close_ticket" message="[^"]*")`/.exec(page)?.[1];
  assert.ok(line, "docs/spec-mode.md names the confirm line it adds");
  const dir = await Deno.makeTempDir({ prefix: "weir-docs-confirm-" });
  const demo = await Deno.readTextFile(`${ROOT}guardfiles/demo.mcp.kdl`);
  await Deno.writeTextFile(`${dir}/confirm.mcp.kdl`, `${demo}\n${line}\n`);
  const token = "a-long-enough-token";
  const upstream = await startDemoUpstream(token);
  const env = { WEIR_DEMO_BASE_URL: upstream.url, WEIR_DEMO_TOKEN: token };
  const blocks = BLOCKS.filter((b) =>
    b.page === "docs/spec-mode.md" && b.lang === "sh" && /close_ticket/.test(b.text)
  );
  assert.equal(blocks.length, 2, "one block per revision");
  const closes = () => upstream.requests.filter((r) => r.method === "PATCH").length;
  return { dir, env, upstream, blocks, closes };
}

async function bash(script: string, cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", script],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(90_000),
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("docs/spec-mode.md: the 2026-07-28 confirmation by curl runs the call once", async () => {
  const { dir, env, upstream, blocks, closes } = await confirmSetup();
  const served = await serveHttp(`${dir}/confirm.mcp.kdl`, { env });
  try {
    const script = blocks[0].text.replaceAll("http://127.0.0.1:8080", served.url);
    assert.notEqual(script, blocks[0].text, "the example names http://127.0.0.1:8080");
    const out = await bash(script, dir, env);
    assert.equal(out.code, 0, out.stderr);
    const [first, retry] = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(first.result.resultType, "input_required");
    assert.equal(first.result.inputRequests["weir/confirm"].method, "elicitation/create");
    assert.equal(typeof first.result.requestState, "string");
    assert.equal(retry.result.resultType, "complete");
    assert.equal(retry.result.structuredContent.result.status, "closed");
    assert.equal(closes(), 1, "the upstream saw the call once");
  } finally {
    await served.stop();
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/spec-mode.md: the 2025-11-25 confirmation over stdio runs the call once", async () => {
  const { dir, env, upstream, blocks, closes } = await confirmSetup();
  try {
    const { command, args } = weirCommand();
    const script = blocks[1].text.replace(
      /\bweir serve /,
      `${[command, ...args].map((a) => `'${a}'`).join(" ")} serve `,
    );
    assert.notEqual(script, blocks[1].text, "the example starts weir serve");
    const out = await bash(script, dir, { ...env, PATH: Deno.env.get("PATH") ?? "" });
    assert.equal(out.code, 0, out.stderr);
    const answer = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
    assert.equal(answer.id, 2);
    assert.equal(answer.result.structuredContent.result.status, "closed");
    assert.equal(closes(), 1, "the upstream saw the call once");
  } finally {
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/operating.md: the HAProxy health check is the one the replica tests run", () => {
  const block = BLOCKS.find((b) => b.page === "docs/operating.md" && b.lang === "haproxy");
  assert.ok(block, "docs/operating.md shows the HAProxy health check");
  const lines = block.text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  assert.deepEqual(lines, [...HEALTH_CHECK]);
  assert.ok(lines.some((l) => /^timeout check \d/.test(l)), "a check has its own read timeout");
});
