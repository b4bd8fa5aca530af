/**
 * Cold start of the `weir` command line, against bare Deno, in one run:
 *
 * - `weir serve FILE --stdio`: spawn to the first correct `tools/list` answer
 *   (initialize and tools/list are written at spawn; the clock stops at the
 *   answer that lists the guardfile's tools);
 * - the same for a bare Deno script that answers both requests by hand
 *   (`bench/servers/bare_stdio.ts`, no imports): the baseline;
 * - `weir --version` and `weir help`: spawn to exit;
 * - where `weir serve`'s time goes, from the same spawns: Deno itself (an
 *   empty file, same config), the command line's module graph (`--version`,
 *   which Deno walks whole at start, every command's modules included),
 *   loading serve's own modules (`weir serve` of a missing file: everything
 *   is imported, it stops at the read), and the rest (reading, parsing and
 *   linting the guardfile, building the server, stdio, the answers);
 * - what each npm package of the serve path costs to import, alone, in a
 *   fresh process.
 *
 * Spawns alternate between the commands (so load on the machine hits both),
 * the first round is discarded (it fills Deno's caches), figures are medians.
 *
 *   deno task bench:cold [ROUNDS]        (default 15 rounds)
 *
 * @module
 */
import config from "../deno.json" with { type: "json" };

const ROOT = new URL("../", import.meta.url).pathname;
const ROUNDS = Number(Deno.args[0] ?? 15);
const GUARDFILE = `${ROOT}guardfiles/demo.mcp.kdl`;
const RUN = ["run", "--quiet", "--config", `${ROOT}deno.json`];
const WEIR = [...RUN, "--allow-net", "--allow-env", "--allow-read", `${ROOT}cli.ts`];

const REQUESTS = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "cold-start", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
].map((m) => JSON.stringify(m)).join("\n") + "\n";

/** Spawn, send initialize + tools/list, stop the clock at a tools/list answer naming `expect`. */
async function toFirstList(args: string[], expect: string): Promise<number> {
  const start = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(REQUESTS));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let elapsed = NaN;
  while (Number.isNaN(elapsed)) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += value;
    for (const line of buffered.split("\n").slice(0, -1)) {
      const message = JSON.parse(line);
      if (message.id === 2) {
        const names = (message.result?.tools ?? []).map((t: { name: string }) => t.name);
        if (!names.includes(expect)) throw new Error(`tools/list without ${expect}: ${line}`);
        elapsed = performance.now() - start;
      }
    }
    buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
  }
  await writer.close().catch(() => {});
  await reader.cancel().catch(() => {});
  await child.status;
  if (Number.isNaN(elapsed)) throw new Error(`${args.join(" ")}: no tools/list answer`);
  return elapsed;
}

async function toExit(args: string[], code = 0): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "null", stderr: "null" })
    .output();
  if (out.code !== code) throw new Error(`${args.join(" ")} exited ${out.code}, not ${code}`);
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const tmp = await Deno.makeTempDir();
const empty = `${tmp}/empty.ts`;
await Deno.writeTextFile(empty, "\n");
const MISSING = `${tmp}/missing.mcp.kdl`;

const cases: Record<string, () => Promise<number>> = {
  "bare Deno, stdio tools/list": () =>
    toFirstList([...RUN, `${ROOT}bench/servers/bare_stdio.ts`], "echo"),
  "weir serve --stdio, tools/list": () =>
    toFirstList([...WEIR, "serve", GUARDFILE, "--stdio"], "list_ticket"),
  "weir --version": () => toExit([...WEIR, "--version"]),
  "weir help": () => toExit([...WEIR, "help"]),
  "deno eval 0 (--no-config)": () => toExit(["eval", "--no-config", "0"]),
  "deno run of an empty file": () => toExit([...RUN, empty]),
  "weir serve of a missing file": () => toExit([...WEIR, "serve", MISSING, "--stdio"], 1),
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const t = await run();
    if (round > 0) times[name].push(t);
  }
}

// What each npm package the serve path may load costs to import, each in a fresh process.
const packages = Object.entries(config.imports as Record<string, string>)
  .filter(([name]) =>
    [
      "@bgotink/kdl",
      "@cfworker/json-schema",
      "@jmespath-community/jmespath",
      "ioredis",
      "postgres",
      "jose",
      "aws4fetch",
      "fast-xml-parser",
    ].includes(name)
  );
const importCost: [string, number][] = [];
try {
  for (const [name] of packages) {
    const file = `${tmp}/${name.replace(/\W/g, "_")}.ts`;
    await Deno.writeTextFile(file, `import ${JSON.stringify(name)};\n`);
    await toExit([...RUN, "-A", file]); // fills the caches
    const with_: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 9; i++) {
      with_.push(await toExit([...RUN, "-A", file]));
      without.push(await toExit([...RUN, "-A", empty]));
    }
    importCost.push([name, median(with_) - median(without)]);
  }
} finally {
  await Deno.remove(tmp, { recursive: true });
}

console.log(`cold start, median of ${ROUNDS} (Deno ${Deno.version.deno}, ${Deno.build.target})`);
for (const [name, xs] of Object.entries(times)) {
  console.log(`  ${name.padEnd(34)} ${median(xs).toFixed(1).padStart(7)} ms`);
}
const bare = median(times["bare Deno, stdio tools/list"]);
const serve = median(times["weir serve --stdio, tools/list"]);
const ratio = serve / bare;
console.log(
  `\n${ratio <= 1.5 ? "PASS" : "FAIL"}  weir serve / bare Deno, spawn to first tools/list  ` +
    `${ratio.toFixed(2)}x  (goal <= 1.5x)`,
);
const at = (name: string) => median(times[name]);
const parts: [string, number][] = [
  ["Deno itself (deno run of an empty file, same config)", at("deno run of an empty file")],
  [
    "the command line's module graph (weir --version, minus the above)",
    at("weir --version") - at("deno run of an empty file"),
  ],
  [
    "serve's modules (serve of a missing file, minus --version)",
    at("weir serve of a missing file") - at("weir --version"),
  ],
  [
    "read, parse and lint the guardfile, build the server, stdio, answer (the rest)",
    serve - at("weir serve of a missing file"),
  ],
];
console.log("\nwhere weir serve --stdio's time goes (differences of the medians above):");
for (const [name, ms] of parts) {
  console.log(`  ${name.padEnd(80)} ${ms.toFixed(1).padStart(6)} ms`);
}
console.log(
  "\nimport cost of each npm package weir may load (median of 9 fresh processes importing it, minus an empty one, interleaved; noisy on a busy machine):",
);
for (const [name, ms] of importCost) {
  console.log(`  ${name.padEnd(30)} ${ms.toFixed(1).padStart(7)} ms`);
}
