/**
 * One MCP session per caller, for token exchange with a 2025-11-25 MCP
 * server that keeps sessions (`Mcp-Session-Id`). Such a server may bind a
 * session to the user who opened it (the MCP specification's security best
 * practices ask servers to bind session IDs to user-specific information),
 * and it keeps per-session state that one caller must not share with
 * another. weir's own session (opened with weir's own token, or the
 * block's headers) carries weir's own requests: the listings and each
 * re-verification. A caller's requests (`tools/call`, `tasks/*`,
 * `resources/read`) go on a session of that caller's own, opened with that
 * caller's exchanged token at its first request, keyed by the caller's
 * subject.
 *
 * - Bounded: at most `max` sessions are kept; opening one more ends the
 *   least recently used (the MCP server is told with `DELETE`, carrying that
 *   caller's last token, once the requests in flight on it have settled, the
 *   short path's calls included; one pushed out while it opened still carries
 *   the requests that were waiting for it).
 *   That caller's next request opens a new session: a task it created on the
 *   old one is gone with it.
 * - A caller's session never opens a standalone event stream (`GET`): the
 *   MCP server's own notifications reach weir's session.
 * - A session that fails before an answer (a 404 for a session the server
 *   ended, a broken connection) is dropped; that caller's next request opens
 *   a new one.
 *
 * @module
 */
import { legacyHttpTransport, legacySession, type Session, type SessionParts } from "./sessions.ts";
import { upstreamFetch } from "./http_fetch.ts";

/** What {@link CallerSessions} needs of the connection. */
export interface CallerSessionParts {
  /**
   * Open a 2025-11-25 session whose requests carry `authorization()` unless a
   * request sets its own (the caller's exchanged token, read at each request).
   */
  open(authorization: () => string): Promise<Session>;
  /** Close a session once its requests in flight have settled. */
  retire(session: Session): void;
}

/** A caller's kept session (see the module doc). */
interface Entry {
  /** `Authorization` for the session's own requests: the caller's last exchanged token. */
  authorization: string;
  opened: Promise<Session>;
  session?: Session;
}

/** The default bound on callers' sessions kept at once. */
export const MAX_CALLER_SESSIONS = 100;

/** See the module doc. */
export class CallerSessions {
  readonly #parts: CallerSessionParts;
  readonly #max: number;
  /** In least-recently-used order. */
  readonly #entries = new Map<string, Entry>();

  constructor(parts: CallerSessionParts, max = MAX_CALLER_SESSIONS) {
    this.#parts = parts;
    this.#max = Math.max(1, max);
  }

  /** How many sessions are kept (open or opening). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The session of caller `key`, opened now with `authorization` when it has
   * none.
   * @throws what opening the session threw (nothing is kept)
   */
  session(key: string, authorization: string): Promise<Session> {
    let entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      entry.authorization = authorization;
    } else {
      const created: Entry = { authorization, opened: undefined! };
      created.opened = this.#parts.open(() => created.authorization).then(
        (session) => {
          created.session = session;
          // Pushed out while it opened: the requests waiting for it still go on it (they hold
          // it in flight from their next step), then it ends (`retire` waits for them).
          if (this.#entries.get(key) !== created) setTimeout(() => this.#parts.retire(session), 0);
          else session.onclose(() => this.#forget(key, session));
          return session;
        },
        (error) => {
          if (this.#entries.get(key) === created) this.#entries.delete(key);
          throw error;
        },
      );
      entry = created;
    }
    this.#entries.set(key, entry);
    this.#evict();
    return entry.opened;
  }

  /** Whether `session` is a caller's (not weir's own). */
  has(session: Session): boolean {
    for (const entry of this.#entries.values()) if (entry.session === session) return true;
    return false;
  }

  /** `session` failed before an answer: its caller's next request opens another. */
  broken(session: Session): void {
    for (const [key, entry] of this.#entries) {
      if (entry.session === session) {
        this.#entries.delete(key);
        this.#parts.retire(session);
        return;
      }
    }
  }

  /** End every session (the connection closes). */
  close(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) this.#end(entry);
  }

  #forget(key: string, session: Session): void {
    if (this.#entries.get(key)?.session === session) this.#entries.delete(key);
  }

  #evict(): void {
    while (this.#entries.size > this.#max) {
      const [key, entry] = this.#entries.entries().next().value!;
      this.#entries.delete(key);
      this.#end(entry);
    }
  }

  #end(entry: Entry): void {
    if (entry.session) this.#parts.retire(entry.session);
    // Still opening: retired as soon as it opens (see `session`).
  }
}

/**
 * Open a caller's own 2025-11-25 session over HTTP (see the module doc):
 * the connection's header fields and the caller's `authorization()` on its
 * own requests (the handshake, `DELETE`), no standalone stream, no weir's
 * own token, ended at the MCP server when closed.
 * @param parts the connection's session parts (callbacks and handshake options)
 */
export function openCallerSession(
  parts: SessionParts,
  url: URL,
  headers: (() => Record<string, string>) | undefined,
  authorization: () => string,
  maxResponseBytes: number,
): Promise<Session> {
  const fetcher = upstreamFetch({
    headers: () => ({ ...headers?.(), authorization: authorization() }),
    maxResponseBytes,
    standalone: false,
    exchanged: true,
  });
  return legacySession({
    ...parts,
    transport: () => legacyHttpTransport(url, fetcher),
    http: { url, fetch: fetcher },
    onError: () => {},
    ends: true,
  });
}
