/**
 * Generated guardfiles for message tests: real guardfiles from the
 * repository, mutated node by node (fast-check), written back as KDL v2.
 */
import fc from "./property.ts";
import { type KdlNode, type KdlValue, parseKdl } from "../../src/guardfile/kdl.ts";
import { ROOT } from "./cli.ts";

/** Node names the grammars know (spec mode, the AWS policies), and a few they do not. */
export const NODE_NAMES: readonly string[] = [
  "wrap",
  "withhold",
  "instructions",
  "server-info",
  "resource",
  "prompt",
  "icon",
  "cache",
  "reject-empty",
  "reject-empty-argument",
  "pin",
  "rate-limit",
  "confirm",
  "extract",
  "oauth",
  "base-url",
  "auth",
  "header",
  "restrict",
  "database",
  "can",
  "proxy",
  "path",
  "param",
  "query",
  "body",
  "set",
  "method",
  "describe",
  "fail-when",
  "raw-response",
  "graphql",
  "sql",
  "map",
  "field",
  "array",
  "object",
  "mutually-exclusive",
  "statement",
  "max-rows",
  "document",
  "variable",
  "enum",
  "value",
  "env",
  "file",
  "literal",
  "reason",
  "alternative",
  "text",
  "argument",
  "description",
  "audience",
  "store",
  "bucket",
  "prefix",
  "region",
  "parameter",
  "max-bytes",
  "content-type",
  "items",
  "chain",
  "redis",
  "scope",
  "scopes",
  "tool",
  "x",
  "Wrap",
];

/** Property names the grammars know, and a few they do not. */
export const PROPERTY_NAMES: readonly string[] = [
  "type",
  "required",
  "raw",
  "upstream",
  "minimum",
  "maximum",
  "min-items",
  "max-items",
  "pattern",
  "min-length",
  "max-length",
  "slashes",
  "metacharacters",
  "uri",
  "mime",
  "title",
  "priority",
  "sizes",
  "message",
  "ttl",
  "field",
  "as",
  "max-pages",
  "max-items",
  "from",
  "secret",
  "name",
  "to",
  "issuer",
  "resource",
  "description",
  "format",
  "default",
  "x",
];

/** Strings the grammars give meaning to, and ones they refuse. */
const STRINGS: readonly string[] = [
  "",
  " ",
  "x",
  "get",
  "ticket",
  "delete_ticket",
  "/t/{id}",
  "/t",
  "{id}",
  "id",
  "env",
  "file",
  "literal",
  "API_KEY",
  "string",
  "integer",
  "number",
  "boolean",
  "object",
  "array",
  "GET",
  "POST",
  "FETCH",
  "team-*",
  "[",
  "1s",
  "0s",
  "25h",
  "5/1m",
  "0/1s",
  "pdf-text",
  "feed-entries",
  "assistant",
  "user",
  "https://x.example",
  "http://127.0.0.1:1",
  "redis://127.0.0.1:1",
  "ftp://x",
  "a://b",
  "SELECT 1",
  "DELETE FROM t",
  "$1",
  "[[[",
  "status == 'x'",
  "segments",
  "encoded",
  "refuse",
  "allow",
  "disabled",
  "matches",
  "text/plain",
  "us-east-1",
  "/a/b",
  "pgx",
  "mysql",
  "query:p",
  "__proto__",
  "a.b",
  "é",
  "\u{1f600}",
  "x".repeat(600),
];

