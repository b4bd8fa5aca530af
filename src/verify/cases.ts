/**
 * The calls `weir verify` makes, generated per tool from what the tool
 * advertises (its input schema, as `tools/list` lists it) and what the
 * surface says beside it (restrict globs): valid values at every boundary,
 * and every hostile form the guard knows (decoded path forms, dot segments,
 * encoded separators, ill-formed text, number spellings, deep nesting, name
 * twins, extra keys, wrong types, oversize values, other tools' names).
 *
 * Arguments are built as JSON text, so a number keeps its spelling (`1.50`,
 * `1e1`) and a string may hold a lone surrogate, as an agent could send them.
 * fast-check draws them from a seed: the same seed, tool and count give the
 * same calls (`weir verify --seed S --tool T` replays).
 *
 * @module
 */
import type fcModule from "fast-check";
import { globSource } from "../guardfile/glob.ts";

type Fc = typeof fcModule;
type Arb<T> = fcModule.Arbitrary<T>;

/** How a call reaches weir. */
export type Via = "mcp 2026-07-28" | "mcp 2025-11-25" | "stdio 2025-11-25" | "tool API";

/** One generated call. */
export interface Case {
  /** The tool name sent (sometimes not a served tool: a twin or another tool's name). */
  tool: string;
  /** The arguments as JSON text. */
  args: string;
  via: Via;
  /** What the case tries, for the report (`valid`, `hostile value for "id"`, ...). */
  kind: string;
}

/** A served tool as generation sees it. */
export interface ToolShape {
  name: string;
  inputSchema: Record<string, unknown>;
  /** Restrict globs by input name (the value must match one of each list). */
  restricts?: Record<string, string[][]>;
  /**
   * More names whose twins to send as extra keys: names the upstream reads that the
   * tool does not serve under that name (a renamed or pinned argument's upstream name).
   */
  alsoTwin?: string[];
}

/** Hostile strings the guard must refuse or carry as written, by what they try. */
export const HOSTILE_TEXT: readonly [string, string][] = [
  ["dot segment", ".."],
  ["dot segment", "."],
  ["dot segment", "%2e%2e"],
  ["dot segment", "%2E%2E"],
  ["dot segment", ".%2e"],
  ["dot segment", "%252e%252e"],
  ["dot segment", "%25%32%65%25%32%65"],
  ["dot segment", "%c0%ae%c0%ae"],
  ["dot segment", "%u002e%u002e"],
  ["dot segment", "..;x"],
  ["dot segment", "\uff0e\uff0e"],
  ["separator", "a/b"],
  ["separator", "a%2Fb"],
  ["separator", "a%2fb"],
  ["separator", "a%252Fb"],
  ["separator", "a\\b"],
  ["separator", "a%5Cb"],
  ["separator", "/etc/passwd"],
  ["separator", "../../admin"],
  ["separator", "x/../../y"],
  ["query or fragment", "a?b=1"],
  ["query or fragment", "a#b"],
  ["query or fragment", "a&b=1"],
  ["control character", "a\u0000b"],
  ["control character", "a\r\nX-Injected: 1"],
  ["control character", "a\tb"],
  ["control character", "\u001b[31m"],
  ["metacharacter", "$(id)"],
  ["metacharacter", "`id`"],
  ["metacharacter", "a;b"],
  ["metacharacter", "a|b"],
  ["metacharacter", "a{b}"],
  ["invisible or reordering", "a\u202eb"],
  ["invisible or reordering", "a\u200bb"],
  ["invisible or reordering", "\ufeffa"],
  ["blank", ""],
  ["blank", " "],
  ["percent", "100%"],
  ["percent", "%41"],
  ["unicode", "caf\u00e9"],
  ["unicode", "\u{1f600}"],
  ["space", "a b"],
  ["glob", "*"],
  ["glob", "demo-*/../x"],
];

