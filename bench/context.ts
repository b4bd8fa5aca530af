/**
 * What weir's tool surface costs a model, in tokens, against a baseline in the
 * same run:
 *
 * - weir's nine example guardfiles, each served by the shipped CLI
 *   (`weir serve FILE --stdio`, default flags) and listed as a client lists
 *   them (`initialize`, every page of `tools/list`), against the same examples
 *   served by the pinned revision {@link BASELINE_REV} (taken with `git archive`
 *   into a temporary folder and run from there; when there is no git history,
 *   the figure stored below with its provenance);
 * - the seven GitHub issue operations of `guardfiles/github-issues.mcp.kdl`
 *   against the official GitHub MCP server's definitions of the same operations
 *   (`bench/servers/github_official.ts`: npm `@modelcontextprotocol/server-github`
 *   2025.4.8), side by side.
 *
 * Sizes are counted by src/surface/size.ts, the count `weir lint` prints:
 * o200k tokens of each tool's compact JSON. `--profile NAME` also serves the
 * examples under that schema profile (repeatable). `--against REV` (repeatable)
 * also serves this tree's nine examples with revision REV's `weir`
 * (bench/against.ts) in the same run and prints, per example and tool by
 * tool, this tree's tokens against REV's, with the goal of issue 35: no tool
 * more than 10% larger.
 *
 * Goals (issue 23): tokens per tool over the examples at most 50% of the
 * baseline's; for the GitHub issue operations, no more tokens per tool than the
 * official server's.
 *
 *     deno task bench:context [--profile gemini] [--profile openai-strict] [--against main]
 *
 * @module
 */
import { measureSurface, type SurfaceSize, TOKENIZER } from "../src/surface/size.ts";
import type { JsonObject } from "../src/mcp/jsonrpc.ts";
import { benchArgs, killAll, killAllOnInterrupt, scratchDir, track } from "./common.ts";
import { ratio as times, ROOT, type Weir, weirArgs, weirsUnderTest } from "./against.ts";

/** The revision whose surface is the baseline: main when issue 23 began. */
export const BASELINE_REV = "e1a5cc4";

/**
 * The baseline measured with this script's count, for a checkout without git
 * history: 54 tools, 15,828 tokens (293.1 per tool) over the nine examples at
 * e1a5cc4, measured 2026-12-01.
 */
const STORED_BASELINE = { tools: 54, tokens: 15828, rev: BASELINE_REV, date: "2026-12-01" };

const EXAMPLES = [
  "demo.mcp.kdl",
  "forgejo-issues.mcp.kdl",
  "github-contents.mcp.kdl",
  "github-issues.mcp.kdl",
  "open-meteo.mcp.kdl",
  "plausible-stats.mcp.kdl",
  "prometheus.mcp.kdl",
  "s3-assets.mcp.kdl",
  "ssm-forgejo-token.mcp.kdl",
];

/** weir's seven issue operations and the official tool doing each. */
const GITHUB_OPERATIONS: [weir: string, official: string, what: string][] = [
  ["get_issue", "get_issue", "read one issue"],
  ["list_issue", "list_issues", "list a repository's issues"],
  ["search_issue", "search_issues", "search issues"],
  ["create_issue", "create_issue", "file an issue"],
  ["comment_issue", "add_issue_comment", "comment on an issue"],
  ["add_label", "update_issue", "add labels"],
  ["close_issue", "update_issue", "close an issue"],
];

const root = new URL("..", import.meta.url).pathname;

/** A stdio MCP exchange: `initialize`, then every page of `tools/list`. */
async function listOverStdio(
  args: string[],
  cwd: string,
): Promise<{ tools: JsonObject[]; instructions?: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  track(child);
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const errors = new Response(child.stderr).text();
  const deadline = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const answer = async (id: number): Promise<JsonObject> => {
    while (true) {
      const cut = buffered.indexOf("\n");
      if (cut >= 0) {
        const line = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 1);
        const message = JSON.parse(line);
        if (message.id !== id) continue;
        if (!message.result) throw new Error(`${args.join(" ")}: ${line}`);
        return message.result;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`${args.join(" ")} ended early: ${(await errors).slice(-2000)}`);
      buffered += value;
    }
  };
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "weir-bench-context", version: "1" },
      },
    });
    const init = await answer(1);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const tools: JsonObject[] = [];
    let cursor: string | undefined;
    let id = 2;
    do {
      await send({
        jsonrpc: "2.0",
        id,
        method: "tools/list",
        params: cursor === undefined ? {} : { cursor },
      });
      const page = await answer(id++);
      tools.push(...page.tools as JsonObject[]);
      cursor = page.nextCursor as string | undefined;
    } while (cursor !== undefined);
    const instructions = typeof init.instructions === "string" ? init.instructions : undefined;
    return { tools, instructions };
  } finally {
    clearTimeout(deadline);
    await writer.close().catch(() => {});
    await lines.cancel().catch(() => {});
    await child.status;
  }
}

