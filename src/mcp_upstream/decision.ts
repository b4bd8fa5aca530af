/**
 * What weir does with each allowlisted tool, decided in one place:
 * {@link decideTools} takes a listing of the upstream's tools (every page)
 * and answers, per allowlisted tool, one {@link ToolDecision}:
 *
 * - `served`: the upstream's definition (pinned arguments no longer
 *   `required`) passed every check the MCP core makes of a catalog entry
 *   (tool name, an object root, every schema keyword enforceable, `$ref`s
 *   that resolve, `x-mcp-header` rules), and is advertised as written;
 * - `stubbed`: listed as a withheld stub whose description starts
 *   `NOT AVAILABLE:`, gives the reason and what the operator can do, and
 *   refuses every call without reaching the upstream. `why` says which kind:
 *   `drifted` (its fingerprint is not the baseline's), `unservable` (weir
 *   cannot enforce its schema, a `--pin` does not fit it, or the upstream
 *   lists it twice with different definitions), `withheld` (the caller's own
 *   reason, through {@link SurfaceInput.withhold});
 * - `missing`: the upstream does not list it (with the nearest names).
 *
 * Who calls it, so that they cannot disagree: `lint-upstream` once, and
 * prints each decision (`present` for served, `drifted`, `unservable`,
 * `withheld`, `missing`) with the stub's own reason; `serve-upstream` at
 * start-up (a missing tool stops it; every other tool is served or stubbed)
 * and at every re-verification of the surface (today before each call; a
 * later schedule may re-verify on the upstream's signals instead), passing
 * the start-up fingerprints as the baseline so that a tool whose definition
 * changed becomes a `drifted` stub while the others keep serving. A
 * re-verification schedule, a `--read-only` policy or an override calls the
 * same function: the stub mechanism takes any reason.
 *
 * Pure apart from hashing (`crypto.subtle`): no I/O.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { CatalogError, prepareCatalog } from "../mcp/catalog.ts";
import { patternsIn, prepareBacktracking } from "../mcp/backtracking.ts";
import { loadAnalysis } from "../ops/pattern_check.ts";
import { cleanDeep, cleanText } from "../mcp/text.ts";
import { nearestNames } from "./allowlist.ts";
import { canonicalJson, fingerprint } from "./fingerprint.ts";
import { fitPins, type InjectedPin, pinnedDefinition } from "./pins.ts";

/** `_meta` key marking a stub (the same key spec mode's withheld stubs carry). */
export const WITHHELD_META = "weir.dev/withheld";

/** An allowlisted tool weir serves. */
export interface ServedTool {
  status: "served";
  name: string;
  /** The upstream's definition, unchanged. */
  definition: ToolSpec;
  /** What weir advertises (pinned arguments not required; clean text). */
  served: ToolSpec;
  /** `sha256:<hex>` of the upstream's definition. */
  fingerprint: string;
  pins: InjectedPin[];
  /**
   * Every tool name the upstream lists (the same array for every decision of
   * one listing): the definition scan's `tool-reference` rule reads a name
   * among them as the server's own tool, not another server's.
   */
  listed: readonly string[];
}

/** An allowlisted tool weir lists as a stub that refuses every call. */
export interface StubbedTool {
  status: "stubbed";
  name: string;
  /**
   * `flagged`: the definition as weir would list it failed the
   * tool-poisoning scan (src/mcp_upstream/scan.ts; decided per served entry,
   * src/wrap/entries.ts).
   */
  why: "drifted" | "unservable" | "withheld" | "flagged";
  /** Why it is not served, in words an operator and a model can read. */
  reason: string;
  /** What the operator can do about it. */
  remedy: string;
  /** The upstream's definition and its fingerprint, when it lists one. */
  definition?: ToolSpec;
  fingerprint?: string;
}

/** An allowlisted tool the upstream does not list. */
export interface MissingTool {
  status: "missing";
  name: string;
  /** The nearest names the upstream does list. */
  nearest: string[];
}

/** One allowlisted tool's decision. */
export type ToolDecision = ServedTool | StubbedTool | MissingTool;

/** What {@link decideTools} decides from. */
export interface SurfaceInput {
  /** The parsed allowlist (decisions come back in its order). */
  allowlist: readonly string[];
  /** Every tool the upstream lists (all pages). */
  listed: readonly ToolSpec[];
  /** `--pin` values: tool -> argument -> value as written. */
  pins?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /**
   * Fingerprints each tool is held to; a tool listed with another one, or
   * no longer listed by a running server, is `drifted`. `since` completes
   * "changed upstream since ..." (`weir started`, `the fingerprints were
   * written`); `running` is true for a re-verification of a running server
   * (a tool no longer listed is then a stub; elsewhere it is `missing`).
   */
  baseline?: { fingerprints: ReadonlyMap<string, string>; since: string; running: boolean };
  /** Any other reason not to serve a tool (a policy): `undefined` serves it. */
  withhold?: (name: string, definition: ToolSpec) => { reason: string; remedy: string } | undefined;
}

