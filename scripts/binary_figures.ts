/**
 * The compiled binary's size and cold start, as Markdown for the release notes
 * (issue 30: "for the compiled binary in the release workflow, its size and
 * cold start printed in the release notes"). The release workflow runs it on
 * the Linux x86-64 binary it ships, and on the same binary compiled with V8's
 * `--no-lazy` (compared, never shipped), and appends the output to the notes:
 *
 *   deno run --allow-all scripts/binary_figures.ts dist/weir \
 *     --archive dist/weir-x86_64-unknown-linux-gnu.tar.gz \
 *     [--compare OTHER_BINARY [--compare-label TEXT]] [--rounds N] > figures.md
 *
 * Cold start: `weir serve guardfiles/demo.mcp.kdl --stdio`, spawn to its
 * first `tools/list` answer, against a bare Deno script answering the same
 * requests (`bench/servers/bare_stdio.ts`, run with `deno run --no-config`),
 * alternating, the first round discarded, medians (bench/first_list.ts, as
 * `deno task bench:cold` measures); the binary's resident set then. Each
 * binary is timed twice a round:
 *
 * - warm: with a `TMPDIR` of its own, kept for all its warm starts, where the
 *   binary's runtime (denort) writes its code cache
 *   (`$TMPDIR/deno-compile-<name>.cache`) on its first run and reads it after;
 * - first start: with a new empty `TMPDIR`, removed after it, so no code cache
 *   exists: what a new pod (the chart's `/tmp` is an emptyDir) and the first
 *   run after an install see.
 *
 * Goals (issue 30), for the warm start: at most 2.5x bare Deno, at most
 * 50 MiB; the notes say met or not.
 *
 * Exit codes: 0 printed (goals met or not), 1 a start failed, 2 usage errors.
 *
 * @module
 */
import { firstList } from "../bench/first_list.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const USAGE = "usage: binary_figures.ts BINARY [--archive FILE] [--compare BINARY " +
  "[--compare-label TEXT]] [--rounds N]";
/** Issue 30's goals for a stdio server's start. */
export const GOALS = { ratio: 2.5, rssMiB: 50 } as const;

/** One binary's medians: spawn to the first tools/list, ms, and its resident set then, MiB. */
export interface Starts {
  /** With its code cache written by an earlier run. */
  warmMs: number;
  warmRssMiB: number;
  /** With no code cache (a new empty TMPDIR). */
  firstMs: number;
  firstRssMiB: number;
}

/** What was measured, for {@link figuresText}. */
export interface Figures {
  /** The shipped binary's size in bytes, and its release archive's when given. */
  bytes: number;
  archive?: { name: string; bytes: number };
  /** The shipped binary's starts. */
  binary: Starts;
  /** Bare Deno's spawn to the first tools/list, median, ms. */
  bareMs: number;
  /** A binary measured beside it in the same rounds (not shipped). */
  compare?: { label: string; bytes: number; starts: Starts };
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
 *   bytes: 80 * 1024 * 1024, bareMs: 25, rounds: 15, target: "x86_64-unknown-linux-gnu",
 *   binary: { warmMs: 50, warmRssMiB: 44, firstMs: 70, firstRssMiB: 46 },
 * });
 * assert.match(text, /50\.0 ms, 2\.00x bare Deno \(goal 2\.5x: met\)/);
 * assert.match(text, /no code cache yet.*: 70\.0 ms, 2\.80x bare Deno/);
 * ```
 */
export function figuresText(f: Figures): string {
  const ratio = (ms: number) => `${(ms / f.bareMs).toFixed(2)}x`;
  const met = (ok: boolean) => ok ? "met" : "not met";
  const { binary } = f;
  let text = `## Binary size and cold start