/** Hostile JSON values (raw text) that are not strings, by what they try. */
const HOSTILE_JSON: readonly [string, string][] = [
  ["ill-formed text", '"\\ud800"'],
  ["ill-formed text", '"a\\udc00b"'],
  ["number spelling", "1.0"],
  ["number spelling", "1e0"],
  ["number spelling", "-0"],
  ["number spelling", "1E+2"],
  ["number spelling", "0.10"],
  ["number beyond a double", "12345678901234567890123"],
  ["number beyond a double", "1e400"],
  ["number beyond a double", "0.1000000000000000000000001"],
  ["wrong type", "null"],
  ["wrong type", "true"],
  ["wrong type", "0"],
  ["wrong type", "-1"],
  ["wrong type", "[]"],
  ["wrong type", "{}"],
  ["wrong type", '["a"]'],
  ["wrong type", '{"a":"b"}'],
  ["deep nesting", "[".repeat(300) + "]".repeat(300)],
  ["deep nesting", '{"a":'.repeat(100) + "1" + "}".repeat(100)],
  ["oversize", JSON.stringify("x".repeat(70_000))],
  ["oversize", `[${Array(2000).fill('"a"').join(",")}]`],
];

type Schema = Record<string, unknown>;

const str = (v: unknown) => JSON.stringify(v);

/** A string that a glob admits: each `*`/`?` filled with safe characters, `**` with segments. */
function globArb(fc: Fc, glob: string): Arb<string> {
  let source: string;
  try {
    source = globSource(glob);
  } catch {
    return fc.constant(glob);
  }
  const plain = fc.tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,8}$/),
    fc.stringMatching(/^[a-z0-9]{1,6}$/),
  ).map(([a, b]) =>
    glob.replaceAll("**", `${a}/${b}`).replaceAll("*", a).replaceAll("?", b[0])
      .replace(/\[[^\]]*\]/g, b[0])
  );
  return fc.oneof(
    { weight: 3, arbitrary: plain },
    { weight: 1, arbitrary: fc.stringMatching(new RegExp(source, "u")) },
  );
}

/** Valid JSON text for a schema (at its boundaries often); `depth` bounds nesting. */
export function validArb(
  fc: Fc,
  schema: Schema,
  restricts: string[][] | undefined,
  depth = 0,
): Arb<string> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum.map(str));
  if ("const" in schema) return fc.constant(str(schema.const));
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      return fc.oneof(...options.map((o) => validArb(fc, o as Schema, restricts, depth)));
    }
  }
  const type = Array.isArray(schema.type)
    ? schema.type.filter((t) => t !== "null")[0] ?? "null"
    : schema.type;
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  switch (type) {
    case "integer": {
      const lo = Math.ceil(min ?? -1_000_000);
      const hi = Math.floor(max ?? 1_000_000);
      if (lo > hi) return fc.constant(String(lo));
      return fc.oneof(
        fc.constantFrom(lo, hi, Math.min(hi, lo + 1)),
        fc.integer({ min: lo, max: hi }),
      )
        .map(String);
    }
    case "number": {
      const lo = min ?? -1e6;
      const hi = max ?? 1e6;
      return fc.oneof(
        fc.constantFrom(lo, hi).map(str),
        fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }).map((n) =>
          str(Object.is(n, -0) ? 0 : n)
        ),
      );
    }
    case "boolean":
      return fc.boolean().map(str);
    case "null":
      return fc.constant("null");
    case "array": {
      const items = (schema.items ?? {}) as Schema;
      const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
      const maxItems = typeof schema.maxItems === "number" ? schema.maxItems : minItems + 3;
      if (depth > 3) return fc.constant("[]");
      return fc.array(validArb(fc, items, undefined, depth + 1), {
        minLength: minItems,
        maxLength: Math.min(maxItems, minItems + 4),
      }).map((a) => `[${a.join(",")}]`);
    }
    case "object":
      if (depth > 3) return fc.constant("{}");
      return objectArb(fc, schema, {}, depth + 1).map(render);
    case "string":
      return stringArb(fc, schema, restricts);
    default:
      return fc.oneof(fc.constantFrom('"a"', "1", "true"), stringArb(fc, {}, undefined));
  }
}

