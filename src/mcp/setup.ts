/**
 * What a server settles once, at construction, and every method family
 * reads: its options, `serverInfo`, capabilities, page size, cursor codec,
 * caller identity and log sink, and the catalog (a static one prepared here;
 * a catalog function's result prepared the first time each object is seen).
 *
 * @module
 */
import { prepareCatalog, type PreparedCatalog } from "./catalog.ts";
import { CursorCodec } from "./cursor.ts";
import { callerOf, StateKeys } from "./signed_state.ts";
import type { JsonObject } from "./jsonrpc.ts";
import type { MethodRule } from "./revisions.ts";
import { cleanDeep } from "./text.ts";
import { nestsDeeperThan } from "./depth.ts";
import { MAX_RESULT_DEPTH } from "./results.ts";
import { wireProblem } from "./wire_fields.ts";
import { type Logger, type ServerOptions, stderrLogger, type ToolAccess } from "./options.ts";
import type { Catalog } from "./types.ts";
import type { Session } from "./session.ts";

/** One server's settled state, shared by its method families (src/mcp/*.ts). */
export class ServerSetup {
  readonly options: ServerOptions;
  readonly serverInfo: JsonObject;
  readonly capabilities: JsonObject;
  readonly pageSize: number;
  readonly cursors: CursorCodec;
  /** Signs what a client carries back: cursors, task handles (src/mcp/tasks.ts). */
  readonly stateKeys: StateKeys;
  readonly callerOf: (auth: unknown) => string | undefined;
  /**
   * The tools one caller may see and call: the host's `toolAccess` and the
   * tools the `authorize` verdict itself names ({@link declaredToolAccess}),
   * both holding; `undefined` when neither narrows.
   */
  readonly toolAccess: (auth: unknown) => ToolAccess | undefined;
  readonly log: Logger;
  /** The prepared catalog when `options.catalog` is an object. */
  readonly static?: PreparedCatalog;
  readonly #prepared = new WeakMap<Catalog, PreparedCatalog>();
  /** stdio sessions that completed `initialize` (2025-11-25), to tell of a changed list. */
  readonly sessions: Set<Session> = new Set();

