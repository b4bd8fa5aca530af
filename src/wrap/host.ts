/**
 * The host of the wrap mode, both forms: the catalog weir serves for the
 * served entries over one connection to the MCP server, each entry's state,
 * and the re-verification of the surface. A call passes the control pipeline
 * (src/guard/pipeline.ts) with the wrap mode's stages (`call.ts`), which read
 * the host's state.
 *
 * The catalog is the allowlist's {@link ToolDecision}s (`decision.ts`): a
 * served tool as the upstream defines it, a stubbed one as a `NOT
 * AVAILABLE` stub. {@link UpstreamHost.reverify} lists the upstream's tools
 * again and decides again against the start-up fingerprints; a tool whose
 * definition changed becomes a `drifted` stub until weir restarts (logged
 * once as `upstream_drift`), the other tools keep serving, and `onChanged`
 * is told (so clients that listen hear the list changed).
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { CallerIdentity } from "./identity.ts";
import { WeirError } from "../errors/kinds.ts";
import type { Catalog } from "../mcp/types.ts";
import { MIN_SECRET_LENGTH, Redactor } from "../guard/secrets.ts";
import { untilAborted } from "../outbound/deadline.ts";
import { CoalescedCheck } from "../mcp_upstream/coalesced_check.ts";
import type { UpstreamConnection } from "../mcp_upstream/connection.ts";
import {
  decideTools,
  type ServedTool,
  stubTool,
  stubWords,
  type SurfaceInput,
  type ToolDecision,
} from "../mcp_upstream/decision.ts";
import { HeaderError, type HeaderTemplate, resolveHeaders } from "../mcp_upstream/headers.ts";
import { heldPins, type ToolPins, toolPins } from "../mcp_upstream/pins.ts";
import {
  type EntryState,
  entryState,
  pinValues,
  sameListing,
  scanAuditLine,
  type ServedEntry,
} from "./entries.ts";
import { DEFAULT_MAX_STALENESS_MS, Freshness } from "../mcp_upstream/freshness.ts";
import { readableResources, withServedLinks } from "../mcp_upstream/apps.ts";
import type { SchemaProfile } from "../mcp/schema_profile.ts";

export type { EntryPin, EntryState, ServedEntry } from "./entries.ts";

/** Options of {@link UpstreamHost}. */
export interface UpstreamHostOptions {
  connection: UpstreamConnection;
  /** The MCP server's tools to serve (the command line's allowlist, or the proxies' upstream names). */
  allowlist: readonly string[];
  /** What is served under which name (default: each allowlisted tool under its own name). */
  entries?: readonly ServedEntry[];
  /** `--pin` values (the command-line form). */
  pins?: SurfaceInput["pins"];
  withhold?: SurfaceInput["withhold"];
  /** The MCP server's header templates: their secrets are redacted from answers. */
  headers: readonly HeaderTemplate[];
  log: Logger;
  /** Told when the listed surface changed (a tool became a stub). */
  onChanged?: () => void;
  /**
   * The oldest a verification of the MCP server's definitions may be when a
   * call is forwarded, in ms (default {@link DEFAULT_MAX_STALENESS_MS}; 0:
   * before every call). See src/mcp_upstream/freshness.ts.
   */
  maxStalenessMs?: number;
  /**
   * MCP Apps (src/mcp_upstream/apps.ts): when set, the MCP server's resources
   * readable through weir are the `ui://` interfaces served tools link to and
   * these URIs, and a served tool's link to any other resource is removed
   * from what is listed. Unset (the command-line form): no resource is
   * readable and tools are listed as the MCP server defines them.
   */
  resourceUris?: readonly string[];
  /**
   * Read-only mode: a tool whose served annotations do not say
   * `readOnlyHint: true` is listed as a stub giving this reason.
   */
  readOnlyReason?: string;
  /**
   * The schema profile `tools/list` uses: a tool it cannot list soundly is a
   * stub saying why (one tool, not the whole list, is then unusable).
   */
  schemaProfile?: SchemaProfile;
  /**
   * The fingerprints to hold tools to instead of the start-up decisions'
   * (a reload that keeps the connection: the running surface's, so a tool
   * that drifted since weir started stays a stub).
   */
  baseline?: ReadonlyMap<string, string>;
  /** Token exchange: the caller's identity upstream (src/wrap/identity.ts). */
  identity?: CallerIdentity;
}