function stringArb(fc: Fc, schema: Schema, restricts: string[][] | undefined): Arb<string> {
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
  const fits = (s: string) =>
    [...s].length >= minLength && (maxLength === undefined || [...s].length <= maxLength);
  if (restricts && restricts.length > 0) {
    // Every list must admit the value: draw from the first, keep those the others admit too.
    return fc.oneof(...restricts[0].map((g) => globArb(fc, g))).filter(fits).map(str);
  }
  if (typeof schema.pattern === "string") {
    try {
      return fc.stringMatching(new RegExp(schema.pattern, "u")).filter(fits).map(str);
    } catch { /* a pattern fast-check cannot draw from: plain strings */ }
  }
  const cap = Math.min(maxLength ?? minLength + 24, minLength + 64);
  const unit = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_.") },
    { weight: 1, arbitrary: fc.constantFrom(" ", "é", "\u{1f600}", "~", ":", "@", "+", ",", "%") },
  );
  const exact = (n: number) =>
    fc.array(unit, { minLength: n, maxLength: n }).map((a) => a.join(""));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.array(unit, { minLength: Math.max(minLength, 1), maxLength: Math.max(cap, 1) })
        .map((a) => a.join("")),
    },
    { weight: 1, arbitrary: exact(minLength) },
    {
      weight: 1,
      arbitrary: maxLength !== undefined ? exact(Math.min(maxLength, 4096)) : exact(minLength),
    },
  ).filter(fits).map(str);
}

/** Text just outside a schema's bounds, when it has any. */
function outsideArb(fc: Fc, schema: Schema): Arb<string> | undefined {
  const out: string[] = [];
  if (typeof schema.minimum === "number") out.push(str(schema.minimum - 1));
  if (typeof schema.maximum === "number") out.push(str(schema.maximum + 1));
  if (typeof schema.minLength === "number" && schema.minLength > 0) {
    out.push(str("a".repeat(schema.minLength - 1)));
  }
  if (typeof schema.maxLength === "number") out.push(str("a".repeat(schema.maxLength + 1)));
  if (Array.isArray(schema.enum)) {
    out.push(str(`${schema.enum[0]}x`), str(String(schema.enum[0]).toUpperCase() + "_"));
  }
  if (typeof schema.maxItems === "number") {
    out.push(`[${Array(schema.maxItems + 1).fill('"a"').join(",")}]`);
  }
  return out.length > 0 ? fc.constantFrom(...out) : undefined;
}

/** An object of the schema's properties: every required one, optional ones at random. */
function objectArb(
  fc: Fc,
  schema: Schema,
  restricts: Record<string, string[][]>,
  depth: number,
): Arb<Entries> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : []);
  const names = Object.keys(properties);
  if (names.length === 0) return fc.constant([]);
  return fc.tuple(
    ...names.map((n) =>
      fc.tuple(
        required.has(n) ? fc.constant(true) : fc.boolean(),
        validArb(fc, properties[n], restricts[n], depth),
      )
    ),
  ).map((drawn) =>
    drawn.flatMap(([present, text], i) => present ? [[names[i], text] as [string, string]] : [])
  );
}

/** An object's members as (key, JSON text) pairs, in order. */
type Entries = [string, string][];

/** The JSON text of an object's members. */
function render(entries: Entries): string {
  return `{${entries.map(([k, v]) => `${str(k)}:${v}`).join(",")}}`;
}

/**
 * Names that look like `name` without being it: case, width, separators,
 * spaces, invisible and combining characters, plural and cut.
 *
 * @example
 * ```ts
 * import { twins } from "./cases.ts";
 * const t = twins("owner");
 * if (!t.includes("Owner") || !t.includes("owner\u200b") || t.includes("owner")) throw new Error();
 * ```
 */
