/**
 * The compiled binary's size and cold start, as Markdown for the release notes
 * (issue 30: "for the compiled binary in the release workflow, its size and
 * cold start printed in the release notes"). The release workflow runs it on
 * the Linux x86-64 binary it built and appends the output to the notes:
 *
 *   deno run --allow-all scripts/binary_figures.ts dist/weir \
 *     --archive dist/weir-x86_64-unknown-linux-gnu.tar.gz [--rounds 15] > figures.md
 *
 * Cold start: `weir serve guardfiles/demo.mcp.kdl --stdio`, spawn to its
 * first `tools/list` answer, against a bare Deno script answering the same
 * requests (`bench/servers/bare_stdio.ts`, run with `deno run --no-config`),
 * alternating, the first round discarded, medians (bench/first_list.ts, as
 * `deno task bench:cold` measures); the binary's resident set then. Goals
 * (issue 30): at most 2.5x bare Deno, at most 50 MiB; the notes say met or not.
 *
 * Exit codes: 0 printed (goals met or not), 1 a start failed, 2 usage errors.
 *
 * @module
 */
import { firstList } from "../bench/first_list.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const USAGE = "usage: binary_figures.ts BINARY [--archive FILE] [--rounds N]";
/** Issue 30's goals for a stdio server's start. */
export const GOALS = { ratio: 2.5, rssMiB: 50 } as const;

/** What was measured, for {@link figuresText}. */
export interface Figures {
  /** The binary's size in bytes, and its release archive's when given. */
  bytes: number;
  archive?: { name: string; bytes: number };
  /** Medians: the binary's and bare Deno's spawn to the first tools/list, ms; the binary's RSS, MiB. */
  binaryMs: number;
  bareMs: number;
  rssMiB: number;
  rounds: number;
  /** Where it ran, e.g. `x86_64-unknown-linux-gnu`. */
  target: string;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/**
 * The release notes' section for the figures.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { figuresText } from "./binary_figures.ts";
 * const text = figuresText({
 *   bytes: 80 * 1024 * 1024, binaryMs: 50, bareMs: 25, rssMiB: 44, rounds: 15,
 *   target: "x86_64-unknown-linux-gnu",
 * });
 * assert.match(text, /2\.00x bare Deno \(goal 2\.5x: met\)/);
 * ```
 */
export function figuresText(f: Figures): string {
  const ratio = f.binaryMs / f.bareMs;
  const met = (ok: boolean) => ok ? "met" : "not met";
  return `## Binary size and cold start

The \`${f.target}\` binary, measured by the release workflow (median of ${f.rounds} starts,
alternating with a bare Deno script; \`deno task bench:cold\` measures the same from a checkout):

- size: ${mib(f.bytes)}${f.archive ? ` (\`${f.archive.name}\`: ${mib(f.archive.bytes)})` : ""}
- \`weir serve guardfiles/demo.mcp.kdl --stdio\`, spawn to the first \`tools/list\`: ${
    f.binaryMs.toFixed(1)
  } ms, ${ratio.toFixed(2)}x bare Deno (goal ${GOALS.ratio}x: ${met(ratio <= GOALS.ratio)})
- resident set then: ${f.rssMiB.toFixed(1)} MiB (goal ${GOALS.rssMiB} MiB: ${
    met(f.rssMiB <= GOALS.rssMiB)
  })
`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(args: string[]): Promise<number> {
  let binary: string | undefined;
  let archive: string | undefined;
  let rounds = 15;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--archive" && args[i + 1]) archive = args[++i];
    else if (args[i] === "--rounds" && /^[1-9]\d*$/.test(args[i + 1] ?? "")) rounds = +args[++i];
    else if (!args[i].startsWith("-") && binary === undefined) binary = args[i];
    else {
      console.error(`binary_figures: unexpected ${args[i]}\n${USAGE}`);
      return 2;
    }
  }
  if (binary === undefined) {
    console.error(`binary_figures: give the binary\n${USAGE}`);
    return 2;
  }
  const guardfile = `${ROOT}guardfiles/demo.mcp.kdl`;
  const bare = ["run", "--no-config", "--quiet", `${ROOT}bench/servers/bare_stdio.ts`];
  const times = { binary: [] as number[], bare: [] as number[], rss: [] as number[] };
  try {
    for (let round = 0; round <= rounds; round++) {
      const own = await firstList(binary, ["serve", guardfile, "--stdio"], "list_ticket");
      const base = await firstList(Deno.execPath(), bare, "echo");
      if (round === 0) continue; // fills the caches
      times.binary.push(own.ms);
      times.rss.push(own.rssMiB);
      times.bare.push(base.ms);
    }
  } catch (error) {
    console.error(`binary_figures: ${(error as Error).message}`);
    return 1;
  }
  console.log(figuresText({
    bytes: (await Deno.stat(binary)).size,
    archive: archive
      ? { name: archive.split("/").at(-1)!, bytes: (await Deno.stat(archive)).size }
      : undefined,
    binaryMs: median(times.binary),
    bareMs: median(times.bare),
    rssMiB: median(times.rss),
    rounds,
    target: Deno.build.target,
  }));
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