/**
 * Values the MCP core or the guard check when a server is built, each a
 * boundary a loader could miss: text that is not a URI (a space, a
 * non-ASCII letter, no scheme), names past 128 characters or outside the
 * tool-name alphabet, control characters, regular expressions that parse but
 * are too large or too deep for the engine to compile, globs whose regular
 * expression is.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "é",
  "ä://x",
  "https://exa mple.com/i.png",
  "https://example.com/é.png",
  "//example.com/i.png",
  "i.png",
  "data:image/png;base64,iVBORw0KGgo=",
  "data:image/svg+xml,<svg/>",
  "x:",
  "a".repeat(129),
  "a b",
  "a/b",
  "a\u0000b",
  "line\nbreak",
  "\t",
  "\u202e",
  "%zz",
  "%41",
  "{",
  "{}",
  "{a}{a}",
  "[^/]*a".repeat(8000),
  "a".repeat(70000),
  "*a".repeat(8000),
  "(?:".repeat(5000) + "a" + ")*".repeat(5000),
  "(?<a>x)(?<a>y)",
  "\\p{Foo}",
  "[z-a]",
  "^[a-z]+$",
  "1.0",
  "-1",
  "NaN",
  "Infinity",
];

const value: fc.Arbitrary<KdlValue> = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.string({ maxLength: 8, unit: fc.constantFrom(..."ab_-./{}*$?# 1é") }),
  fc.constantFrom(0, 1, -1, 2.5, 1e3, 0.5, 200, 10001, 9007199254740991),
  fc.boolean(),
  fc.constant(null),
);

/** The repository's guardfiles, parsed: the seeds the mutations start from. */
export function seedDocuments(): KdlNode[][] {
  const dirs = ["guardfiles", "tests/fixtures", "bench/guardfiles"];
  const docs: KdlNode[][] = [];
  for (const dir of dirs) {
    for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
      if (!entry.name.endsWith(".kdl")) continue;
      const parsed = parseKdl(Deno.readTextFileSync(`${ROOT}${dir}/${entry.name}`));
      if ("nodes" in parsed) docs.push(parsed.nodes);
    }
  }
  return docs;
}

/** Every node of a tree, with its parent's child list. */
function slots(nodes: KdlNode[]): { list: KdlNode[]; index: number }[] {
  const out: { list: KdlNode[]; index: number }[] = [];
  const walk = (list: KdlNode[]) =>
    list.forEach((n, index) => {
      out.push({ list, index });
      walk(n.children);
    });
  walk(nodes);
  return out;
}

const clone = (nodes: KdlNode[]): KdlNode[] =>
  nodes.map((n) => ({
    name: n.name,
    values: [...n.values],
    properties: { ...n.properties },
    children: clone(n.children),
  }));

/** One mutation of a kind, with the choices it needs, its values drawn from `values`. */
const mutationOf = (values: fc.Arbitrary<KdlValue>) =>
  fc.record({
    kind: fc.constantFrom(
      "drop-node",
      "duplicate-node",
      "rename-node",
      "set-arg",
      "drop-arg",
      "add-arg",
      "set-prop",
      "drop-prop",
      "add-child",
      "drop-children",
      "hoist",
    ),
    at: fc.nat(),
    index: fc.nat(),
    name: fc.constantFrom(...NODE_NAMES),
    prop: fc.constantFrom(...PROPERTY_NAMES),
    value: values,
  });

const mutation = mutationOf(value);

/**
 * A hostile mutation: mostly a value changed where the grammar reads one
 * (an argument, a property the node has, a property or child nodes of that
 * name have somewhere in the seeds), so the file stays close to one that loads.
 */
const hostileMutation = fc.record({
  kind: fc.constantFrom(
    "set-arg",
    "set-arg",
    "set-prop",
    "set-prop",
    "add-known-prop",
    "add-known-prop",
    "add-known-child",
    "add-arg",
    "duplicate-node",
    "drop-node",
  ),
  at: fc.nat(),
  index: fc.nat(),
  name: fc.constantFrom(...NODE_NAMES),
  prop: fc.constantFrom(...PROPERTY_NAMES),
  value: fc.oneof(
    { arbitrary: value, weight: 1 },
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 2 },
  ),
});

/** The property and child names each node name has somewhere in the seeds. */
interface Known {
  props: Map<string, string[]>;
  children: Map<string, string[]>;
}

function knownNames(seeds: KdlNode[][]): Known {
  const props = new Map<string, Set<string>>();
  const children = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, key: string, names: string[]) => {
    const set = map.get(key) ?? new Set();
    names.forEach((n) => set.add(n));
    map.set(key, set);
  };
  const walk = (list: KdlNode[]) =>
    list.forEach((n) => {
      add(props, n.name, Object.keys(n.properties));
      add(children, n.name, n.children.map((c) => c.name));
      walk(n.children);
    });
  seeds.forEach(walk);
  const sorted = (map: Map<string, Set<string>>) =>
    new Map([...map].map(([k, v]) => [k, [...v].sort()]));
  return { props: sorted(props), children: sorted(children) };
}