/** Serve each example with the CLI in `dir` (`--schema-profile`, if given) and count it. */
async function measureExamples(
  dir: string,
  profile?: string,
): Promise<Map<string, SurfaceSize>> {
  const out = new Map<string, SurfaceSize>();
  for (const example of EXAMPLES) {
    const args = ["run", "--quiet", "-A", "cli.ts", "serve", `guardfiles/${example}`, "--stdio"];
    if (profile) args.push("--schema-profile", profile);
    out.set(example, await measureSurface(await listOverStdio(args, dir)));
  }
  return out;
}

/** This tree's examples served by another revision's `weir` (`--against`). */
async function measureWith(weir: Weir): Promise<Map<string, SurfaceSize>> {
  const out = new Map<string, SurfaceSize>();
  for (const example of EXAMPLES) {
    const args = [
      ...weirArgs(weir, ["-A", "--quiet"]),
      "serve",
      `guardfiles/${example}`,
      "--stdio",
    ];
    out.set(example, await measureSurface(await listOverStdio(args, ROOT)));
  }
  return out;
}

/**
 * This tree against each `--against` revision: tokens per example and the
 * largest growth of one tool; goal (issue 35): no tool over 10% larger.
 */
async function compareRevisions(
  now: Map<string, SurfaceSize>,
  revs: string[],
): Promise<boolean> {
  if (revs.length === 0) return true;
  console.log("\nagainst other revisions (this tree's nine examples, served by each):");
  const weirs = (await weirsUnderTest(revs)).slice(1);
  let ok = true;
  for (const weir of weirs) {
    const then = await measureWith(weir);
    console.log(`example                      tokens  ${weir.label.padEnd(13)} ratio`);
    let growth = { ratio: 0, name: "", example: "" };
    for (const example of EXAMPLES) {
      const n = now.get(example)!;
      const b = then.get(example)!;
      console.log(
        `${example.padEnd(28)} ${pad(n.tokens, 6)}  ${pad(b.tokens, 13)} ${
          pad(times(n.tokens, b.tokens), 6)
        }`,
      );
      const before = new Map(b.perTool.map((t) => [t.name, t.tokens]));
      for (const t of n.perTool) {
        const was = before.get(t.name);
        if (was !== undefined && t.tokens / was > growth.ratio) {
          growth = { ratio: t.tokens / was, name: t.name, example };
        }
      }
    }
    const total = sum(now.values());
    const base = sum(then.values());
    const within = growth.ratio <= 1.1;
    ok &&= within;
    console.log(
      `all nine: ${fixed(perTool(total))} tokens per tool against ${fixed(perTool(base))} ` +
        `(${times(perTool(total), perTool(base))}); largest growth of one tool: ${growth.name} ` +
        `(${growth.example}) ${times(growth.ratio, 1)}; goal <= 1.10x per tool  ${verdict(within)}`,
    );
  }
  return ok;
}

