/**
 * Everything that differs between the two MCP revisions this core serves, in
 * one place, read top to bottom. Handlers never branch on the revision; they
 * look things up here.
 *
 * - `2025-11-25` ("legacy"): a connection or session negotiates its version
 *   once, in `initialize`; results are plain objects.
 * - `2026-07-28` ("modern"): stateless; every request names its version and
 *   client capabilities in `params._meta`; results carry `resultType`, the
 *   cacheable ones `ttlMs` and `cacheScope`, and `_meta` names the server.
 *
 * Sources: the MCP specification pages and `schema.json` of each revision
 * (https://modelcontextprotocol.io/specification; the two schemas are vendored
 * in `tests/fixtures/mcp-schema/`, which the tests validate responses against).
 *
 * @module
 */
import { ErrorCode } from "./jsonrpc.ts";

/**
 * The stateless revision.
 *
 * @example The newer revision
 * ```ts
 * import { MODERN_VERSION, SUPPORTED_VERSIONS } from "./revisions.ts";
 * if (MODERN_VERSION !== "2026-07-28" || SUPPORTED_VERSIONS[0] !== MODERN_VERSION) throw new Error();
 * ```
 */
export const MODERN_VERSION = "2026-07-28";
/**
 * The newest handshake revision; what `initialize` answers when it cannot echo.
 *
 * @example The handshake revision
 * ```ts
 * import { LEGACY_VERSION, LEGACY_VERSIONS } from "./revisions.ts";
 * if (LEGACY_VERSION !== "2025-11-25" || !LEGACY_VERSIONS.includes(LEGACY_VERSION)) throw new Error();
 * ```
 */
export const LEGACY_VERSION = "2025-11-25";
/**
 * Handshake revisions `initialize` echoes back, newest first.
 *
 * @example What an initialize may ask for
 * ```ts
 * import { LEGACY_VERSIONS } from "./revisions.ts";
 * if (!LEGACY_VERSIONS.includes("2025-11-25") || LEGACY_VERSIONS.includes("2026-07-28")) {
 *   throw new Error(LEGACY_VERSIONS.join());
 * }
 * ```
 */
export const LEGACY_VERSIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
];
/**
 * What `server/discover` lists and a `-32022` error carries in `data.supported`.
 *
 * @example Both revisions, newest first
 * ```ts
 * import { SUPPORTED_VERSIONS } from "./revisions.ts";
 * if (SUPPORTED_VERSIONS.join() !== "2026-07-28,2025-11-25") throw new Error(SUPPORTED_VERSIONS.join());
 * ```
 */
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION, LEGACY_VERSION];

/**
 * `params._meta` keys of the modern revision.
 *
 * @example A 2026-07-28 request's _meta
 * ```ts
 * import { MetaKey } from "./revisions.ts";
 * const meta = { [MetaKey.protocolVersion]: "2026-07-28", [MetaKey.clientCapabilities]: {} };
 * if (!("io.modelcontextprotocol/protocolVersion" in meta)) throw new Error();
 * ```
 */
export const MetaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

/** RFC 5424 levels MCP names for `logLevel`. */
export const LOG_LEVELS: ReadonlySet<string> = new Set([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
]);

/** Which revision a request is served under. */
export type Era = "legacy" | "modern";

/** The server capability a method needs advertised. */
export type Capability = "tools" | "resources" | "prompts" | "tasks";

/** One client-to-server request method and how each revision treats it. */
export interface MethodRule {
  /** Revisions in which the method exists. */
  eras: readonly Era[];
  /** Capability the server must advertise, else the method is "not found". */
  capability?: Capability;
  /** Modern: the result carries `ttlMs` and `cacheScope`. */
  cacheable?: "tools" | "resources" | "prompts" | "discover";
  /** Modern HTTP: the `Mcp-Name` header mirrors this `params` member. */
  nameParam?: "name" | "uri";
}

const BOTH: readonly Era[] = ["legacy", "modern"];

/** The request methods this core answers. Anything else is `-32601`. */
export const METHODS: Readonly<Record<string, MethodRule>> = {
  "initialize": { eras: ["legacy"] },
  "ping": { eras: ["legacy"] },
  "server/discover": { eras: ["modern"], cacheable: "discover" },
  "tools/list": { eras: BOTH, capability: "tools", cacheable: "tools" },
  "tools/call": { eras: BOTH, capability: "tools", nameParam: "name" },
  "resources/list": { eras: BOTH, capability: "resources", cacheable: "resources" },
  "resources/templates/list": { eras: BOTH, capability: "resources", cacheable: "resources" },
  "resources/read": {
    eras: BOTH,
    capability: "resources",
    cacheable: "resources",
    nameParam: "uri",
  },
  "prompts/list": { eras: BOTH, capability: "prompts", cacheable: "prompts" },
  "prompts/get": { eras: BOTH, capability: "prompts", nameParam: "name" },
  // 2025-11-25 "Tasks" (experimental); 2026-07-28 moved them to an extension (src/mcp/tasks.ts).
  "tasks/get": { eras: ["legacy"], capability: "tasks" },
  "tasks/result": { eras: ["legacy"], capability: "tasks" },
  "tasks/cancel": { eras: ["legacy"], capability: "tasks" },
};

/**
 * The rule of a request method, or `undefined` when this core does not answer it.
 *
 * Looks at own entries only: a method named like an `Object.prototype` member
 * (`constructor`, `toString`, `__proto__`) is unknown (`-32601`), not a rule.
 */
export function methodRule(method: string): MethodRule | undefined {
  return Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
}

/** Per-revision constants. */
export interface EraRules {
  /** Error code for "no such resource" on `resources/read`. */
  resourceNotFound: number;
  /** Results carry `resultType`, `_meta` server info and, when cacheable, cache hints. */
  decorateResults: boolean;
  /**
   * `CallToolResult.structuredContent` must be a JSON object (2025-11-25); the
   * 2026-07-28 schema admits any JSON value. A value the revision cannot carry
   * is left out (the text content still has it).
   */
  structuredContentIsObject: boolean;
  /** HTTP status for a JSON-RPC error with this code (default 200). */
  httpStatus: Readonly<Record<number, number>>;
}

/** The table itself. */
export const ERAS: Readonly<Record<Era, EraRules>> = {
  legacy: {
    resourceNotFound: ErrorCode.ResourceNotFound,
    decorateResults: false,
    structuredContentIsObject: true,
    httpStatus: {
      [ErrorCode.ParseError]: 400,
      [ErrorCode.InvalidRequest]: 400,
    },
  },
  modern: {
    resourceNotFound: ErrorCode.InvalidParams,
    decorateResults: true,
    structuredContentIsObject: false,
    httpStatus: {
      [ErrorCode.ParseError]: 400,
      [ErrorCode.InvalidRequest]: 400,
      [ErrorCode.MethodNotFound]: 404,
      [ErrorCode.HeaderMismatch]: 400,
      [ErrorCode.MissingRequiredClientCapability]: 400,
      [ErrorCode.UnsupportedProtocolVersion]: 400,
    },
  },
};