The \`${f.target}\` binary, measured by the release workflow (median of ${f.rounds} starts,
alternating with a bare Deno script; \`deno task bench:cold\` measures the same from a checkout):

- size: ${mib(f.bytes)}${f.archive ? ` (\`${f.archive.name}\`: ${mib(f.archive.bytes)})` : ""}
- \`weir serve guardfiles/demo.mcp.kdl --stdio\`, spawn to the first \`tools/list\`: ${
    binary.warmMs.toFixed(1)
  } ms, ${ratio(binary.warmMs)} bare Deno (goal ${GOALS.ratio}x: ${
    met(binary.warmMs / f.bareMs <= GOALS.ratio)
  })
- resident set then: ${binary.warmRssMiB.toFixed(1)} MiB (goal ${GOALS.rssMiB} MiB: ${
    met(binary.warmRssMiB <= GOALS.rssMiB)
  })
- first start (no code cache yet, as in a new pod or the first run after an install): ${
    binary.firstMs.toFixed(1)
  } ms, ${ratio(binary.firstMs)} bare Deno, ${binary.firstRssMiB.toFixed(1)} MiB
`;
  if (f.compare) {
    const c = f.compare;
    const row = (name: string, bytes: number, s: Starts) =>
      `| ${name} | ${mib(bytes)} | ${s.warmMs.toFixed(1)} ms, ${ratio(s.warmMs)} | ${
        s.firstMs.toFixed(1)
      } ms, ${ratio(s.firstMs)} | ${s.warmRssMiB.toFixed(1)} MiB |`;
    const less = (a: number, b: number) =>
      `${((1 - Math.min(a, b) / Math.max(a, b)) * 100).toFixed(0)}% less time`;
    const faster = (a: number, b: number) =>
      a === b
        ? "neither"
        : a < b
        ? `the shipped binary, ${less(a, b)}`
        : `the compared one (${c.label}), ${less(a, b)}`;
    text += `
The shipped binary is the first row. The second is built from the same sources only to be
measured in the same rounds, and is not released: ${c.label}.

| binary | size | warm start | first start | resident set (warm) |
| --- | --- | --- | --- | --- |
${row("shipped", f.bytes, binary)}
${row("compared", c.bytes, c.starts)}

Faster warm: ${faster(binary.warmMs, c.starts.warmMs)}. Faster at the first start: ${
      faster(binary.firstMs, c.starts.firstMs)
    }.
`;
  }
  return text;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Each start of one binary, warm and first, while the rounds run. */
class Timings {
  warm: number[] = [];
  warmRss: number[] = [];
  first: number[] = [];
  firstRss: number[] = [];
  medians(): Starts {
    return {
      warmMs: median(this.warm),
      warmRssMiB: median(this.warmRss),
      firstMs: median(this.first),
      firstRssMiB: median(this.firstRss),
    };
  }
}

async function main(args: string[]): Promise<number> {
  let binary: string | undefined;
  let archive: string | undefined;
  let compare: string | undefined;
  let label: string | undefined;
  let rounds = 15;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--archive" && args[i + 1]) archive = args[++i];
    else if (args[i] === "--compare" && args[i + 1]) compare = args[++i];
    else if (args[i] === "--compare-label" && args[i + 1]) label = args[++i];
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
  if (label !== undefined && compare === undefined) {
    console.error(`binary_figures: --compare-label needs --compare BINARY\n${USAGE}`);
    return 2;
  }
  const guardfile = `${ROOT}guardfiles/demo.mcp.kdl`;
  const serve = ["serve", guardfile, "--stdio"];
  const bare = ["run", "--no-config", "--quiet", `${ROOT}bench/servers/bare_stdio.ts`];
  const binaries = [binary, ...compare === undefined ? [] : [compare]];
  const timings = binaries.map(() => new Timings());
  const bareMs: number[] = [];
  const scratch = await Deno.makeTempDir({ prefix: "weir-figures-" });
  try {
    // Each binary's own TMPDIR for its warm starts: two binaries of one name share no cache file.
    const warmDirs = await Promise.all(
      binaries.map((_, i) => Deno.makeTempDir({ dir: scratch, prefix: `warm-${i}-` })),
    );
    for (let round = 0; round <= rounds; round++) {
      const base = await firstList(Deno.execPath(), bare, "echo");
      for (const [i, path] of binaries.entries()) {
        const warm = await firstList(path, serve, "list_ticket", { TMPDIR: warmDirs[i] });
        const empty = await Deno.makeTempDir({ dir: scratch, prefix: "first-" });
        const first = await firstList(path, serve, "list_ticket", { TMPDIR: empty });
        await Deno.remove(empty, { recursive: true });
        if (round === 0) continue; // fills the caches
        timings[i].warm.push(warm.ms);
        timings[i].warmRss.push(warm.rssMiB);
        timings[i].first.push(first.ms);
        timings[i].firstRss.push(first.rssMiB);
      }
      if (round > 0) bareMs.push(base.ms);
    }
  } catch (error) {
    console.error(`binary_figures: ${(error as Error).message}`);
    return 1;
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
  console.log(figuresText({
    bytes: (await Deno.stat(binary)).size,
    archive: archive
      ? { name: archive.split("/").at(-1)!, bytes: (await Deno.stat(archive)).size }
      : undefined,
    binary: timings[0].medians(),
    bareMs: median(bareMs),
    compare: compare === undefined ? undefined : {
      label: label ?? compare,
      bytes: (await Deno.stat(compare)).size,
      starts: timings[1].medians(),
    },
    rounds,
    target: Deno.build.target,
  }));
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
