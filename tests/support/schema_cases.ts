/**
 * Generated JSON Schema 2020-12 tool input schemas and the argument objects
 * they admit, for the faithfulness property test: every form a schema can
 * admit keys through (`properties`, `additionalProperties` schemas,
 * `patternProperties`, `$ref`/`$defs` at the root or nested,
 * `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`, `dependentSchemas`,
 * `unevaluatedProperties`, nested objects and arrays), and values whose
 * numbers are written in the spellings a forwarder could change (`1.0`,
 * `1e3`, `1E+3`, `-0`, `2.50`, `1e21`, `0.0000001`), keys such as
 * `__proto__` and any well-formed Unicode in strings.
 *
 * Each {@link SchemaCase} is a schema and an arbitrary of its values, built
 * together so that every value is valid by construction; a test may check it
 * with an independent validator as well.
 */
import fc from "./property.ts";

/** A JSON value whose numbers keep the text they are written with; objects keep key order. */
export type Spelled =
  | null
  | boolean
  | string
  | { num: string }
  | Spelled[]
  | { obj: [string, Spelled][] };

/** A schema and the values it admits. */
export interface SchemaCase {
  schema: Record<string, unknown>;
  /** Subschemas this one refers to with `#/$defs/<name>`. */
  defs: Record<string, unknown>;
  values: fc.Arbitrary<Spelled>;
}

/** JSON text of a spelled value, numbers exactly as spelled. */
export function writeJson(value: Spelled): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(writeJson).join(",")}]`;
  if ("num" in value) return value.num;
  return `{${value.obj.map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(",")}}`;
}

/**
 * A canonical text of JSON text for comparing two texts "as JSON with exact
 * numbers": object keys sorted, strings as `JSON.stringify` writes them,
 * every number as its source text, no whitespace.
 */
export function canonicalExact(text: string): string {
  const parsed = JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" ? { "\u0000num": context!.source } : value,
  );
  return canonicalOf(parsed);
}

/** {@link canonicalExact} of an already parsed value (numbers as `{"\u0000num": source}`). */
export function canonicalOf(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalOf).join(",")}]`;
  const o = value as Record<string, unknown>;
  if (Object.keys(o).length === 1 && Object.hasOwn(o, "\u0000num")) return String(o["\u0000num"]);
  const keys = Object.keys(o).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalOf(o[k])}`).join(",")}}`;
}

/** Parse JSON text keeping every number's source (for {@link canonicalOf}). */
export function parseExact(text: string): unknown {
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" ? { "\u0000num": context!.source } : value,
  );
}

const num = (text: string): Spelled => ({ num: text });
/** An object of these entries, in this order. */
const o = (...entries: [string, Spelled][]): Spelled => ({ obj: entries });

/** Integers in spellings `JSON.stringify` would write otherwise (all exact). */
const integerSpelled: fc.Arbitrary<Spelled> = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).chain((n) =>
    fc.constantFrom(String(n), `${n}.0`, `${n}.00`, `${n}e0`, `${n}E0`, `${n}E+0`).map(num)
  ),
  fc.constantFrom(
    "0",
    "-0",
    "1e3",
    "1E3",
    "1e+3",
    "25e2",
    "-4e1",
    "1e21",
    "1E21",
    "1e20",
    "100000000000000000000",
    "9007199254740991",
    "-9007199254740991",
  ).map(num),
);

/** Numbers, integers included, in canonical and other exact spellings. */
const numberSpelled: fc.Arbitrary<Spelled> = fc.oneof(
  integerSpelled,
  fc.constantFrom(
    "2.5",
    "2.50",
    "25e-1",
    "0.25E1",
    "0.125",
    "-3.75",
    "1.5e300",
    "1e-7",
    "0.0000001",
    "0.1",
    "0.10",
    "1.10",
    "5e-324",
    "1.7976931348623157e308",
  ).map(num),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => num(JSON.stringify(d))),
);

const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("", "1.0", "null", "\u2028\u2029", "tab\there", "\u0000", "😀 ü ß", 'a\\b"c'),
);

/** Any JSON value (for keys an open object admits without saying what they hold). */
function anyValue(depth: number): fc.Arbitrary<Spelled> {
  const leaf = fc.oneof(fc.constant(null), fc.boolean(), text, numberSpelled);
  if (depth <= 0) return leaf;
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(anyValue(depth - 1), { maxLength: 3 }) },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(fc.tuple(fc.string({ maxLength: 5 }), anyValue(depth - 1)), {
        maxLength: 3,
        selector: ([k]) => k,
      }).map((entries) => ({ obj: entries })),
    },
  );
}