/** See the module doc. */
export class UpstreamHost {
  readonly #options: UpstreamHostOptions;
  readonly #entries: readonly ServedEntry[];
  #decisions: Map<string, ToolDecision>;
  #states = new Map<string, EntryState>();
  #catalog: Catalog;
  readonly #baseline: Map<string, string>;
  readonly #pins = new Map<string, ToolPins>();
  readonly #checks: CoalescedCheck;
  readonly #freshness: Freshness;
  #readable: ReadonlySet<string> = new Set();
  readonly #scanAudited = new Set<string>();

  /**
   * @param decisions the start-up decisions (none `missing`): they are the baseline
   * @param verified when the listing they came from began ({@link UpstreamHost.now}),
   *   and its `ttlMs`
   */
  constructor(
    decisions: readonly ToolDecision[],
    options: UpstreamHostOptions,
    verified?: { at: number; ttlMs?: number },
  ) {
    this.#options = options;
    this.#entries = options.entries ??
      options.allowlist.map((name) => ({ name, upstream: name }));
    this.#decisions = new Map(decisions.map((d) => [d.name, d]));
    this.#baseline = new Map();
    for (const d of decisions) {
      if (d.status === "missing") throw new Error(`tool "${d.name}" is missing`);
      const held = options.baseline?.get(d.name) ?? d.fingerprint;
      if (held) this.#baseline.set(d.name, held);
    }
    this.#freshness = new Freshness(options.maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS);
    if (verified) this.#freshness.verified(verified.at, verified.ttlMs);
    this.#catalog = this.#build();
    this.#checks = new CoalescedCheck(() => this.#reverifyNow());
  }

  /** The freshness clock's reading, for the start-up listing's time. */
  static now(): number {
    return performance.now();
  }

  /** What each served entry serves now, in entry order (describe and lint read it). */
  served(): readonly EntryState[] {
    return this.#entries.map((e) => this.#states.get(e.name)!);
  }

  /** The arguments of tool `name` the server sets, with why (the core's `heldArguments`). */
  held(name: string): ReadonlyMap<string, string> | undefined {
    const state = this.#states.get(name);
    if (state?.kind !== "served") return undefined;
    if (state.translation) return state.translation.held;
    // The command-line form: its --pins (asked only of a call the schema refused).
    return state.decision.pins.length > 0 ? heldPins(state.decision.pins) : undefined;
  }

  /** The MCP server's resources readable through weir now (see {@link UpstreamHostOptions.resourceUris}). */
  readable(): ReadonlySet<string> {
    return this.#readable;
  }

