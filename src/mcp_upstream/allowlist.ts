/**
 * The tool allowlist of `serve-upstream` and `lint-upstream`: its shape rules,
 * the nearest-name hint for a missing tool, and the read-only name heuristic.
 * Pure: no I/O.
 *
 * @module
 */
import { READ_WORDS } from "../guardfile/reads.ts";

/** An allowlist the command line got wrong; the message says what to change. */
export class AllowlistError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AllowlistError";
  }
}

/**
 * Check `--tool` values: each trimmed, none empty, no duplicate (after the
 * trim), at least one.
 *
 * @param names the `--tool` values as given
 * @returns the trimmed names, in the order given
 * @throws {AllowlistError} naming the offending entry
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAllowlist } from "./allowlist.ts";
 * assert.equal(parseAllowlist([" echo "]).join(), "echo");
 * ```
 */
export function parseAllowlist(names: readonly string[]): string[] {
  if (names.length === 0) {
    throw new AllowlistError("the allowlist is empty: name each tool to serve with --tool NAME");
  }
  const seen = new Set<string>();
  return names.map((raw, i) => {
    const name = raw.trim();
    if (name === "") {
      throw new AllowlistError(`--tool #${i + 1} is empty: give the exact upstream tool name`);
    }
    if (seen.has(name)) throw new AllowlistError(`--tool ${JSON.stringify(name)} is given twice`);
    seen.add(name);
    return name;
  });
}

/**
 * Name segments that mark a mutation, as the reference's `lint-upstream
 * --read-only heuristic` lists them. A name matches on a whole segment only.
 */
export const MUTATION_SEGMENTS: ReadonlySet<string> = new Set([
  "add",
  "apply",
  "cancel",
  "create",
  "delete",
  "disable",
  "drop",
  "edit",
  "enable",
  "grant",
  "import",
  "insert",
  "patch",
  "publish",
  "purge",
  "put",
  "remove",
  "rename",
  "reset",
  "revoke",
  "send",
  "set",
  "update",
  "upsert",
  "write",
]);

/**
 * Split a tool name into lower-cased segments on `_ - . /`, space and
 * camelCase boundaries (`deleteAll` -> `delete`, `all`; `HTTPGet` -> `http`, `get`).
 */
export function nameSegments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[_\-./ ]+/)
    .filter((s) => s !== "")
    .map((s) => s.toLowerCase());
}

/**
 * The first mutation segment in a tool name, if any.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mutationSegment } from "./allowlist.ts";
 * assert.equal(mutationSegment("delete_all"), "delete");
 * assert.equal(mutationSegment("get_field_values"), undefined);
 * ```
 */
export function mutationSegment(name: string): string | undefined {
  return nameSegments(name).find((s) => MUTATION_SEGMENTS.has(s));
}

/**
 * Name segments that mark a read: the words the one definition of read
 * (src/guardfile/reads.ts `READ_WORDS`) takes for a read when they name an
 * operation. The heuristic passes a name only when it has one of these and no
 * {@link MUTATION_SEGMENTS} segment: a verb it does not know (`toggle`, `run`,
 * `sync`, `echo`) counts as a write, since guessing "read" would serve a
 * mutation as read-only. It reads names only; `--read-only strict` reads the
 * tool's `readOnlyHint`, as serving does.
 */
export const READ_SEGMENTS: ReadonlySet<string> = new Set(READ_WORDS);

/**
 * Why `--read-only heuristic` refuses a tool name, or `undefined` when the
 * name reads: it has a read segment ({@link READ_SEGMENTS}) and no mutation
 * segment. Refuses rather than guesses: a name with no known verb is refused.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOnlyNameProblem } from "./allowlist.ts";
 * assert.equal(readOnlyNameProblem("list_notes"), undefined);
 * assert.match(readOnlyNameProblem("toggle-logging") ?? "", /no read verb/);
 * ```
 */
export function readOnlyNameProblem(name: string): string | undefined {
  const fix = "if the tool only reads, check it with --read-only strict against the " +
    "upstream's readOnlyHint";
  const mutation = mutationSegment(name);
  if (mutation) return `the name looks like a mutation (segment "${mutation}"); ${fix}`;
  const segments = nameSegments(name);
  if (segments.some((s) => READ_SEGMENTS.has(s))) return undefined;
  return `the name has no read verb (${[...READ_SEGMENTS].join(", ")}), so the heuristic ` +
    `counts ${
      segments.length > 0 ? `"${segments[0]}"` : "it"
    } as a write rather than guess; ${fix}`;
}

/**
 * Up to `count` names from `candidates` closest to `name` (Levenshtein distance
 * on lower-cased names, ties alphabetical), for "did you mean" hints.
 */
export function nearestNames(name: string, candidates: readonly string[], count = 3): string[] {
  const target = name.toLowerCase();
  return candidates
    .map((c) => ({ c, d: editDistance(target, c.toLowerCase()) }))
    .sort((a, b) => a.d - b.d || (a.c < b.c ? -1 : a.c > b.c ? 1 : 0))
    .slice(0, count)
    .map((x) => x.c);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/**
 * Parse `--pin tool.arg=value` values. The tool is everything before the
 * first `.` that is followed by the argument name (tool names may contain
 * dots, so the longest allowlisted prefix wins); the value is everything after
 * the first `=`.
 *
 * @param specs the `--pin` values
 * @param allowlist the parsed allowlist: a pin on a tool not in it is refused
 * @returns tool -> argument -> value
 * @throws {AllowlistError} on an empty part, an unlisted tool or two different
 *   values for one argument
 */
export function parsePins(
  specs: readonly string[],
  allowlist: readonly string[],
): Map<string, Map<string, string>> {
  const pins = new Map<string, Map<string, string>>();
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    if (eq < 0) {
      throw new AllowlistError(`--pin ${JSON.stringify(spec)}: write it as tool.arg=value`);
    }
    const target = spec.slice(0, eq);
    const value = spec.slice(eq + 1);
    const tool = allowlist
      .filter((t) => target.startsWith(`${t}.`) && target.length > t.length + 1)
      .sort((a, b) => b.length - a.length)[0];
    if (tool === undefined) {
      const dot = target.lastIndexOf(".");
      if (dot <= 0 || dot === target.length - 1) {
        throw new AllowlistError(
          `--pin ${JSON.stringify(spec)}: write it as tool.arg=value (tool and arg not empty)`,
        );
      }
      throw new AllowlistError(
        `--pin ${JSON.stringify(spec)} names tool ${
          JSON.stringify(target.slice(0, dot))
        }, which is not on the allowlist: add --tool ${target.slice(0, dot)} or drop the pin`,
      );
    }
    const arg = target.slice(tool.length + 1);
    if (value === "") {
      throw new AllowlistError(`--pin ${JSON.stringify(spec)}: the value is empty`);
    }
    const forTool = pins.get(tool) ?? new Map<string, string>();
    const earlier = forTool.get(arg);
    if (earlier !== undefined && earlier !== value) {
      throw new AllowlistError(`--pin ${tool}.${arg} is given two different values`);
    }
    forTool.set(arg, value);
    pins.set(tool, forTool);
  }
  return pins;
}
