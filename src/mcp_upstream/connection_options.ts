/**
 * The options of an upstream connection (`connection.ts`): where the MCP
 * server is, how its requests are bounded and authenticated, and what one
 * call carries.
 *
 * @module
 */
import type { ToolSpec } from "../mcp/types.ts";
import type { OwnToken } from "./http_fetch.ts";
import type { Progress } from "./sessions.ts";
import type { Secrets } from "../outbound/once.ts";

/** Where the upstream is. */
export type UpstreamTarget =
  | { kind: "http"; url: URL }
  | {
    kind: "stdio";
    command: string;
    args: readonly string[];
    /** Variables of weir's environment the child does not get (weir's own secrets). */
    withoutEnv?: readonly string[];
  };

/** Options of `UpstreamConnection.open`. */
export interface ConnectionOptions {
  target: UpstreamTarget;
  /** Headers for one HTTP request, resolved now; throws to refuse the request. */
  headers?: () => Record<string, string>;
  /**
   * What the connection's requests carry, as it reads now, taken out of every
   * failure the connection throws and of a redirect's target (the upstream's
   * words may quote it): the header secrets, with `ownTokens` (weir's own
   * tokens sent lately: `ownToken`) added. A `Redactor` (the wrap's
   * `connectionSecrets`, src/wrap/host.ts); a stdio server's: none
   * (`NOTHING_SENT`, src/outbound/once.ts).
   */
  secrets: (ownTokens: readonly string[]) => Secrets;
  /** Bound on each upstream request, in ms (0: none). */
  requestTimeoutMs: number;
  /** Largest answer accepted, in bytes (HTTP body, a request's event stream, a stdio line). */
  maxResponseBytes: number;
  /** How long to keep retrying the first connect, in ms (0: one attempt). */
  connectTimeoutMs: number;
  /** Called when the upstream says its tool list changed. */
  onToolsChanged?: () => void;
  /** Called with each connection failure while retrying (message only). */
  onRetry?: (error: Error, attempt: number) => void;
  /** Abort to stop retrying. */
  signal?: AbortSignal;
  /**
   * weir's own token (token exchange with `client-credentials`) for every
   * request no caller made: the handshake, listings, the standalone stream.
   */
  ownToken?: OwnToken;
  /**
   * Token exchange: a 2025-11-25 MCP server that keeps sessions gets one per
   * caller (`caller_sessions.ts`), at most this many at once; unset: callers'
   * requests go on weir's session.
   */
  callerSessions?: number;
}

/** Options of `UpstreamConnection.callTool` (and of a caller's other requests). */
export interface CallOptions {
  /** The caller's cancellation. */
  signal?: AbortSignal;
  /** The definition weir serves for the tool (the v2 client's `toolDefinition`). */
  definition?: ToolSpec;
  /** Receives the call's progress notifications; asking for them sets a progress token. */
  onProgress?: (progress: Progress) => void;
  /** This call's own header fields over the connection's (lower case; a caller's exchanged token). */
  headers?: Readonly<Record<string, string>>;
  /**
   * The caller, by subject (token exchange): with `callerSessions`, the
   * request goes on that caller's own session.
   */
  caller?: string;
}