/** The baseline revision's examples, or `undefined` when git cannot give it. */
async function measureBaseline(): Promise<Map<string, SurfaceSize> | undefined> {
  const dir = await scratchDir("weir-baseline-");
  try {
    const archive = await new Deno.Command("git", {
      args: ["-C", root, "archive", "--format=tar", BASELINE_REV],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => undefined);
    if (!archive?.success) return undefined;
    const tar = new Deno.Command("tar", { args: ["-x", "-C", dir], stdin: "piped" }).spawn();
    const writer = tar.stdin.getWriter();
    await writer.write(archive.stdout);
    await writer.close();
    if (!(await tar.status).success) return undefined;
    return await measureExamples(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function sum(sizes: Iterable<SurfaceSize>): { tools: number; tokens: number } {
  let tools = 0;
  let tokens = 0;
  for (const s of sizes) {
    tools += s.tools;
    tokens += s.tokens;
  }
  return { tools, tokens };
}

const perTool = (t: { tools: number; tokens: number }) => t.tokens / t.tools;
const fixed = (n: number, digits = 1) => n.toFixed(digits);
const pad = (s: string | number, n: number) => String(s).padStart(n);
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");

async function main(): Promise<number> {
  const { values } = benchArgs("usage: see the comment at the top of bench/context.ts", {
    args: Deno.args,
    options: {
      profile: { type: "string", multiple: true, default: [] },
      against: { type: "string", multiple: true, default: [] },
    },
  });
  killAllOnInterrupt();
  console.log(`# weir bench: context (tokens of tools/list, ${TOKENIZER})\n`);

  const now = await measureExamples(root);
  const base = await measureBaseline();
  const baseTotal = base ? sum(base.values()) : STORED_BASELINE;
  const baseWhere = base
    ? `revision ${BASELINE_REV} (git archive, measured in this run)`
    : `revision ${BASELINE_REV}, stored figure of ${STORED_BASELINE.date} (no git history here)`;

  console.log(`baseline: ${baseWhere}`);
  console.log(
    "example                      tools  tokens  per tool | baseline tokens  per tool  ratio",
  );
  for (const example of EXAMPLES) {
    const n = now.get(example)!;
    const b = base?.get(example);
    console.log(
      `${example.padEnd(28)} ${pad(n.tools, 5)} ${pad(n.tokens, 7)} ${
        pad(fixed(n.tokensPerTool), 9)
      } |` +
        (b
          ? ` ${pad(b.tokens, 15)} ${pad(fixed(b.tokensPerTool), 9)} ${
            pad(fixed(n.tokens / b.tokens, 2), 6)
          }`
          : ""),
    );
  }
  const total = sum(now.values());
  const ratio = perTool(total) / perTool(baseTotal);
  console.log(
    `${"all nine".padEnd(28)} ${pad(total.tools, 5)} ${pad(total.tokens, 7)} ${
      pad(fixed(perTool(total)), 9)
    } | ${pad(baseTotal.tokens, 15)} ${pad(fixed(perTool(baseTotal)), 9)} ${
      pad(fixed(ratio, 2), 6)
    }`,
  );
  const instructions = now.get("github-issues.mcp.kdl")!.instructionsTokens;
  console.log(
    `instructions (once per conversation, not per tool): ${instructions} tokens (github-issues)`,
  );
  const largest = [...now.entries()].flatMap(([example, s]) =>
    s.perTool.map((t) => ({ ...t, example }))
  ).sort((a, b) => b.tokens - a.tokens).slice(0, 5);
  console.log(
    `largest tools: ${largest.map((t) => `${t.name} (${t.example}) ${t.tokens}`).join(", ")}`,
  );

  // The official server, side by side.
  const official = await listOverStdio(
    ["run", "--quiet", "-A", "bench/servers/github_official.ts"],
    root,
  );
  const officialSize = await measureSurface(official);
  const officialTokens = new Map(officialSize.perTool.map((t) => [t.name, t.tokens]));
  const weirGithub = now.get("github-issues.mcp.kdl")!;
  const weirTokens = new Map(weirGithub.perTool.map((t) => [t.name, t.tokens]));
  console.log(
    "\nGitHub issue operations: weir guardfiles/github-issues.mcp.kdl against the official " +
      "definitions\n(npm @modelcontextprotocol/server-github 2025.4.8, the newest official " +
      "GitHub MCP definitions on npm)",
  );
  console.log("operation                  weir tool        tokens | official tool       tokens");
  for (const [w, o, what] of GITHUB_OPERATIONS) {
    const wt = weirTokens.get(w);
    const ot = officialTokens.get(o);
    if (wt === undefined || ot === undefined) {
      throw new Error(`missing tool: weir ${w} (${wt}) or official ${o} (${ot})`);
    }
    console.log(`${what.padEnd(26)} ${w.padEnd(16)} ${pad(wt, 6)} | ${o.padEnd(19)} ${pad(ot, 6)}`);
  }
  const weirOps = GITHUB_OPERATIONS.map(([w]) => weirTokens.get(w)!);
  const officialDistinct = [...new Set(GITHUB_OPERATIONS.map(([, o]) => o))].map((o) =>
    officialTokens.get(o)!
  );
  const weirMean = weirOps.reduce((a, b) => a + b, 0) / weirOps.length;
  const officialMean = officialDistinct.reduce((a, b) => a + b, 0) / officialDistinct.length;
  console.log(
    `per tool: weir ${fixed(weirMean)} over its 7 tools; official ${fixed(officialMean)} over ` +
      `its ${officialDistinct.length} tools (update_issue does both labels and close)`,
  );
  console.log(
    `whole list: weir ${weirGithub.tools} tools ${weirGithub.tokens} tokens; official ` +
      `${officialSize.tools} tools ${officialSize.tokens} tokens`,
  );

  for (const profile of values.profile as string[]) {
    const sized = sum((await measureExamples(root, profile)).values());
    console.log(
      `\nprofile ${profile}: ${sized.tools} tools, ${sized.tokens} tokens, ` +
        `${fixed(perTool(sized))} per tool (${
          fixed(perTool(sized) / perTool(baseTotal), 2)
        } of baseline)`,
    );
  }

  const goalAgainst = await compareRevisions(now, values.against as string[]);

  const goalExamples = ratio <= 0.5;
  const goalGithub = weirMean <= officialMean;
  console.log("\ngoals");
  console.log(
    `tokens per tool over the nine examples <= 50% of ${BASELINE_REV}'s: ` +
      `${fixed(perTool(total))} / ${fixed(perTool(baseTotal))} = ${fixed(ratio * 100)}%  ` +
      verdict(goalExamples),
  );
  console.log(
    `GitHub issue operations, tokens per tool <= the official server's: ` +
      `${fixed(weirMean)} vs ${fixed(officialMean)}  ${verdict(goalGithub)}`,
  );
  return goalExamples && goalGithub && goalAgainst ? 0 : 1;
}

try {
  Deno.exit(await main());
} catch (error) {
  killAll();
  console.error(`\nABORTED: ${(error as Error).message}`);
  Deno.exit(1);
}
