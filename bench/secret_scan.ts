/**
 * The cost of the secrets-in-arguments search (src/guard/secret_arguments.ts)
 * on hostile arguments of about 1 MiB (the default body cap), against
 * `JSON.parse` of the same body, which every call pays before it (the
 * baseline, same run). Shapes: prose; near misses of the secret raw,
 * percent-encoded twice, JSON-escaped, base64 with a line break after every
 * character (raw and JSON-escaped); many keys; a long array; deep nesting.
 * CPU time of this process (`process.cpuUsage`), minimum and median of 7.
 *
 * Usage: `deno run --allow-sys bench/secret_scan.ts` (the load average).
 *
 * @module
 */
import process from "node:process";
import { Redactor } from "../src/guard/secrets.ts";
import { secretArgument } from "../src/guard/secret_arguments.ts";

const MiB = 1 << 20;
const SECRET = "tk-secret-9f8e7d6c5b4a";
const b64 = btoa(SECRET);
const mid = b64.length >> 1;
const nearB64 = b64.slice(0, mid) + (b64[mid] === "A" ? "B" : "A") + b64.slice(mid + 1);
const fill = (unit: string) => unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);

const SHAPES: Record<string, () => unknown> = {
  "prose": () => ({ x: fill("The quick brown fox jumps over the lazy dog 0123456789. ") }),
  "near miss, raw": () => ({ x: fill(SECRET.slice(0, -1) + " ") }),
  "near miss, %25XX": () => ({ x: fill("%2574%256b%252d%2573%2565%2563%2572%2565%2574%252d#") }),
  "near miss, \\u00XX": () => ({ x: fill("\\u0074\\u006B\\u002d\\u0073\\u0065\\u0063\\u0072#") }),
  "base64, LF each char": () => ({ x: fill(nearB64.split("").join("\n") + "\n") }),
  "base64, \\r\\n each": () => ({ x: fill(nearB64.split("").join("\\r\\n") + "\\r\\n") }),
  "40,000 keys": () =>
    Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`key-number-${i}`, `v-${i}`])),
  "70,000 items": () => ({ a: Array.from({ length: 70_000 }, (_, i) => `v${i}-abcdefgh`) }),
  "200 levels deep": () => {
    let deep: unknown = "filler-text-x";
    for (let i = 0; i < 200; i++) deep = { [`level-${i}`]: deep, o: Array(300).fill("filler-x") };
    return { d: deep };
  },
};

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Minimum and median CPU ms of `run`, 7 times. */
function measure(run: () => void): [number, number] {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = cpuMs();
    run();
    times.push(cpuMs() - t0);
  }
  times.sort((a, b) => a - b);
  return [times[0], times[3]];
}

const redactor = new Redactor();
redactor.add(SECRET);
console.log(`secrets-in-arguments search, Deno ${Deno.version.deno}; CPU ms, min / median of 7`);
console.log(
  `${"shape".padEnd(22)}${"MiB".padStart(6)}${"search".padStart(16)}${"JSON.parse".padStart(16)}` +
    "ratio".padStart(8),
);
for (const [name, make] of Object.entries(SHAPES)) {
  const args = make() as Record<string, unknown>;
  const body = JSON.stringify(args);
  if (secretArgument(redactor, args) !== undefined) throw new Error(`${name}: holds the secret`);
  const [searchMin, search] = measure(() => secretArgument(redactor, args));
  const [parseMin, parse] = measure(() => JSON.parse(body));
  console.log(
    `${name.padEnd(22)}${(body.length / MiB).toFixed(2).padStart(6)}` +
      `${`${searchMin.toFixed(1)} / ${search.toFixed(1)}`.padStart(16)}` +
      `${`${parseMin.toFixed(1)} / ${parse.toFixed(1)}`.padStart(16)}` +
      `${(search / parse).toFixed(2).padStart(7)}x`,
  );
}
console.log(`load average: ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