const REVIEW = "re-review the tool's new definition, then restart weir";

/**
 * Decide every allowlisted tool (see the module doc).
 * @returns one decision per allowlisted name, in allowlist order
 */
export async function decideTools(input: SurfaceInput): Promise<ToolDecision[]> {
  // A pattern that can backtrack exponentially stubs its tool (servable); the analysis loads
  // only when a listed pattern has a quantified group.
  await prepareBacktracking(patternsIn(input.listed), loadAnalysis);
  const byName = new Map<string, ToolSpec[]>();
  for (const tool of input.listed) {
    if (typeof tool?.name !== "string") continue;
    const list = byName.get(tool.name) ?? [];
    list.push(tool);
    byName.set(tool.name, list);
  }
  const decisions: ToolDecision[] = [];
  const listed = [...byName.keys()];
  for (const name of input.allowlist) {
    decisions.push(await decideOne(name, byName, listed, input));
  }
  return decisions;
}

async function decideOne(
  name: string,
  byName: ReadonlyMap<string, ToolSpec[]>,
  listed: readonly string[],
  input: SurfaceInput,
): Promise<ToolDecision> {
  const entries = byName.get(name);
  const base = input.baseline?.fingerprints.get(name);
  const stub = (
    why: StubbedTool["why"],
    reason: string,
    remedy: string,
    definition?: ToolSpec,
    print?: string,
  ): StubbedTool => ({
    status: "stubbed",
    name,
    why,
    reason: cleanText(reason),
    remedy,
    definition,
    fingerprint: print,
  });
  if (!entries) {
    if (base !== undefined && input.baseline?.running) {
      return stub("drifted", "the upstream no longer lists it", REVIEW);
    }
    return { status: "missing", name, nearest: nearestNames(name, [...byName.keys()]) };
  }
  const distinct = [...new Map(entries.map((e) => [canonicalJson(e), e])).values()];
  const definition = distinct[0];
  const print = await fingerprint(definition);
  const twice = "the upstream lists it more than once, with different definitions";
  if (base !== undefined) {
    const prints = await Promise.all(distinct.map(fingerprint));
    if (prints.some((p) => p !== base)) {
      return stub(
        "drifted",
        distinct.length > 1
          ? twice
          : `its definition changed upstream since ${input.baseline!.since}`,
        input.baseline!.running ? REVIEW : "re-review the tool, then write the fingerprints again",
        distinct.length > 1 ? undefined : definition,
        distinct.length > 1 ? undefined : print,
      );
    }
  }
  if (distinct.length > 1) {
    return stub("unservable", twice, "fix the upstream so that it lists the tool once");
  }
  const policy = input.withhold?.(name, definition);
  if (policy) return stub("withheld", policy.reason, policy.remedy, definition, print);
  const pins = input.pins?.get(name);
  const fitted = pins ? fitPins(name, definition, pins) : [];
  if (typeof fitted === "string") {
    return stub("unservable", fitted, "fix or drop the --pin", definition, print);
  }
  // Clean text out: an upstream's description or title is text weir emits.
  const served = cleanDeep(pinnedDefinition(definition, fitted));
  const problem = servable(served);
  if (problem) {
    return stub(
      "unservable",
      `weir cannot serve its definition: ${problem}`,
      `have the upstream fix the tool's schema, or drop --tool ${name}`,
      definition,
      print,
    );
  }
  return { status: "served", name, definition, served, fingerprint: print, pins: fitted, listed };
}

/** Why the core would refuse this tool in a catalog, or `undefined` when it would not. */
export function servable(tool: ToolSpec): string | undefined {
  try {
    prepareCatalog(
      { tools: [tool], resources: [], prompts: [] },
      { dispatch: true, readResource: false, getPrompt: false },
    );
    return undefined;
  } catch (error) {
    if (error instanceof CatalogError) return error.message;
    return `the MCP core refused it (${(error as Error).message})`;
  }
}

/** The stub weir lists for a tool it does not serve: it states why and refuses every call. */
export function stubTool(decision: StubbedTool): ToolSpec {
  const meta: JsonObject = { [WITHHELD_META]: true };
  return {
    name: decision.name,
    title: `Not available: ${decision.name}`,
    description: `NOT AVAILABLE: ${
      stubWords(decision)
    }. Calling it always fails and reaches nothing.`,
    inputSchema: { type: "object" },
    annotations: {
      title: `Not available: ${decision.name}`,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: meta,
  };
}

/** The reason and the remedy as one sentence: the words every report of a stub uses. */
export function stubWords(decision: StubbedTool): string {
  return `${decision.reason} (${decision.remedy})`;
}
