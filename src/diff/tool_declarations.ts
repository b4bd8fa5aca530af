/**
 * The declarations of a tool's fields (src/surface/model.ts `Tool`, its
 * arguments, pins and controls) and of the tools list ({@link TOOLS}): how a
 * change to each moves what an agent can do. The server's fields are in
 * src/diff/declarations.ts, which holds the whole table.
 *
 * @module
 */
import { ACCESS, OPERATION, sameOperation } from "./operation_declarations.ts";
import { compareRestrict, restrictedPatterns, restrictOut, showGlobs } from "./restrict.ts";
import type {
  Argument,
  ArgumentRules,
  Encoding,
  Pin,
  Tool,
  ToolControls,
} from "../surface/model.ts";
import {
  changes,
  type Declared,
  type Fields,
  type Found,
  growthNarrows,
  ignored,
  inSchema,
  largerWidens,
  type List,
  prefix,
  rule,
  same,
  smallerWidens,
  trueNarrows,
  trueWidens,
  widens,
} from "./declare.ts";
import { diffObjectSchema } from "./schema_diff.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { operationWords, sentWords, sourceWords } from "../surface/words.ts";

/** A value rule's declarations (each also stated in the advertised schema). */
const RULES: Declared<ArgumentRules> = {
  minimum: inSchema(smallerWidens("a lower bound: lower admits more values", "minimum")),
  maximum: inSchema(largerWidens("an upper bound: higher admits more values", "maximum")),
  minLength: inSchema(smallerWidens("a shorter least length admits more values", "minLength")),
  maxLength: inSchema(largerWidens("a longer greatest length admits more values", "maxLength")),
  minItems: inSchema(smallerWidens("fewer least items admit more arrays", "minItems")),
  maxItems: inSchema(largerWidens("more items admit more arrays", "maxItems")),
  pattern: inSchema(rule<string>(
    "either",
    "a pattern added narrows; one removed or replaced may admit values the old refused",
    (o, n, at) => [{
      effect: o !== undefined && n === undefined || o !== undefined ? "widen" : "narrow",
      what: `${prefix(at)}pattern ${o === undefined ? "none" : JSON.stringify(o)} -> ${
        n === undefined ? "none" : JSON.stringify(n)
      }${o !== undefined && n !== undefined ? " (may admit values the old one refused)" : ""}`,
    }],
  )),
  enum: inSchema(rule<NonNullable<ArgumentRules["enum"]>>(
    "either",
    "values added to an enum (or the enum dropped) admit more; values dropped narrow",
    (o, n, at) => {
      if (n === undefined) {
        return [{ effect: "widen", what: `${prefix(at)}enum removed (any value)` }];
      }
      if (o === undefined) return [{ effect: "narrow", what: `${prefix(at)}now one of ${fmt(n)}` }];
      const out: Found[] = [];
      const plus = n.filter((v) => !o.some((x) => same(x, v)));
      const minus = o.filter((v) => !n.some((x) => same(x, v)));
      if (plus.length > 0) {
        out.push({ effect: "widen", what: `${prefix(at)}enum adds ${fmt(plus)}` });
      }
      if (minus.length > 0) {
        out.push({ effect: "narrow", what: `${prefix(at)}enum drops ${fmt(minus)}` });
      }
      return out;
    },
  )),
};