  /**
   * Settle a server: a static catalog is validated and compiled once, here.
   * @throws {CatalogError} when a static catalog is malformed
   * @throws {RangeError} when `pageSize` is not a positive integer
   * @throws {TypeError} when `name` is missing or empty, `version`, `title`,
   *   `icons` or `instructions` is not what `serverInfo` may carry, or a cache
   *   hint is malformed
   */
  constructor(options: ServerOptions) {
    this.options = options;
    this.log = options.log ?? stderrLogger;
    this.pageSize = options.pageSize ?? 50;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1) {
      throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
    }
    this.stateKeys = options.stateKeys ??
      new StateKeys({ keys: options.cursorKey ? [options.cursorKey] : undefined });
    this.cursors = new CursorCodec(this.stateKeys);
    this.callerOf = options.callerOf ?? callerOf;
    const host = options.toolAccess;
    this.toolAccess = host
      ? (auth) => bothAccess(host(auth), declaredToolAccess(auth))
      : declaredToolAccess;
    this.serverInfo = { name: options.name, version: options.version ?? "0.0.0" };
    if (options.title !== undefined) this.serverInfo.title = options.title;
    if (options.icons?.length) {
      this.serverInfo.icons = options.icons as unknown as JsonObject[];
    }
    // serverInfo goes out as it is (initialize, every 2026-07-28 result's _meta).
    const wrong = typeof options.name === "string" && options.name === ""
      ? "options.name must not be empty"
      : wireProblem("Implementation", this.serverInfo, "serverInfo")
        ?.replace(/^serverInfo: (name|version|title|icons)/, "options.$1");
    if (wrong) {
      throw new TypeError(
        `McpServer: ${wrong} (it is sent as serverInfo; e.g. new McpServer({ name: ` +
          `"my-server", version: "1.0.0", ... }))`,
      );
    }
    if (options.instructions !== undefined && typeof options.instructions !== "string") {
      throw new TypeError("McpServer: options.instructions must be a string");
    }
    // Cache hints go out as they are on every cacheable 2026-07-28 result.
    for (const [family, hint] of Object.entries(options.cache ?? {})) {
      if (
        hint === undefined ||
        (Number.isSafeInteger(hint.ttlMs) && hint.ttlMs >= 0 &&
          (hint.cacheScope === "public" || hint.cacheScope === "private"))
      ) continue;
      throw new TypeError(
        `McpServer: options.cache.${family} must be {ttlMs: a whole number of milliseconds >= 0, ` +
          `cacheScope: "public" or "private"}`,
      );
    }
    const capabilities: JsonObject = {};
    if (options.dispatch) capabilities.tools = { listChanged: options.toolsListChanged === true };
    // 2025-11-25 only: server/discover leaves it out (src/mcp/tasks.ts).
    if (options.dispatch && options.tasks) {
      // Cancel and task-augmented tools/call; not tasks/list (src/mcp/tasks.ts says why).
      capabilities.tasks = { cancel: {}, requests: { tools: { call: {} } } };
    }
    if (options.readResource) capabilities.resources = { subscribe: false, listChanged: false };
    if (options.getPrompt) capabilities.prompts = { listChanged: false };
    if (typeof options.catalog !== "function") this.static = this.prepare(options.catalog);
    this.capabilities = capabilities;
  }

  /**
   * Send `notifications/tools/list_changed` to every live stdio session on the
   * 2025-11-25 handshake (a session whose connection is gone is dropped).
   */
  toolsChanged(): void {
    const line = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    for (const session of this.sessions) {
      if (session.send) session.send(line);
      else this.sessions.delete(session);
    }
  }

  /** Whether the server advertises the capability a method needs. */
  advertises(rule: MethodRule): boolean {
    return rule.capability === undefined || rule.capability in this.capabilities;
  }

  /** Validate and compile a catalog (clean text out for what is listed, once per catalog). */
  prepare(catalog: Catalog): PreparedCatalog {
    // Clean text out for what is listed too (a wrapped upstream's descriptions,
    // titles, prompt texts): once per catalog, not per list.
    const clean = nestsDeeperThan(catalog, MAX_RESULT_DEPTH) ? catalog : cleanDeep(catalog);
    return prepareCatalog(clean, {
      dispatch: Boolean(this.options.dispatch),
      readResource: Boolean(this.options.readResource),
      getPrompt: Boolean(this.options.getPrompt),
      schemaProfile: this.options.schemaProfile,
    });
  }

  /** The catalog now: the static one, or the catalog function's answer, prepared. */
  async catalog(): Promise<PreparedCatalog> {
    if (this.static) return this.static;
    const catalog = await (this.options.catalog as () => Catalog | Promise<Catalog>)();
    let prepared = this.#prepared.get(catalog);
    if (!prepared) {
      prepared = this.prepare(catalog);
      this.#prepared.set(catalog, prepared);
    }
    return prepared;
  }
}

/**
 * The tools an `authorize` verdict names itself: its `tools` property, when a
 * `Set` or an array of names (weir's static tokens limited to some tools set
 * one), as the core's `callerOf` reads `caller`; `"*"` allows every tool but
 * still marks the list as depending on the caller (a token beside limited
 * ones). Absent: no narrowing.
 */
export function declaredToolAccess(auth: unknown): ToolAccess | undefined {
  const tools = (auth as { tools?: unknown } | null | undefined)?.tools;
  if (tools === "*") return EVERY_TOOL;
  if (!(tools instanceof Set) && !Array.isArray(tools)) return undefined;
  const names = new Set<string>([...tools].filter((t): t is string => typeof t === "string"));
  return { key: `tools:${JSON.stringify([...names].sort())}`, allows: (name) => names.has(name) };
}

const EVERY_TOOL: ToolAccess = Object.freeze({ key: "tools:*", allows: () => true });

function bothAccess(
  a: ToolAccess | undefined,
  b: ToolAccess | undefined,
): ToolAccess | undefined {
  if (!a || !b) return a ?? b;
  return { key: `${a.key}\n${b.key}`, allows: (name) => a.allows(name) && b.allows(name) };
}
