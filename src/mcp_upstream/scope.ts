/**
 * One request weir makes of the upstream (`tools/list`, `tools/call`), as
 * the transports under the official client see it. The client sends the
 * request from inside {@link requestScopes}, so the transport that carries it
 * (the HTTP `fetch` of `http_fetch.ts`, the stdio child of `stdio_child.ts`)
 * finds its scope and can:
 *
 * - learn its JSON-RPC id ({@link RequestScope.id}) and keep its answer's
 *   `result` parsed with exact numbers ({@link RequestScope.result});
 * - fail it at once ({@link RequestScope.fail}) when the answer passes the
 *   size cap, is a redirect or breaks off: the request's signal aborts with
 *   that failure, so the client rejects now instead of waiting for the
 *   request timeout (and tells the upstream `notifications/cancelled`).
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { UpstreamFailure } from "./errors.ts";
import { contextsMadeHere } from "../ops/lazy.ts";

/** See the module doc. */
export class RequestScope {
  /** `tools/list` or `tools/call`. */
  readonly method: string;
  /** The JSON-RPC id the client gave the request (set by the transport). */
  id?: string | number;
  /** The answer's `result` parsed with exact numbers (set by the transport; `tools/call`). */
  result?: unknown;
  /** Header fields for this request's HTTP exchanges only (set by the caller; lower-case names). */
  headers?: Readonly<Record<string, string>>;
  /** Why a transport failed the request, if one did (the first reason wins). */
  failure?: UpstreamFailure;
  readonly #controller = new AbortController();
  readonly #stop = new AbortController();
  readonly #caller?: AbortSignal;
  readonly #follow = () => this.#controller.abort(this.#caller?.reason);

  /**
   * @param method the MCP method
   * @param caller the caller's signal: the scope's signal follows it while the scope is open
   */
  constructor(method: string, caller?: AbortSignal) {
    this.method = method;
    this.#caller = caller;
    if (caller?.aborted) this.#follow();
    else caller?.addEventListener("abort", this.#follow, { once: true });
  }

  /**
   * The request's own signal: aborted by the caller's, or with the failure
   * a transport reported. (A fresh signal per request: the SDK keeps its
   * abort listener after a request completes, so a caller's signal shared by
   * two requests would later cancel the finished one too.)
   */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Aborted once nothing more of the answer is wanted: the request failed or
   * settled ({@link RequestScope.finish}). Readers of its answer stop then.
   */
  get stopped(): AbortSignal {
    return this.#stop.signal;
  }

  /** Fail the request now with `failure` (once it failed or settled, nothing changes). */
  fail(failure: UpstreamFailure): void {
    if (this.#stop.signal.aborted || this.#controller.signal.aborted) return;
    this.failure = failure;
    this.#controller.abort(failure);
    this.#stop.abort(failure);
  }

  /**
   * The request settled, however it ended: stop following the caller's
   * signal and stop reading its answer. (Its own signal is left as it is:
   * aborting it now would cancel a finished request upstream.)
   */
  finish(): void {
    this.#caller?.removeEventListener("abort", this.#follow);
    this.#stop.abort();
  }
}

// Loaded before any call: modules loaded during calls load outside their scopes (ops/lazy.ts).
contextsMadeHere(AsyncLocalStorage.snapshot());

/** The scope of the request being sent in the current async context. */
export const requestScopes: AsyncLocalStorage<RequestScope> = new AsyncLocalStorage<
  RequestScope
>();
