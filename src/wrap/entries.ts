/**
 * What serve-upstream serves under each name: a {@link ServedEntry} (a served
 * name, the MCP server's tool, the guardfile form's override and pins), its
 * state from the tool's decision ({@link entryState}), and the values of its
 * pins for one call ({@link pinValues}). Used by the host
 * (`host.ts`).
 *
 * @module
 */
import { mcpToolAccess } from "../guardfile/reads.ts";
import { WeirError } from "../errors/kinds.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { LogEvent } from "../mcp/options.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { ProfileError, profileSchema, type SchemaProfile } from "../mcp/schema_profile.ts";
import { MIN_SECRET_LENGTH, type Redactor } from "../guard/secrets.ts";
import { constrainedArguments, declaredArguments } from "../guard/name_twins.ts";
import {
  servable,
  type ServedTool,
  type StubbedTool,
  type ToolDecision,
} from "../mcp_upstream/decision.ts";
import {
  type CallTranslation,
  overrideTool,
  type ToolOverride,
} from "../mcp_upstream/overrides.ts";
import { type Finding, judgeFindings, scanTool, type ScanVerdict } from "../mcp_upstream/scan.ts";

/**
 * A value weir supplies for one of the MCP server's arguments (the guardfile
 * form's `pin "<tool>" { argument ... }`); the argument is not served.
 */
export interface EntryPin {
  /** The MCP server's argument name. */
  name: string;
  /** A literal value (its JSON type is the file's), or `undefined` when read per call. */
  literal?: string | number | boolean;
  /** Reads the value's text per call (converted to the argument's JSON type); `undefined`: unset. */
  read?: () => string | undefined;
  /** Where the value comes from, for messages (`env TEAM`): never the value. */
  source: string;
  /** Redact the value from answers like a credential. */
  secret: boolean;
}

/** One served tool: its name, the MCP server's tool, and the operator's changes. */
export interface ServedEntry {
  /** The name weir serves. */
  name: string;
  /** The MCP server's tool name. */
  upstream: string;
  /** Title, description, annotations and argument rules (the guardfile form). */
  override?: Partial<Omit<ToolOverride, "name" | "upstream" | "pinned">>;
  /** Arguments weir supplies (the guardfile form). */
  pins?: readonly EntryPin[];
  /**
   * Ids of the definition scan's findings the operator accepted
   * (`accept-finding` in the proxy block, `--accept-finding TOOL=ID`):
   * src/mcp_upstream/scan.ts.
   */
  accept?: readonly string[];
}

/**
 * Entries renamed onto the name of another of the MCP server's tools (a
 * caller would take one tool for the other), one message each naming both.
 * @param listed the names the MCP server lists
 */
export function renamedOntoListed(
  entries: readonly ServedEntry[],
  listed: readonly string[],
): string[] {
  const names = new Set(listed);
  return entries.flatMap((e) =>
    e.name !== e.upstream && names.has(e.name)
      ? [
        `tool "${e.name}" (the MCP server's "${e.upstream}") is renamed onto the name of ` +
        `the MCP server's own tool "${e.name}": choose a served name the MCP server does ` +
        `not use`,
      ]
      : []
  );
}

/** What one served entry serves now. */
export type EntryState =
  | {
    kind: "served";
    entry: ServedEntry;
    decision: ServedTool;
    /** The definition weir lists (overridden, links checked). */
    spec: ToolSpec;
    /** How a call is translated (the guardfile form); else `--pin`s apply. */
    translation?: CallTranslation;
    /** The definition scan of `spec`: its warnings and the findings the operator accepted. */
    scan: ScanVerdict;
  }
  | {
    kind: "stubbed";
    entry: ServedEntry;
    stub: StubbedTool;
    /** The operator's rules for it contradict its definition (not the MCP server's doing). */
    byRules?: true;
    /** The definition scan, when it ran (a `flagged` stub: its errors). */
    scan?: ScanVerdict;
  };

/**
 * What one entry serves, from its tool's decision: the decision's stub under
 * the served name; or the definition with the entry's override applied
 * (src/mcp_upstream/overrides.ts), a stub saying why when the override
 * contradicts it (`byRules`), or a read-only stub in read-only mode; under a
 * schema profile other than `full`, a tool the profile cannot list soundly is
 * an `unservable` stub naming the keyword (src/mcp/schema_profile.ts).
 */