const leafCases: SchemaCase[] = [
  { schema: { type: "string" }, defs: {}, values: text },
  { schema: { type: "integer" }, defs: {}, values: integerSpelled },
  { schema: { type: "number" }, defs: {}, values: numberSpelled },
  { schema: { type: "boolean" }, defs: {}, values: fc.boolean() },
  { schema: { type: "null" }, defs: {}, values: fc.constant(null) },
  {
    schema: { enum: ["alpha", "beta", 7, null, true] },
    defs: {},
    values: fc.constantFrom<Spelled>("alpha", "beta", num("7"), num("7.0"), null, true),
  },
  { schema: { type: ["string", "integer"] }, defs: {}, values: fc.oneof(text, integerSpelled) },
];

/** Extra keys: odd ones that must stay plain keys, and ordinary ones. */
const extraKey = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "") },
  { weight: 4, arbitrary: fc.string({ unit: "binary", maxLength: 6 }).map((s) => `x_${s}`) },
);

/** Entries for a map of extra keys whose values follow `values` (unique keys). */
function extras(values: fc.Arbitrary<Spelled>, maxLength = 3) {
  return fc.uniqueArray(fc.tuple(extraKey, values), { maxLength, selector: ([k]) => k });
}

/** An object case: declared properties (some required), and how it admits others. */
function objectCase(depth: number, path: string): fc.Arbitrary<SchemaCase> {
  const prop = (i: number) =>
    fc.option(fc.tuple(caseOf(depth - 1, `${path}p${i}`), fc.boolean()), { nil: undefined });
  return fc.tuple(
    fc.tuple(prop(0), prop(1), prop(2)),
    fc.constantFrom("open", "closed", "schema", "pattern"),
    caseOf(0, `${path}x`),
  ).map(([maybeProps, extra, extraCase]) => {
    const props = maybeProps.filter((p) => p !== undefined);
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    const defs: Record<string, unknown> = { ...extraCase.defs };
    props.forEach(([c, req], i) => {
      properties[`p${i}`] = c.schema;
      Object.assign(defs, c.defs);
      if (req) required.push(`p${i}`);
    });
    const schema: Record<string, unknown> = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    let extraValues: fc.Arbitrary<[string, Spelled][]> = fc.constant([]);
    if (extra === "open") extraValues = extras(anyValue(1));
    if (extra === "closed") schema.additionalProperties = false;
    if (extra === "schema") {
      schema.additionalProperties = extraCase.schema;
      extraValues = extras(extraCase.values);
    }
    if (extra === "pattern") {
      schema.patternProperties = { "^f_": extraCase.schema };
      schema.additionalProperties = false;
      extraValues = fc.uniqueArray(
        fc.tuple(fc.string({ maxLength: 4 }).map((s) => `f_${s}`), extraCase.values),
        { maxLength: 3, selector: ([k]) => k },
      );
    }
    const declared = fc.tuple(
      ...props.map(([c, req], i) =>
        req
          ? c.values.map((v): [string, Spelled][] => [[`p${i}`, v]])
          : fc.option(c.values, { nil: undefined }).map((v): [string, Spelled][] =>
            v === undefined ? [] : [[`p${i}`, v]]
          )
      ),
    );
    return {
      schema,
      defs,
      values: fc.tuple(declared, extraValues).map(([d, e]) => ({ obj: [...d.flat(), ...e] })),
    };
  });
}

