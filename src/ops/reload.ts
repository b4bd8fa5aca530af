/**
 * Reload: re-read what a mode serves, check it, and swap the running surface
 * in one assignment only when the check is clean.
 *
 * A mode supplies `load`, which builds the next {@link Surface} (the MCP
 * server and, for `GET /admin/describe`, what `weir describe --format json`
 * prints) or returns the errors that stop it, formatted as `weir lint` prints
 * them (`file:line:column: message`). A failed reload leaves the old surface
 * serving and logs one `reload_refused` line carrying every error; a clean one
 * logs `reloaded` with the tools added and removed.
 *
 * Requests already dispatched keep the server they started on (the transport
 * read {@link Reloader.current} when the request arrived), so a call in flight
 * finishes on the old surface. State held by the old server (the rate-limit
 * bucket, the response cache) is not carried over.
 *
 * @module
 */
import type { Logger, McpServer } from "../mcp/server.ts";

/** What a mode serves: the server, and its description for `/admin/describe`. */
export interface Surface {
  server: McpServer;
  /** The tool names served (for the `reloaded` line's added/removed). */
  tools: string[];
  /**
   * `weir describe --format json` of this surface (no secrets), or a promise
   * of it (a mode may load its describer only when asked).
   */
  describe?: () => unknown;
}

/** What `load` returns: the next surface, or the errors that stop it. */
export type LoadOutcome =
  | { surface: Surface; warnings?: string[] }
  | { errors: string[]; warnings?: string[] };

/** What a reload did. */
export interface ReloadResult {
  ok: boolean;
  /** Lint errors (`file:line:column: message`) when refused. */
  errors: string[];
  warnings: string[];
  added: string[];
  removed: string[];
  tools: string[];
}

/** Holds the running surface and swaps it. */
export class Reloader {
  #current: Surface;
  readonly #load: () => Promise<LoadOutcome>;
  readonly #log: Logger;
  readonly #listeners: ((surface: Surface) => void)[] = [];
  #running: Promise<ReloadResult> | null = null;

  /**
   * @param initial the surface serving now
   * @param load builds the next one (it must not throw for a broken file: return its errors)
   */
  constructor(initial: Surface, load: () => Promise<LoadOutcome>, log: Logger) {
    this.#current = initial;
    this.#load = load;
    this.#log = log;
  }

  /** The surface serving now. */
  get current(): Surface {
    return this.#current;
  }

  /** Be told of each swap (the HTTP front rebuilds its routes). */
  onSwap(listener: (surface: Surface) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Reload now. A reload asked for while one runs waits for it and then runs
   * again (the file may have changed in between).
   * @param trigger written in the log line: `SIGHUP` or `POST /admin/reload`
   */
  async reload(trigger: string): Promise<ReloadResult> {
    while (this.#running) await this.#running.catch(() => {});
    this.#running = this.#reload(trigger);
    try {
      return await this.#running;
    } finally {
      this.#running = null;
    }
  }

  async #reload(trigger: string): Promise<ReloadResult> {
    let outcome: LoadOutcome;
    try {
      outcome = await this.#load();
    } catch (error) {
      outcome = { errors: [`reload failed: ${(error as Error).message}`] };
    }
    const warnings = outcome.warnings ?? [];
    const before = this.#current.tools;
    if ("errors" in outcome) {
      this.#log({
        level: "error",
        event: "reload_refused",
        trigger,
        message: "the new file has errors; the running surface is unchanged",
        errors: outcome.errors,
        ...(warnings.length ? { warnings } : {}),
      });
      return { ok: false, errors: outcome.errors, warnings, added: [], removed: [], tools: before };
    }
    const next = outcome.surface;
    this.#current = next;
    for (const listener of this.#listeners) listener(next);
    const old = new Set(before);
    const now = new Set(next.tools);
    const added = next.tools.filter((t) => !old.has(t));
    const removed = before.filter((t) => !now.has(t));
    this.#log({
      level: "info",
      event: "reloaded",
      trigger,
      tools: next.tools.length,
      added,
      removed,
      ...(warnings.length ? { warnings } : {}),
    });
    return { ok: true, errors: [], warnings, added, removed, tools: next.tools };
  }
}