export function twins(name: string): string[] {
  const out = new Set([
    name.toUpperCase(),
    name[0].toUpperCase() + name.slice(1),
    `${name} `,
    ` ${name}`,
    `${name}\u200b`,
    name.normalize("NFD") === name ? `${name}\u0301` : name.normalize("NFD"),
    name.replace(/[a-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
    name.replaceAll("_", "-"),
    name.replaceAll("-", "_"),
    `${name}s`,
    name.slice(0, -1),
  ]);
  out.delete(name);
  return [...out];
}

/** The object's JSON text with `key` set to `value` (replaced in place, or added last). */
function withValue(entries: Entries, key: string, value: string): string {
  const out = entries.map(([k, v]) => [k, k === key ? value : v] as [string, string]);
  if (!entries.some(([k]) => k === key)) out.push([key, value]);
  return render(out);
}

/**
 * Every call for one tool, drawn from `seed`.
 * @param others the names of every other tool listed (withheld ones included)
 */
export function casesFor(
  fc: Fc,
  tool: ToolShape,
  others: string[],
  count: number,
  seed: number,
): Case[] {
  const schema = tool.inputSchema as Schema;
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(properties);
  const base = objectArb(fc, schema, tool.restricts ?? {}, 0);
  const via = fc.constantFrom<Via>(
    "mcp 2026-07-28",
    "mcp 2025-11-25",
    "stdio 2025-11-25",
    "tool API",
  );
  const call = (kind: string, args: string, name = tool.name) => ({ tool: name, args, kind });
  const arbs: { weight: number; arbitrary: Arb<Omit<Case, "via">> }[] = [
    { weight: 8, arbitrary: base.map((b) => call("valid", render(b))) },
  ];
  if (names.length > 0) {
    const key = fc.constantFrom(...names);
    arbs.push({
      weight: 7,
      arbitrary: fc.tuple(base, key, fc.constantFrom(...HOSTILE_TEXT)).map(([b, k, [what, v]]) =>
        call(`${what} in "${k}"`, withValue(b, k, str(v)))
      ),
    });
    arbs.push({
      weight: 3,
      arbitrary: fc.tuple(base, key, fc.constantFrom(...HOSTILE_JSON)).map(([b, k, [what, v]]) =>
        call(`${what} in "${k}"`, withValue(b, k, v))
      ),
    });
    const bounded = names.flatMap((n) => {
      const arb = outsideArb(fc, properties[n]);
      return arb ? [arb.map((v) => [n, v] as const)] : [];
    });
    if (bounded.length > 0) {
      arbs.push({
        weight: 2,
        arbitrary: fc.tuple(base, fc.oneof(...bounded)).map(([b, [k, v]]) =>
          call(`outside the bounds of "${k}"`, withValue(b, k, v))
        ),
      });
    }
  }
  const twinned = [...names, ...(tool.alsoTwin ?? [])];
  if (twinned.length > 0) {
    arbs.push({
      weight: 1,
      arbitrary: fc.tuple(base, fc.constantFrom(...twinned), fc.constantFrom(...HOSTILE_TEXT))
        .chain(([b, k, [, v]]) =>
          fc.constantFrom(...twins(k)).map((twin) =>
            call(`a twin of "${k}"`, withValue(b, twin, str(v)))
          )
        ),
    });
  }
  arbs.push({
    weight: 1,
    arbitrary: fc.tuple(
      base,
      fc.constantFrom("__proto__", "constructor", "extra", "x-api-key", "site_id", "query", "path"),
    ).map(([b, k]) => call(`an extra key "${k}"`, withValue(b, k, '"x"'))),
  });
  arbs.push({
    weight: 1,
    arbitrary: fc.constantFrom("[]", '"x"', "null", "{}", "1").map((a) =>
      call("arguments not an object, or none", a)
    ),
  });
  const names2 = [...twins(tool.name), ...others.filter((o) => o !== tool.name)];
  if (names2.length > 0) {
    arbs.push({
      weight: 1,
      arbitrary: fc.tuple(base, fc.constantFrom(...names2)).map(([b, n]) =>
        call(`another name "${n}"`, render(b), n)
      ),
    });
  }
  return fc.sample(
    fc.tuple(fc.oneof(...arbs), via).map(([c, v]) => ({ ...c, via: v })),
    { seed, numRuns: count },
  );
}