export function entryState(
  entry: ServedEntry,
  decision: ToolDecision,
  readOnlyReason?: string,
  profile?: SchemaProfile,
): EntryState {
  const state = decidedState(entry, decision, readOnlyReason);
  if (state.kind !== "served" || profile === undefined || profile === "full") return state;
  try {
    profileSchema(state.spec.inputSchema as JsonObject, profile, `tool "${entry.name}"`);
  } catch (error) {
    if (!(error instanceof ProfileError)) throw error;
    // Listed under the profile it would admit arguments the MCP server's schema refuses.
    return entryStub(
      entry,
      state.decision,
      "unservable",
      `the ${profile} schema profile cannot list it: ${error.message}`,
      `serve with --schema-profile full (or schema-profile="full" in the guardfile's surface ` +
        `node), or stop serving the tool`,
    );
  }
  return state;
}

function decidedState(
  entry: ServedEntry,
  decision: ToolDecision,
  readOnlyReason?: string,
): EntryState {
  if (decision.status === "stubbed") {
    return { kind: "stubbed", entry, stub: { ...decision, name: entry.name } };
  }
  if (decision.status !== "served") throw new Error(`tool "${entry.upstream}" is missing`);
  if (!entry.override && !entry.pins?.length && entry.name === entry.upstream) {
    return scanned(entry, decision.served, decision, readOnlyReason);
  }
  const unservable = (reason: string, remedy: string): EntryState =>
    entryStub(entry, decision, "unservable", reason, remedy, { byRules: true });
  const overridden = overrideTool(decision.served, {
    arguments: [],
    ...entry.override,
    name: entry.name,
    upstream: entry.upstream,
    pinned: (entry.pins ?? []).map((p) => p.name),
  });
  if (!overridden.ok) {
    return unservable(
      `the guardfile's rules for it contradict the MCP server's definition: ${
        overridden.problems.join("; ")
      }`,
      "fix the proxy's rules in the guardfile, then reload",
    );
  }
  const literal = literalPins(entry, decision.definition);
  if (literal) return unservable(literal, "fix the pin in the guardfile, then reload");
  const problem = servable(overridden.served);
  if (problem) {
    return unservable(
      `weir cannot serve it with the guardfile's rules: ${problem}`,
      "fix the proxy's rules in the guardfile, then reload",
    );
  }
  return scanned(entry, overridden.served, decision, readOnlyReason, overridden.translation);
}

/**
 * The tool-poisoning scan of what the entry lists (src/mcp_upstream/scan.ts):
 * a `flagged` stub while an error is not accepted; else the read-only stub
 * in read-only mode, or the served state. The operator's own `title` and
 * `describe` are not read (they replace the MCP server's text).
 */
function scanned(
  entry: ServedEntry,
  spec: ToolSpec,
  decision: ServedTool,
  readOnlyReason: string | undefined,
  translation?: CallTranslation,
): EntryState {
  const skip = new Set<string>();
  if (entry.override?.title !== undefined) skip.add("/title");
  if (entry.override?.description !== undefined) skip.add("/description");
  const findings = scanTool(spec, { listed: decision.listed, skip });
  const scan = judgeFindings(findings, entry.accept);
  if (scan.errors.length > 0) {
    return entryStub(entry, decision, "flagged", flaggedReason(scan.errors), FLAGGED_REMEDY, {
      scan,
    });
  }
  return readOnly(entry, spec, decision, readOnlyReason) ??
    { kind: "served", entry, decision, spec, translation, scan };
}

/** What a `flagged` stub's remedy says. */
export const FLAGGED_REMEDY =
  "run weir lint-upstream to see the text, then replace it in the guardfile (describe, " +
  "title) or accept each finding by its id: accept-finding in the proxy block, " +
  "--accept-finding TOOL=ID on the command line";

/**
 * Why a flagged tool is not served, in words for an operator and a model:
 * the rules and where, never the offending text (a stub must not relay it).
 */
export function flaggedReason(errors: readonly Finding[]): string {
  const places = [...new Set(errors.map((f) => `${f.rule} in ${shownPlace(f.pointer)}`))];
  const shown = places.slice(0, 4).join(", ") + (places.length > 4 ? ", ..." : "");
  return `its definition failed weir's tool-poisoning scan (${shown})`;
}