/** The forms that admit keys other ways than `properties`, each an object case. */
function composedCase(depth: number, path: string): fc.Arbitrary<SchemaCase> {
  const part = (p: string) => caseOf(Math.max(0, depth - 1), p);
  return fc.oneof<fc.Arbitrary<SchemaCase>[]>(
    // allOf: two branches' properties, all of them.
    fc.tuple(part(`${path}a`), part(`${path}b`), fc.boolean()).map(([a, b, closed]) => ({
      schema: {
        type: "object",
        allOf: [
          { properties: { a: a.schema }, required: ["a"] },
          { properties: { b: b.schema } },
        ],
        ...(closed ? { unevaluatedProperties: false } : {}),
      },
      defs: { ...a.defs, ...b.defs },
      values: fc.tuple(a.values, fc.option(b.values, { nil: undefined })).map(([va, vb]) =>
        vb === undefined ? o(["a", va]) : o(["a", va], ["b", vb])
      ),
    })),
    // anyOf: either branch's required key.
    fc.tuple(part(`${path}c`), part(`${path}d`)).map(([c, d]) => ({
      schema: {
        type: "object",
        anyOf: [
          { properties: { c: c.schema }, required: ["c"] },
          { properties: { d: d.schema }, required: ["d"] },
        ],
      },
      defs: { ...c.defs, ...d.defs },
      values: fc.oneof(
        c.values.map((v) => o(["c", v])),
        d.values.map((v) => o(["d", v])),
      ),
    })),
    // oneOf: a discriminating const picks exactly one branch.
    fc.tuple(part(`${path}e`), part(`${path}f`)).map(([e, f]) => ({
      schema: {
        type: "object",
        oneOf: [
          { properties: { kind: { const: "e" }, e: e.schema }, required: ["kind"] },
          { properties: { kind: { const: "f" }, f: f.schema }, required: ["kind"] },
        ],
      },
      defs: { ...e.defs, ...f.defs },
      values: fc.oneof(
        e.values.map((v) => o(["kind", "e"], ["e", v])),
        f.values.map((v) => o(["kind", "f"], ["f", v])),
      ),
    })),
    // if / then / else on a mode.
    fc.tuple(part(`${path}t`), part(`${path}u`)).map(([t, u]) => ({
      schema: {
        type: "object",
        properties: { mode: { type: "string" } },
        required: ["mode"],
        if: { properties: { mode: { const: "on" } } },
        then: { properties: { t: t.schema }, required: ["t"] },
        else: { properties: { u: u.schema } },
      },
      defs: { ...t.defs, ...u.defs },
      values: fc.oneof(
        t.values.map((v) => o(["mode", "on"], ["t", v])),
        fc.tuple(fc.constantFrom("off", "", "ON"), fc.option(u.values, { nil: undefined })).map((
          [m, v],
        ) => v === undefined ? o(["mode", m]) : o(["mode", m], ["u", v])),
      ),
    })),
    // dependentSchemas: "a" brings a required "b".
    fc.tuple(part(`${path}g`), part(`${path}h`)).map(([g, h]) => ({
      schema: {
        type: "object",
        properties: { g: g.schema },
        dependentSchemas: { g: { properties: { h: h.schema }, required: ["h"] } },
      },
      defs: { ...g.defs, ...h.defs },
      values: fc.option(fc.tuple(g.values, h.values), { nil: undefined }).map((gh) =>
        gh === undefined ? o() : o(["g", gh[0]], ["h", gh[1]])
      ),
    })),
    // unevaluatedProperties: a schema for the keys nothing else evaluated.
    fc.tuple(part(`${path}i`), caseOf(0, `${path}v`)).map(([i, v]) => ({
      schema: {
        type: "object",
        properties: { i: i.schema },
        allOf: [{ properties: { j: { type: "boolean" } } }],
        unevaluatedProperties: v.schema,
      },
      defs: { ...i.defs, ...v.defs },
      values: fc.tuple(fc.option(i.values, { nil: undefined }), fc.boolean(), extras(v.values)).map(
        ([vi, j, more]): Spelled => ({
          obj: [...(vi === undefined ? [] : [["i", vi] as [string, Spelled]]), ["j", j], ...more],
        }),
      ),
    })),
  );
}

/** A case at most `depth` deep; `path` names its `$defs` entries uniquely. */
export function caseOf(depth: number, path: string): fc.Arbitrary<SchemaCase> {
  const leaf = fc.constantFrom(...leafCases);
  if (depth <= 0) return leaf;
  const inner = fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 2, arbitrary: objectCase(depth, path) },
    { weight: 2, arbitrary: composedCase(depth, path) },
    {
      weight: 1,
      arbitrary: caseOf(depth - 1, `${path}y`).map((c) => ({
        schema: { type: "array", items: c.schema },
        defs: c.defs,
        values: fc.array(c.values, { maxLength: 3 }),
      })),
    },
  );
  // Sometimes by reference: the subschema goes to $defs and is named here.
  return fc.tuple(inner, fc.boolean()).map(([c, byRef]) =>
    byRef
      ? {
        schema: { $ref: `#/$defs/${path}` },
        defs: { ...c.defs, [path]: c.schema },
        values: c.values,
      }
      : c
  );
}

/**
 * A tool's input schema (an object at the root, with its `$defs`) and its
 * values: a plain object case, a composed one, or the whole schema behind a
 * root `$ref`.
 */
export function toolCase(depth: number): fc.Arbitrary<SchemaCase> {
  const root = fc.oneof(objectCase(depth, "o"), composedCase(depth, "k"));
  return fc.tuple(root, fc.boolean()).map(([c, byRef]) => {
    const defs = { ...c.defs };
    const schema: Record<string, unknown> = byRef
      ? { type: "object", $ref: "#/$defs/root" }
      : { ...c.schema };
    if (byRef) defs.root = c.schema;
    if (Object.keys(defs).length > 0) schema.$defs = defs;
    return { schema, defs: {}, values: c.values };
  });
}