function fmt(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

const SLASH_WORDS: Record<string, string> = {
  refuse: "one segment",
  encoded: "one segment, / sent as %2F",
  segments: "relative path of segments",
};

const ENCODING: Declared<Encoding> = {
  slashes: rule(
    "either",
    "how a path value's / is placed: any change but to refuse lets one value reach other " +
      "paths (%2F decoded by some upstreams, or several segments)",
    (o, n, at) => [{
      effect: n === "refuse" ? "narrow" : "widen",
      what: `${prefix(at)}${SLASH_WORDS[o ?? "refuse"]} -> ${SLASH_WORDS[n ?? "refuse"]}`,
    }],
  ),
  metacharacters: rule(
    "either",
    "shell metacharacters allowed in a URL value reach an upstream that may pass them on",
    (o, n, at) =>
      (o ?? "refuse") === (n ?? "refuse")
        ? []
        : n === "allow"
        ? [{ effect: "widen", what: `${prefix(at)}now allows shell metacharacters` }]
        : [{ effect: "narrow", what: `${prefix(at)}now refuses shell metacharacters` }],
  ),
};

const ARGUMENT: Declared<Argument> = {
  name: ignored("the key arguments are matched by"),
  in: widens("an argument sent elsewhere reaches another part of the request", "now sent in"),
  sentAs: rule(
    "wider",
    "another wire name sets another parameter upstream",
    (o, n, at) => [{ effect: "widen", what: `${prefix(at)}now sent as "${n}" (was "${o}")` }],
  ),
  type: inSchema(widens("another type admits other values", "type")),
  required: inSchema(trueNarrows(
    "a required argument must be given; optional admits calls without it",
    "now required",
    "no longer required",
  )),
  rules: { why: "each value rule on its own", fields: RULES },
  restrict: rule("either", "restrict globs: a node's globs OR, nodes AND", compareRestrict),
  encoding: {
    why: "how a URL value is placed and gated",
    fields: ENCODING,
  } satisfies Fields<Encoding>,
  served: trueWidens(
    "a hidden argument is not served: serving it lets an agent set it",
    "now served (was hidden)",
    "no longer served (hidden)",
  ),
};

const ARGUMENTS: List<Argument> = {
  why: "arguments by name; one added or removed is in the input schema",
  key: (a) => a.name,
  added: (a, at) =>
    at.schemasKnown
      ? []
      : a.served
      ? [{ effect: "narrow", what: `input "${a.name}": rules added (${ruleList(a)})` }]
      : [{ effect: "narrow", what: `input "${a.name}" now hidden` }],
  removed: (a, at) =>
    at.schemasKnown ? [] : [{
      effect: "widen",
      what: a.served
        ? `input "${a.name}": its rules removed (${ruleList(a)})`
        : `input "${a.name}" no longer hidden`,
    }],
  label: (a) => `input "${a.name}"`,
  each: ARGUMENT,
};

function ruleList(a: Argument): string {
  const words = Object.entries(a.rules).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  if (a.restrict.length > 0) words.push(`restrict ${showGlobs(a.restrict)}`);
  if (a.sentAs !== a.name) words.push(`sent as "${a.sentAs}"`);
  return words.join(", ") || "none";
}

const PIN: Declared<Pin> = {
  name: ignored("the key pins are matched by"),
  in: ignored("part of the key (a query parameter or an argument)"),
  value: rule(
    "wider",
    "another source may hold another value: the agent may reach another thing",
    (o, n, at) => {
      const a = o && "from" in o ? sourceWords(o.from) : sentWords(o);
      const b = n && "from" in n ? sourceWords(n.from) : sentWords(n);
      return [{
        effect: "widen",
        what: a === b
          ? `${prefix(at)}its literal value changed (not shown)`
          : `${prefix(at)}${a} -> ${b}`,
      }];
    },
  ),
  fromQuery: widens(
    "another query parameter of the secret URL is another value",
    "taken from the URL's query parameter",
    (v) => v ?? "none",
  ),
  secret: trueNarrows(
    "a secret pin's value is redacted from answers; dropping the flag lets an answer show it",
    "now secret (redacted from answers)",
    "no longer secret: its value is no longer redacted from answers",
  ),
};

const PINS: List<Pin> = {
  why: "pins by name: a pin fixes a value the agent cannot choose",
  key: (p) => `${p.in} ${p.name}`,
  // A pinned argument of a wrapped server was one the agent could set: now fixed, it narrows.
  // A pinned query parameter of spec mode is one no request carried before (a pin never
  // names a caller's input): requests now go out with it, and what the upstream did
  // without it is unknown, so it widens.
  added: (p) =>
    p.in === "argument" ? [{ effect: "narrow", what: `pin on argument ${p.name} added` }] : [{
      effect: "widen",
      what: `pin on query ${p.name} added (every request now carries it; what the ` +
        `upstream did without it is unknown)`,
    }],
  removed: (p) => [{ effect: "widen", what: `pin on ${p.in} ${p.name} removed` }],
  label: (p) => `pin on ${p.in} ${p.name}`,
  each: PIN,
};

const CONTROLS: Declared<ToolControls> = {
  confirm: rule(
    "either",
    "a person asked before each call narrows; no longer asked widens; the question's words change nothing reachable",
    (o, n, at) =>
      o === undefined
        ? [{ effect: "narrow", what: `${prefix(at)}now asks a person to confirm` }]
        : n === undefined
        ? [{ effect: "widen", what: `${prefix(at)}no longer asks a person to confirm` }]
        : [{ effect: "change", what: `${prefix(at)}confirm message changed` }],
  ),
  cacheTtlMs: rule(
    "neither",
    "a cached answer is an earlier answer: no request is admitted that was not",
    (o, n, at) => [{
      effect: "change",
      what: `${prefix(at)}cache ${o === undefined ? "none" : `${o} ms`} -> ${
        n === undefined ? "none" : `${n} ms`
      }`,
    }],
  ),
  rejectEmpty: rule("neither", "what weir makes of an empty answer", (_o, n, at) => [{
    effect: "change",
    what: `${prefix(at)}${
      n ? "an empty answer is now an error" : "an empty answer is no longer an error"
    }`,
  }]),
  rejectBlank: growthNarrows(
    "a blank argument refused narrows what is sent",
    (f) => `blank "${f}" now refused`,
    (f) => `blank "${f}" no longer refused`,
  ),
  extract: rule(
    "either",
    "what of a raw answer reaches the agent: more pages or entries (or no extraction: the raw " +
      "answer) is more, as more sql rows are",
    (o, n, at) => {
      const show = (v: typeof o) => v === undefined ? "none" : `${v.as}, first ${v.max}`;
      const what = `${prefix(at)}extract ${show(o)} -> ${show(n)}`;
      if (n === undefined) {
        return [{ effect: "widen", what: `${what} (the raw answer reaches the agent)` }];
      }
      if (o === undefined) return [{ effect: "narrow", what }];
      if (o.as !== n.as) return [{ effect: "change", what }];
      return [{ effect: n.max > o.max ? "widen" : "narrow", what }];
    },
  ),
  failWhen: changes("which answers are errors; no request changes", "fail-when"),
  rawResponse: changes("how an answer is shown; no request changes", "raw-response"),
};

const TOOL: Declared<Tool> = {
  name: ignored("the key tools are matched by (a rename is reported on its own)"),
  kind: ignored("a change of kind is compared as a whole (granted, withheld, info)"),
  access: ACCESS,
  operation: OPERATION,
  destructive: rule(
    "either",
    "a grant is destructive by its operation (a DELETE: one that now deletes widens); a " +
      "proxied tool's mark is a hint a client shows about one fixed operation: dropping it " +
      "hides it from a client that asks before destructive calls",
    (_o, n, at) =>
      at.hinted
        ? n ? [{ effect: "narrow", what: `${prefix(at)}now marked destructive` }] : [{
          effect: "widen",
          what: `${prefix(at)}no longer marked destructive: a client that asks before ` +
            `destructive calls may not ask`,
        }]
        : n
        ? [{ effect: "widen", what: `${prefix(at)}now destructive` }]
        : [{ effect: "change", what: `${prefix(at)}no longer marked destructive` }],
  ),
  destructiveUnknown: rule(
    "either",
    "a wrapped server's own destructiveHint, unread from the file alone, may say false: " +
      "leaving a stated destructive=#true to it may hide the mark from a client that asks first",
    (o, n, at) => {
      if (Boolean(o) === Boolean(n)) return [];
      if (n && at.destructive?.old) {
        return [{
          effect: "widen",
          what: `${prefix(at)}destructive=#true no longer stated: the server's own ` +
            `destructiveHint decides, which the file alone does not show (if it says false, a ` +
            `client that asks before destructive calls may not ask); compare with ` +
            `--definitions F or --live`,
        }];
      }
      return n
        ? [{ effect: "change", what: `${prefix(at)}destructive mark left to the server` }]
        : at.destructive?.next
        ? [{ effect: "narrow", what: `${prefix(at)}now stated destructive (destructive=#true)` }]
        : [{ effect: "change", what: `${prefix(at)}destructive mark now stated` }];
    },
  ),
  title: changes("words the model reads; no request changes", "title"),
  hints: {
    why: "hints a client reads; weir enforces neither",
    fields: {
      idempotent: changes("a hint: calling again changes nothing more", "idempotentHint"),
      openWorld: changes("a hint: the tool reaches outside entities", "openWorldHint"),
    },
  },
  description: rule("neither", "words the model reads; no request changes", (_o, _n, at) => [{
    effect: "change",
    what: `${prefix(at)}description changed`,
  }]),
  arguments: ARGUMENTS,
  inputSchema: rule(
    "either",
    "the schema advertised and enforced: compared as widening or narrowing per keyword",
    (o, n, at) =>
      o && n
        ? diffObjectSchema(
          restrictOut(ownPairsOut(o), at.restricted),
          restrictOut(ownPairsOut(n), at.restricted),
        ).map((c) => ({
          ...c,
          what: `${prefix(at)}${c.what}`,
        }))
        : [{ effect: "change", what: `${prefix(at)}input schema known on one side only` }],
  ),
  outputSchema: rule("neither", "what an answer is promised to hold", (_o, _n, at) => [{
    effect: "change",
    what: `${prefix(at)}output schema changed`,
  }]),
  exclusive: rule(
    "either",
    "a mutually-exclusive group refuses calls that give two of it",
    (o, n, at) => {
      const key = (g: string[]) => [...g].sort().join(",");
      const a = (o ?? []).map(key);
      const b = (n ?? []).map(key);
      return [
        ...a.filter((g) => !b.includes(g)).map((g): Found => ({
          effect: "widen",
          what: `${prefix(at)}mutually-exclusive ${g} removed`,
        })),
        ...b.filter((g) => !a.includes(g)).map((g): Found => ({
          effect: "narrow",
          what: `${prefix(at)}mutually-exclusive ${g} added`,
        })),
      ];
    },
  ),
  fixedBody: widens(
    "another fixed body (or none) is a request the old file never sent",
    "fixed body",
    (v) => v === undefined ? "none" : JSON.stringify(v),
  ),
  pins: PINS,
  controls: { why: "what happens around each call", fields: CONTROLS },
  scopes: growthNarrows(
    "a scope a token must carry narrows who may call",
    (s) => `now needs scope ${s.replaceAll(", ", " ")}`,
    (s) => `no longer needs scope ${s.replaceAll(", ", " ")}`,
  ),
  interface: widens(
    "another interface resource is readable through weir",
    "interface",
    (v) => v ?? "none",
  ),
  acceptedFindings: {
    why: "an accepted finding serves a definition the scan would have stubbed",
    key: (f) => f.id,
    added: (f) => [{
      effect: "widen",
      what: `accepts finding ${f.id} of the definition scan (the tool is served with it)`,
    }],
    removed: (f) => [{ effect: "narrow", what: `no longer accepts finding ${f.id}` }],
    label: (f) => `accepted finding ${f.id}`,
    each: {
      id: ignored("the key findings are matched by"),
      pointer: changes("where in the definition; the acceptance is by id", "pointer"),
      reason: changes("the file's words", "reason"),
    },
  },
  withheld: {
    why: "a stub's words",
    fields: {
      reason: rule("neither", "words; the stub refuses either way", (_o, _n, at) => [{
        effect: "change",
        what: `${prefix(at)}withhold reason changed`,
      }]),
      alternative: changes("words; the stub refuses either way", "alternative", (v) => v ?? "none"),
    },
  },
};

/**
 * A grant's schema without the `allOf` pairs weir writes for its
 * `mutually-exclusive` groups (src/surface/input_schema.ts): the tool's
 * `exclusive` field reports those.
 */
function ownPairsOut(schema: JsonObject): JsonObject {
  if (!Array.isArray(schema.allOf)) return schema;
  const own = (x: unknown) =>
    typeof x === "object" && x !== null &&
    String(((x as JsonObject).not as JsonObject | undefined)?.description ?? "").startsWith(
      "send at most one of ",
    );
  const rest = schema.allOf.filter((x) => !own(x));
  const { allOf: _, ...out } = schema;
  return rest.length > 0 ? { ...out, allOf: rest } : out;
}

/** Granted (or proxied) is the widest kind; a stub and the info tool reach nothing. */
const REACHES = (t: Tool) => t.kind === "grant" || t.kind === "proxy";

/** The tools list: by name, with renames paired and a change of kind compared as a whole. */
export const TOOLS: List<Tool> = {
  why: "tools by name; a removed and an added tool doing the same operation are a rename",
  key: (t) => t.name,
  added: (t) =>
    REACHES(t)
      ? [{
        effect: "widen",
        what: `new tool: ${operationWords(t.operation, sqlReads(t))}${
          t.destructive ? " [destructive]" : ""
        }`,
      }]
      : [{ effect: "change", what: `new ${t.kind === "info" ? "info tool" : "withheld stub"}` }],
  removed: (t) =>
    REACHES(t)
      ? [{
        effect: "narrow",
        what: `tool removed (was ${operationWords(t.operation, sqlReads(t))})`,
      }]
      : [{
        effect: "change",
        what: `${t.kind === "info" ? "info tool" : "withheld stub"} removed`,
      }],
  label: () => "",
  each: TOOL,
  pair: (gone, come) => {
    const out: { old: Tool; next: Tool; found: Found[] }[] = [];
    const left = [...gone];
    for (const n of come) {
      if (!REACHES(n)) continue;
      const o = left.find((g) => g.kind === n.kind && sameOperation(g, n));
      if (!o) continue;
      left.splice(left.indexOf(o), 1);
      out.push({ old: o, next: n, found: [{ effect: "change", what: `renamed from ${o.name}` }] });
    }
    return out;
  },
  whole: (o, n) => {
    if (o.kind === n.kind) return undefined;
    if (REACHES(n) && !REACHES(o)) {
      return [{
        effect: "widen",
        what: `was ${o.kind === "withheld" ? "withheld" : "the info tool"}, now granted: ${
          operationWords(n.operation, sqlReads(n))
        }`,
      }];
    }
    if (REACHES(o) && !REACHES(n)) {
      return [{
        effect: "narrow",
        what: `was granted (${operationWords(o.operation, sqlReads(o))}), now ${
          n.kind === "withheld" ? "withheld" : "the info tool"
        }`,
      }];
    }
    return [{ effect: REACHES(n) ? "widen" : "change", what: `${o.kind} -> ${n.kind}` }];
  },
  context: (o, n, at) => ({
    ...at,
    schemasKnown: o.inputSchema !== undefined && n.inputSchema !== undefined,
    restricted: restrictedPatterns(o, n),
    hinted: o.kind === "proxy" && n.kind === "proxy",
    access: { old: o.access, next: n.access },
    destructive: { old: o.destructive, next: n.destructive },
    statedRead: [o, n].some((t) =>
      t.operation?.kind === "sql" && (t.operation.onlyReads?.length ?? 0) > 0
    ),
  }),
};

function sqlReads(t: Tool): boolean | undefined {
  return t.operation?.kind === "sql" ? t.access.reads : undefined;
}