/**
 * A finding's place as a stub may say it: an index, a field or keyword of a
 * definition, and a member the MCP server named (a property) when it is a
 * short identifier and not the last step (the last may be the flagged name
 * itself); anything else is `*`, so a poisoned property name does not reach
 * the model through the stub that withholds it.
 */
function shownPlace(pointer: string): string {
  if (pointer === "") return "the definition as a whole";
  const segments = pointer.split("/").slice(1);
  return segments.map((segment, i) =>
    /^\d+$/.test(segment) || KNOWN_MEMBERS.has(segment) ||
      (i < segments.length - 1 && /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/.test(segment))
      ? `/${segment}`
      : "/*"
  ).join("");
}

/** A tool definition's fields and the schema keywords (src/mcp_upstream/scan.ts reads them all). */
const KNOWN_MEMBERS = new Set([
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "_meta",
  "icons",
  "execution",
  "src",
  "properties",
  "items",
  "prefixItems",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "contains",
  "$defs",
  "definitions",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "required",
  "dependentSchemas",
  "dependentRequired",
  "default",
  "examples",
  "const",
  "enum",
  "pattern",
  "format",
  "type",
  "$ref",
  "$comment",
  "$id",
  "$schema",
  "contentMediaType",
  "contentEncoding",
]);

/** The read-only stub of a tool that does not say it reads only, in read-only mode. */
function readOnly(
  entry: ServedEntry,
  spec: ToolSpec,
  decision: ServedTool,
  reason: string | undefined,
): EntryState | undefined {
  // The one definition of read (src/guardfile/reads.ts); the served spec carries the
  // file's stated hint over the server's.
  if (reason === undefined || mcpToolAccess({ upstream: spec.annotations?.readOnlyHint }).reads) {
    return undefined;
  }
  return entryStub(entry, decision, "withheld", reason, "serve without read-only mode to call it");
}

/** An entry listed as a stub in place of a tool the MCP server defines (its definition kept). */
function entryStub(
  entry: ServedEntry,
  decision: ServedTool,
  why: StubbedTool["why"],
  reason: string,
  remedy: string,
  more: { byRules?: true; scan?: ScanVerdict } = {},
): EntryState {
  return {
    kind: "stubbed",
    entry,
    ...more,
    stub: {
      status: "stubbed",
      name: entry.name,
      why,
      reason,
      remedy,
      definition: decision.definition,
      fingerprint: decision.fingerprint,
    },
  };
}

/**
 * The values of a served entry's pins for this call (a secret one is added to `redactor`).
 * @throws {WeirError} `pin_missing` when one is unset, `pin_invalid` when it does not fit
 */
export function pinValues(
  state: Extract<EntryState, { kind: "served" }>,
  redactor: Redactor,
): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const pin of state.entry.pins ?? []) {
    let value: string | number | boolean;
    if (pin.literal !== undefined) {
      const typed = typeof pin.literal === "string"
        ? typedPin(pin.literal, state.decision.definition, pin.name)
        : pin.literal;
      if (typeof typed === "object") throw pinInvalid(state, pin, typed.problem);
      value = typed;
    } else {
      const text = pin.read?.();
      if (text === undefined || text === "") {
        throw new WeirError(
          "pin_missing",
          `the pinned argument "${pin.name}" of "${state.entry.name}" comes from ` +
            `${pin.source}, which is unset; set it (nothing was sent)`,
        );
      }
      const typed = typedPin(text, state.decision.definition, pin.name);
      if (typeof typed === "object") throw pinInvalid(state, pin, typed.problem);
      value = typed;
    }
    if (pin.secret) {
      // A secret the MCP server types as a number is redacted as its digits.
      const text = String(value);
      if (text.length < MIN_SECRET_LENGTH) {
        throw pinInvalid(
          state,
          pin,
          `is shorter than ${MIN_SECRET_LENGTH} characters, too short to redact; weir will ` +
            `not send it`,
        );
      }
      redactor.add(text);
    }
    out.set(pin.name, value);
  }
  return out;
}

function pinInvalid(
  state: Extract<EntryState, { kind: "served" }>,
  pin: EntryPin,
  problem: string,
): WeirError {
  return new WeirError(
    "pin_invalid",
    `the pinned argument "${pin.name}" of "${state.entry.name}" (${pin.source}) ${problem}; ` +
      `fix it (nothing was sent)`,
  );
}

