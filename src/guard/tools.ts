/**
 * Grant -> MCP tool: the name, the input schema derived from the grant's path,
 * query and body, a description, annotations from the method and verb. Also
 * the withheld stubs and the info tool. The schema built here is the one
 * advertised and the one enforced.
 *
 * Schemas are JSON Schema 2020-12 (MCP's default dialect) and close every
 * object with `additionalProperties: false`, so an undeclared argument is
 * refused by name rather than dropped. Value rules (`pattern`, `minLength`,
 * `maxLength`, `enum`, bounds) appear as those keywords; an optional input
 * also admits `null`, which means "not given" (nothing is sent for it).
 *
 * The surface is lean because a model reads every token of it on every turn
 * (docs/performance.md, "Context"): what every tool shares is said once, in the
 * server's `instructions` ({@link INSTRUCTIONS_PREAMBLE}: the result envelope,
 * `null` as "not given"), not per tool; a tool carries no `outputSchema`
 * (the envelope is the same for every grant) and no `title` that only repeats
 * its name; annotations carry only values that differ from the MCP defaults
 * (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
 * `openWorldHint` true, MCP 2025-11-25 `ToolAnnotations`). What the guard
 * enforces beyond the schema keywords is said once where it holds for every
 * URL value (the metacharacter gate; a path value is one segment) and on the
 * input where it is particular, in a few words: `slashes`, an input that opts
 * out of the gate ({@link gateOff}); a `restrict` is its schema's `pattern`
 * (src/surface/input_schema.ts).
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolAnnotations, ToolSpec } from "../mcp/types.ts";
import type { Grant, Guardfile, Withhold } from "../guardfile/model.ts";
import { grantReadsOnly } from "../guardfile/surface.ts";
import { grantInputSchema } from "../surface/input_schema.ts";
import { WeirError } from "../errors/kinds.ts";

/** `_meta` key marking a withheld stub. */
export const WITHHELD_META = "weir.dev/withheld";

/**
 * The fixed preamble of a guardfile server's `instructions`: what every tool
 * shares, said once instead of on each tool.
 */
export const INSTRUCTIONS_PREAMBLE: string =
  "This server exposes only the policy-approved tools of one upstream API, each exactly as " +
  "granted. A tool whose description starts NOT AVAILABLE was withheld on purpose: do not try " +
  "to reach that operation another way. Optional inputs may be null, which means not given. " +
  "A value sent in the URL (a {name} in a tool's path, or a query parameter) may not contain " +
  "` $ ; & | < > ( ) { } \\ unless its description says any characters, and a path value is " +
  'one segment (no /) unless its description says otherwise. Each result is {"coverage": ' +
  '{...}, "result": ...}: read coverage first. It gives the answer\'s bytes, over_budget ' +
  "(over 8 KiB), the length of every array (items, by dotted path), truncated, and for " +
  "documents and feeds pages/entries {shown, total}.";

/** `get_issue` -> `Get issue` (underscores and hyphens become spaces). */
export function titleOf(tool: string): string {
  const spaced = tool.replace(/[_-]+/g, " ").trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/**
 * The derived description when a grant has no `describe`: the verb and the
 * resource, and the HTTP request (a model that knows the API knows it by
 * its path) or, for sql, what kind of statement it runs.
 */
export function describeGrant(grant: Grant, server: string): string {
  const words = `${grant.verb} ${grant.resource}`.replace(/[_-]+/g, " ");
  const head = `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
  if (grant.sql) {
    // "Read-only" only where the statement is proven to read (src/guardfile/reads.ts).
    return `${head} in the ${server} database ` +
      (!grant.sql.reads
        ? `(a write; returns rows_affected).`
        : grantReadsOnly(grant)
        ? `(a read-only query returning at most ${grant.sql.maxRows} rows).`
        : `(a query in a read-only transaction, returning at most ${grant.sql.maxRows} rows; ` +
          `not proven to read).`);
  }
  return `${head}: ${grant.method} ${grant.path}.`;
}

/** The tool a grant mints. */
export function grantTool(grant: Grant, guardfile: Guardfile): ToolSpec {
  const readOnly = grantReadsOnly(grant);
  const idempotent = readOnly ||
    (!grant.sql && (grant.method === "PUT" || grant.method === "DELETE"));
  return {
    name: grant.tool,
    description: grant.describe ?? describeGrant(grant, guardfile.name),
    inputSchema: grantInputSchema(grant, guardfile.restricts),
    annotations: leanAnnotations({
      readOnlyHint: readOnly,
      destructiveHint: grant.destructive,
      idempotentHint: idempotent,
      openWorldHint: true,
    }),
  };
}

/** The MCP defaults of `ToolAnnotations` (2025-11-25 schema). */
const ANNOTATION_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * Annotations with only what differs from the MCP defaults, so a client reads
 * the same hints from fewer tokens. `destructiveHint` and `idempotentHint` are
 * meaningful only when `readOnlyHint` is false (the schema says so), so a
 * read-only tool carries neither.
 */
export function leanAnnotations(hints: Required<Omit<ToolAnnotations, "title">>): ToolAnnotations {
  const out: ToolAnnotations = {};
  for (const key of Object.keys(ANNOTATION_DEFAULTS) as (keyof typeof ANNOTATION_DEFAULTS)[]) {
    if (hints.readOnlyHint && (key === "destructiveHint" || key === "idempotentHint")) continue;
    if (hints[key] !== ANNOTATION_DEFAULTS[key]) out[key] = hints[key];
  }
  return out;
}

/**
 * The refusal of a call to a withheld tool (kind `verb_withheld`, 403): the
 * reason and, when the guardfile names one, the tool to use instead, in the
 * text and in `structuredContent` (`{error, tool, reason, alternative?}`).
 */
export function withheldCallError(name: string, w: Withhold): WeirError {
  const structured: JsonObject = { error: "verb_withheld", tool: name, reason: w.reason };
  if (w.alternative) structured.alternative = w.alternative;
  return new WeirError(
    "verb_withheld",
    `"${name}" is withheld by policy and reaches nothing. ${w.reason}` +
      (w.alternative ? ` Use "${w.alternative}" instead.` : ""),
    { structuredContent: structured },
  );
}

/** The stub a `withhold` lists: it states the reason and refuses every call. */
export function withheldTool(w: Withhold): ToolSpec {
  return withheldStub(w.tool, w.reason, w.alternative);
}

/**
 * A withheld stub: listed so a model knows the operation exists and is not
 * for it, refusing every call. `reason` is the guardfile's (or the mode's,
 * e.g. "read-only mode").
 */
export function withheldStub(tool: string, reason: string, alternative?: string): ToolSpec {
  const instead = alternative ? ` Use ${alternative} instead.` : "";
  const meta: JsonObject = { [WITHHELD_META]: true };
  if (alternative) meta[`${WITHHELD_META}/alternative`] = alternative;
  return {
    name: tool,
    description: `NOT AVAILABLE: ${reason}${instead}`,
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: true, openWorldHint: false },
    _meta: meta,
  };
}

/** The read-only info tool. */
export function infoTool(name: string, _guardfile: Guardfile): ToolSpec {
  return {
    name,
    description: "This server's tools and withheld operations; reads nothing upstream.",
    inputSchema: { type: "object", additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}