  /** The fingerprints the tools are held to (the definitions reviewed when weir started). */
  baseline(): ReadonlyMap<string, string> {
    return new Map(this.#baseline);
  }

  /** The MCP server said its tool list changed: the next call verifies first. */
  toolsChanged(): void {
    this.#freshness.changed();
  }

  /** The catalog to serve now (the same object until the surface changes). */
  catalog(): Catalog {
    return this.#catalog;
  }

  /** The current decision of every allowlisted tool, in allowlist order. */
  decisions(): ToolDecision[] {
    return this.#options.allowlist.map((name) => this.#decisions.get(name)!);
  }

  /**
   * List the upstream's tools and decide again (shared by concurrent callers;
   * never a listing begun before the call).
   * @throws {UpstreamFailure} when the listing fails
   */
  reverify(signal?: AbortSignal): Promise<void> {
    const check = this.#checks.check();
    return signal ? untilAborted(check, signal) : check;
  }

  async #reverifyNow(): Promise<void> {
    const { connection, allowlist, pins, withhold, log } = this.#options;
    const startedAt = performance.now();
    const { tools: listed, ttlMs } = await connection.listToolsWithTtl();
    const next = await decideTools({
      allowlist,
      listed,
      pins,
      withhold,
      baseline: { fingerprints: this.#baseline, since: "weir started", running: true },
    });
    let changed = false;
    for (let decision of next) {
      const now = this.#decisions.get(decision.name)!;
      if (decision.status === "missing") {
        decision = {
          status: "stubbed",
          name: decision.name,
          why: "drifted",
          reason: "the upstream no longer lists it",
          remedy: "re-review the tool's new definition, then restart weir",
        };
      }
      // A drifted tool stays a stub until restart; an unchanged one keeps its entry.
      if (now.status === "stubbed" && now.why === "drifted") continue;
      if (decision.status === "stubbed" && decision.why === "drifted") {
        log({
          level: "error",
          event: "upstream_drift",
          tool: decision.name,
          reason: decision.reason,
        });
      } else if (
        decision.status === now.status &&
        decision.fingerprint === (now as { fingerprint?: string }).fingerprint &&
        sameListing(decision, now)
      ) {
        continue;
      }
      this.#decisions.set(decision.name, decision);
      this.#pins.delete(decision.name);
      changed = true;
    }
    this.#freshness.verified(startedAt, ttlMs);
    if (changed) {
      const before = this.#catalog;
      this.#catalog = this.#build();
      // Only the other names the server lists changed: the scan read them, the list may not have.
      if (JSON.stringify(before.tools) === JSON.stringify(this.#catalog.tools)) {
        this.#catalog = before;
        return;
      }
      this.#options.onChanged?.();
    }
  }

  /** The scan's audit line of an entry, once per definition (`scanAuditLine`, entries.ts). */
  #auditScan(state: EntryState): void {
    const line = scanAuditLine(state);
    if (!line || this.#scanAudited.has(line.key)) return;
    this.#scanAudited.add(line.key);
    this.#options.log(line.record);
  }

  #build(): Catalog {
    const states = new Map<string, EntryState>();
    for (const entry of this.#entries) {
      const decision = this.#decisions.get(entry.upstream)!;
      states.set(
        entry.name,
        entryState(
          entry,
          decision,
          this.#options.readOnlyReason,
          this.#options.schemaProfile,
        ),
      );
    }
    // Links to interfaces: only to resources weir serves (apps.ts).
    const uris = this.#options.resourceUris;
    this.#readable = uris
      ? readableResources(
        [...states.values()].flatMap((s) => s.kind === "served" ? [s.spec] : []),
        uris,
      )
      : new Set();
    const tools = this.#entries.map((e) => {
      const state = states.get(e.name)!;
      if (state.kind === "stubbed") return stubTool(state.stub);
      return uris ? withServedLinks(state.spec, this.#readable) : state.spec;
    });
    this.#states = states;
    for (const state of states.values()) this.#auditScan(state);
    return { tools, resources: [], prompts: [] };
  }

  /** The state of the served entry `name`, or `undefined` for a name not served. */
  state(name: string): EntryState | undefined {
    return this.#states.get(name);
  }

  /**
   * How fresh the last verification of the MCP server's definitions is
   * (src/mcp_upstream/freshness.ts): `stale` (verify before the call),
   * `refresh` (verify in the background) or `fresh`.
   */
  freshness(): ReturnType<Freshness["state"]> {
    return this.#freshness.state();
  }

  /** The pins of a served tool of the command-line form (`--pin`), made once per decision. */
  pinsOf(decision: ServedTool): ToolPins {
    let pinned = this.#pins.get(decision.name);
    if (!pinned) {
      this.#pins.set(decision.name, pinned = toolPins(decision.definition, decision.pins));
    }
    return pinned;
  }

  /** The connection the host forwards calls on. */
  get connection(): UpstreamConnection {
    return this.#options.connection;
  }

  /** The MCP server's header templates (their secrets are redacted from answers). */
  get headers(): readonly HeaderTemplate[] {
    return this.#options.headers;
  }

  /** Token exchange: the caller's identity upstream, when the host sends it. */
  get identity(): CallerIdentity | undefined {
    return this.#options.identity;
  }

  /** Where the host logs. */
  get log(): Logger {
    return this.#options.log;
  }