/**
 * A pin's text as the argument's JSON type (the MCP server's schema: string,
 * integer, number or boolean), or why it does not fit.
 */
export function typedPin(
  text: string,
  definition: ToolSpec,
  arg: string,
): string | number | boolean | { problem: string } {
  const properties = (definition.inputSchema?.properties ?? {}) as Record<string, unknown>;
  const property = Object.hasOwn(properties, arg)
    ? properties[arg] as Record<string, unknown>
    : undefined;
  const types = [property?.type].flat().filter((t) => typeof t === "string");
  if (types.length === 0 || types.includes("string")) return text;
  if (types.includes("integer") || types.includes("number")) {
    const n = Number(text);
    if (
      text.trim() !== "" && Number.isFinite(n) && (types.includes("number") || Number.isInteger(n))
    ) {
      return n;
    }
    return { problem: `is not ${types.includes("number") ? "a number" : "an integer"}` };
  }
  if (types.includes("boolean")) {
    if (text === "true" || text === "false") return text === "true";
    return { problem: `is not true or false` };
  }
  return {
    problem: `cannot be written as ${types.join(" or ")}; pins hold strings, numbers and booleans`,
  };
}

/** Why a literal pin of an entry does not fit its argument, or `undefined`. */
function literalPins(entry: ServedEntry, definition: ToolSpec): string | undefined {
  for (const pin of entry.pins ?? []) {
    if (typeof pin.literal !== "string") continue;
    const typed = typedPin(pin.literal, definition, pin.name);
    if (typeof typed === "object") {
      return `the pinned argument "${pin.name}" (${pin.source}) ${typed.problem}`;
    }
  }
  return undefined;
}

/** Whether two decisions of a tool came from listings that name the same tools. */
export function sameListing(a: ToolDecision, b: ToolDecision): boolean {
  const x = a.status === "served" ? a.listed : undefined;
  const y = b.status === "served" ? b.listed : undefined;
  if (x === y) return true;
  if (!x || !y || x.length !== y.length) return false;
  const names = new Set(x);
  return y.every((n) => names.has(n));
}

/**
 * The audit line of an entry whose definition the scan had something to say
 * about (src/mcp_upstream/scan.ts): the findings' ids and places (never the
 * text), whether the tool is served; `key` is the same for the same served
 * name and definition (log it once). `undefined` when there is nothing to say.
 */
export function scanAuditLine(
  state: EntryState,
): { key: string; record: LogEvent } | undefined {
  const scan = state.scan;
  if (!scan) return undefined;
  if (scan.errors.length + scan.warnings.length + scan.accepted.length === 0) return undefined;
  const print = state.kind === "served" ? state.decision.fingerprint : state.stub.fingerprint;
  const brief = (fs: readonly Finding[]) => fs.map((f) => `${f.id} ${f.pointer}`);
  return {
    key: `${state.entry.name}\n${print}`,
    record: {
      level: scan.errors.length > 0 ? "error" : scan.warnings.length > 0 ? "warn" : "info",
      event: "upstream_definition_scan",
      tool: state.entry.name,
      upstream: state.entry.upstream,
      served: state.kind === "served",
      ...(scan.errors.length ? { errors: brief(scan.errors) } : {}),
      ...(scan.warnings.length ? { warnings: brief(scan.warnings) } : {}),
      ...(scan.accepted.length ? { accepted: brief(scan.accepted) } : {}),
      ...(scan.unmatched.length ? { unmatched: scan.unmatched } : {}),
    },
  };
}

/**
 * The MCP server's argument names for the name-twin check of a call
 * (src/guard/name_twins.ts): those its schema declares, and those a rule
 * holds, as the server names them (its own schema's value rules, the served
 * schema's, `--pin`s, and the guardfile's hidden, pinned, renamed-away and
 * restricted arguments).
 */
export function argumentNames(
  state: Extract<EntryState, { kind: "served" }>,
): [declared: string[], constrained: string[]] {
  const schema = state.decision.definition.inputSchema;
  const t = state.translation;
  const upstream = (k: string) => t?.renames.get(k) ?? k;
  return [declaredArguments(schema), [
    ...constrainedArguments(schema),
    ...constrainedArguments(state.spec.inputSchema).map(upstream),
    ...state.decision.pins.map((p) => p.arg),
    ...(t ? [...t.forbidden, ...[...t.restricted.keys()].map(upstream)] : []),
  ]];
}