type Mutation =
  & Omit<
    typeof mutation extends fc.Arbitrary<infer T> ? T : never,
    "kind"
  >
  & {
    kind:
      | (typeof mutation extends fc.Arbitrary<infer T> ? T : never)["kind"]
      | "add-known-prop"
      | "add-known-child";
  };

function mutate(
  nodes: KdlNode[],
  m: Mutation,
  known?: Known,
): void {
  const all = slots(nodes);
  if (all.length === 0) {
    nodes.push({ name: m.name, values: [m.value], properties: {}, children: [] });
    return;
  }
  const { list, index } = all[m.at % all.length];
  const node = list[index];
  const keys = Object.keys(node.properties);
  switch (m.kind) {
    case "drop-node":
      list.splice(index, 1);
      break;
    case "duplicate-node":
      list.splice(index, 0, clone([node])[0]);
      break;
    case "rename-node":
      node.name = m.name;
      break;
    case "set-arg":
      if (node.values.length === 0) node.values.push(m.value);
      else node.values[m.index % node.values.length] = m.value;
      break;
    case "drop-arg":
      node.values.splice(m.index % Math.max(1, node.values.length), 1);
      break;
    case "add-arg":
      node.values.push(m.value);
      break;
    case "set-prop":
      node.properties[keys.length > 0 && m.index % 2 === 0 ? keys[m.index % keys.length] : m.prop] =
        m.value;
      break;
    case "add-known-prop": {
      const names = known?.props.get(node.name) ?? [];
      node.properties[names.length > 0 ? names[m.index % names.length] : m.prop] = m.value;
      break;
    }
    case "add-known-child": {
      const names = known?.children.get(node.name) ?? [];
      const name = names.length > 0 ? names[m.index % names.length] : m.name;
      node.children.push({ name, values: [m.value], properties: {}, children: [] });
      break;
    }
    case "drop-prop":
      if (keys.length > 0) delete node.properties[keys[m.index % keys.length]];
      break;
    case "add-child":
      node.children.push({ name: m.name, values: [m.value], properties: {}, children: [] });
      break;
    case "drop-children":
      node.children = [];
      break;
    case "hoist":
      nodes.push(clone([node])[0]);
      break;
  }
}

/** KDL v2 text of a value. */
function kdlValue(v: KdlValue): string {
  if (v === null) return "#null";
  if (typeof v === "boolean") return v ? "#true" : "#false";
  if (typeof v === "number") return String(v);
  // Control characters and the code points KDL v2 disallows literally, as escapes.
  const escaped = v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(
    /[\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
    (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
  return `"${escaped}"`;
}

/** KDL v2 text of a node tree. */
export function writeKdl(nodes: KdlNode[], indent = ""): string {
  return nodes.map((n) => {
    const parts = [kdlValue(n.name)];
    for (const v of n.values) parts.push(kdlValue(v));
    for (const [k, v] of Object.entries(n.properties)) parts.push(`${kdlValue(k)}=${kdlValue(v)}`);
    const block = n.children.length > 0
      ? ` {\n${writeKdl(n.children, indent + "    ")}${indent}}`
      : "";
    return `${indent}${parts.join(" ")}${block}\n`;
  }).join("");
}

/**
 * Guardfile texts: a seed with one to four mutations (`maxMutations`); with
 * `hostile`, mostly values changed where the grammar reads them, drawn from
 * {@link HOSTILE_STRINGS} too ({@link hostileMutation}).
 */
export function mutatedGuardfile(
  seeds: KdlNode[][],
  options: { hostile?: boolean; maxMutations?: number } = {},
): fc.Arbitrary<string> {
  const known = options.hostile ? knownNames(seeds) : undefined;
  return fc.tuple(
    fc.nat({ max: seeds.length - 1 }),
    fc.array<Mutation>(options.hostile ? hostileMutation : mutation, {
      minLength: 1,
      maxLength: options.maxMutations ?? 4,
    }),
  ).map(([seed, mutations]) => {
    const nodes = clone(seeds[seed]);
    for (const m of mutations) mutate(nodes, m, known);
    return writeKdl(nodes);
  });
}