  /**
   * The served state of `name`, for a call.
   * @throws {WeirError} `policy_denied` (rule `allowlist`) for a name not
   *   served; `schema_drift` (rule `fingerprint`) or `tool_unavailable` (rule
   *   `withheld`) when it is a stub
   */
  servedState(name: string): Extract<EntryState, { kind: "served" }> {
    const state = this.#states.get(name);
    if (!state) {
      throw new WeirError("policy_denied", `tool "${name}" is not on the allowlist`, {
        rule: "allowlist",
      });
    }
    if (state.kind === "served") return state;
    const stub = state.stub;
    if (stub.why === "drifted") {
      throw new WeirError(
        "schema_drift",
        `tool "${name}": ${stub.reason}; weir refuses it until restarted (${stub.remedy})`,
        { rule: "fingerprint", reason: "the definition changed upstream since start-up" },
      );
    }
    throw new WeirError(
      "tool_unavailable",
      `tool "${name}" is not available: ${stubWords(stub)}; nothing was sent`,
      { reason: `not served (${stub.why})` },
    );
  }
}

/**
 * Resolve the header templates now and return the secrets in them.
 * @throws {HeaderError} when one cannot be read, or is shorter than
 *   {@link MIN_SECRET_LENGTH} characters (too short to redact from answers
 *   without mangling ordinary text, so weir will not send it)
 */
export function headerSecrets(headers: readonly HeaderTemplate[]): string[] {
  const { secrets } = resolveHeaders(headers);
  if (secrets.some((s) => s.length < MIN_SECRET_LENGTH)) {
    throw new HeaderError(
      `an --upstream-header secret is shorter than ${MIN_SECRET_LENGTH} characters: weir ` +
        `cannot redact so short a value from answers, so it refuses to send it`,
    );
  }
  return secrets;
}

/**
 * A {@link Redactor} of the header secrets as they read now (none registered
 * when they cannot be read: nothing is sent with them then). For text weir
 * writes that may quote the upstream: log lines, start-up messages,
 * lint-upstream's report.
 */
export function secretsRedactor(headers: readonly HeaderTemplate[]): Redactor {
  const redactor = new Redactor();
  try {
    for (const secret of resolveHeaders(headers).secrets) redactor.add(secret);
  } catch {
    // Unreadable now: no request carries it.
  }
  return redactor;
}

/**
 * An MCP connection's `secrets` (src/mcp_upstream/connection_options.ts):
 * {@link secretsRedactor} of `headers`, with weir's own tokens sent lately
 * added (token exchange `client-credentials`).
 */
export function connectionSecrets(
  headers: readonly HeaderTemplate[],
): (ownTokens: readonly string[]) => Redactor {
  return (ownTokens) => {
    const redactor = secretsRedactor(headers);
    for (const token of ownTokens) redactor.add(token);
    return redactor;
  };
}

/**
 * A {@link Redactor} of what a call of `tool` carries, as it reads now: the
 * header secrets and the tool's secret pins (for what comes back outside the
 * call itself: a task's status and result, src/wrap/tasks.ts). A pin that
 * cannot be read now is on no request either.
 */
export function callSecrets(host: UpstreamHost, tool: string): Redactor {
  const redactor = secretsRedactor(host.headers);
  try {
    pinValues(host.servedState(tool), redactor);
  } catch {
    // Not served, or a pin unset now: nothing of it is sent.
  }
  return redactor;
}

/**
 * The policy serve-upstream and lint-upstream both decide with (the
 * `withhold` of `decideTools`): a tool whose definition quotes a header
 * secret, in any form the {@link Redactor} knows (an upstream that echoes
 * request headers into descriptions, defaults or examples), is a stub. Its
 * definition could be shown only redacted, and a redacted schema (an `enum`,
 * a `default`) is not the one the upstream enforces. Then `other`, if given.
 */
export function withholdingSecrets(
  headers: readonly HeaderTemplate[],
  other?: SurfaceInput["withhold"],
): NonNullable<SurfaceInput["withhold"]> {
  return (name, definition) => {
    const text = JSON.stringify(definition);
    if (secretsRedactor(headers).text(text) !== text) {
      return {
        reason: "its definition quotes an --upstream-header secret (weir's credential to the " +
          "upstream), which weir never shows its clients",
        remedy: `have the upstream stop quoting request headers in the tool's definition, or ` +
          `drop --tool ${name}`,
      };
    }
    return other?.(name, definition);
  };
}
