/**
 * The `fetch` the official clients' Streamable HTTP transports use to reach
 * an HTTP upstream: the only way weir's requests leave for it, so the rules
 * of that hop live here and hold for every request (the handshake, each
 * `tools/list`, each `tools/call`, `notifications/cancelled`, the
 * standalone event stream):
 *
 * - headers: the `--upstream-header` templates resolved at each request, and
 *   the span's `traceparent` when telemetry is on; a caller's request carries
 *   that caller's exchanged token (its {@link RequestScope.headers}), and with
 *   `ownToken` (token exchange with `client-credentials`) every other request
 *   (the handshake, listings, the standalone stream, `DELETE`) carries weir's
 *   own token, which is dropped once the MCP server refuses it (401);
 * - no redirect is followed: the request is made with `redirect: "manual"`,
 *   whatever the client asked (SDK 1.32 follows same-origin redirects by
 *   default), and any 3xx answer fails the request with
 *   {@link UpstreamRedirected} naming the status (its target, query values
 *   redacted, is for the operator's log). The credential therefore goes to
 *   the configured URL only, and a request is delivered there once;
 * - a request is delivered at most once: a failed `fetch` is the request's
 *   failure, never re-sent. Deno's `fetch` (2.9) re-sends a request whose
 *   body it can copy when a pooled keep-alive connection closes before the
 *   answer, even after the upstream has read the request (measured: a
 *   `tools/call` arrived twice); it never re-sends a streamed body. So
 *   request bodies are handed to `fetch` as a stream, and go out with
 *   `Transfer-Encoding: chunked` (RFC 9112 section 7.1, which every HTTP/1.1
 *   server reads) instead of `Content-Length`, keeping keep-alive;
 * - the size cap holds for every framing, counted on the decoded bytes as
 *   they are read (`fetch` decodes gzip, deflate and br in pieces of a few
 *   KiB, so a compression bomb costs no more than the cap): a JSON body (or
 *   any other non-stream body, error pages included) is read here up to
 *   `maxResponseBytes`; an event stream (SSE) is read here and handed on to
 *   the client re-framed, one `data:` event per JSON-RPC message, until its
 *   bytes pass the cap. Passing the cap fails the request at once with
 *   {@link UpstreamTooLarge} (through its {@link RequestScope}), rather than
 *   leaving the client to wait for the request timeout. A standalone stream
 *   (no request) is held to the cap per event;
 * - an event stream that ends or breaks before the answer to its request
 *   fails that request at once with {@link UpstreamCutOff}; so does a JSON
 *   body that breaks off, unless its status was 4xx (a refusal: the status is
 *   the answer, handed on with an empty body);
 * - what a person must fix is said at once, never quoting the upstream's
 *   body (it may echo a credential; the caller names the URL): nothing listening there
 *   (connection refused, DNS), a 401/403 to any request (the credential
 *   `--upstream-header` sends, or its absence), a 404 or 405 to the handshake
 *   (`initialize`, `server/discover`: not the MCP endpoint). These are
 *   {@link UpstreamUnavailable} or {@link UpstreamHttpRefusal};
 * - a request of the upstream's own in a request's event stream is handed
 *   to the client (the session answers it: `sessions.ts`), except under
 *   2026-07-28, which forbids it: that fails the request at once and the
 *   stream is closed (`server_requests.ts`);
 * - exact numbers: for a `tools/call`, the answer's `result` is parsed again
 *   with exact numbers (`exact.ts`) into the request's scope;
 * - a request's own exchange is aborted once the request settles however it
 *   ended (answered, failed, timed out, cancelled): the official v1 client
 *   aborts only on close, so an upstream that never answered kept weir's
 *   socket for as long as it liked.
 *
 * The re-framed stream carries no `id:` or `retry:` field, so the client
 * never resumes a request's stream with a `GET` (weir does not resume), and
 * no notification weir drops anyway (logging, resource updates): only
 * answers, the upstream's requests, and progress, cancellation and
 * `tools/list_changed` notifications.
 *
 * @module
 */
import { readAtMost } from "../transport/bytes.ts";
import { upstreamTracing } from "../ops/trace_hooks.ts";
import { connectFailure } from "../outbound/connect_failure.ts";
import {
  UpstreamCutOff,
  UpstreamHttpRefusal,
  UpstreamRedirected,
  UpstreamTokenUnavailable,
  UpstreamTooLarge,
  UpstreamUnavailable,
} from "./errors.ts";
import { exactResult } from "./exact.ts";
import { type RequestScope, requestScopes } from "./scope.ts";
import { forbiddenRequest, isServerRequest } from "./server_requests.ts";

/**
 * weir's own bearer token for the requests it makes apart from any caller
 * (token exchange with `client-credentials`: src/oauth/client_credentials.ts).
 * `token` throws an Error saying why none can be had, with `outcome:
 * "refused"` when the identity provider refused weir's client (retrying
 * cannot help).
 */
export interface OwnToken {
  token(signal?: AbortSignal): Promise<string>;
  /** The MCP server refused this token (401): do not send it again. */
  refused(token: string): void;
}

/** Options of {@link upstreamFetch}. */
export interface UpstreamFetchOptions {
  /** Headers for one request, resolved now; throws to refuse the request. */
  headers?: () => Record<string, string>;
  /** Largest answer accepted, in bytes (decoded; a whole event stream of a request). */
  maxResponseBytes: number;
  /** weir's own token for a request no caller made (see {@link OwnToken}). */
  ownToken?: OwnToken;
  /**
   * `false`: a standalone event stream (`GET`) is answered 405 here and never
   * opened (a caller's own session carries only that caller's requests:
   * src/mcp_upstream/caller_sessions.ts).
   */
  standalone?: boolean;
  /**
   * Every request carries a caller's exchanged token (a caller's own session:
   * src/mcp_upstream/caller_sessions.ts), so a 401 or 403 is said as that
   * token's refusal, even on the session's own requests (its handshake).
   */
  exchanged?: boolean;
}

const encoder = new TextEncoder();

/** The `fetch` for the SDK transports (see the module doc). */
export function upstreamFetch(options: UpstreamFetchOptions): typeof fetch {
  const max = options.maxResponseBytes;
  return async (input, init) => {
    const scope = requestScopes.getStore();
    const headers = new Headers(init?.headers);
    if (options.headers) {
      for (const [name, value] of Object.entries(options.headers())) headers.set(name, value);
    }
    if (init?.method === "GET" && options.standalone === false) {
      return new Response(null, { status: 405 });
    }
    // The request's own fields (a caller's exchanged token) over the connection's.
    if (scope?.headers) {
      for (const [name, value] of Object.entries(scope.headers)) headers.set(name, value);
    }
    // A request no caller made: weir's own token, never a caller's (nor a caller's weir's).
    const own = options.ownToken && !scope?.headers
      ? await ownTokenOf(options.ownToken, init?.signal ?? undefined, scope)
      : undefined;
    if (own !== undefined) headers.set("authorization", `Bearer ${own}`);
    upstreamTracing()?.inject(headers);
    /** This is the scope's own request (not a notification sent from inside it). */
    let ownRequest = false;
    if (scope && scope.id === undefined && typeof init?.body === "string") {
      scope.id = requestIdOf(init.body, scope.method);
      ownRequest = scope.id !== undefined;
    }
    const url = input instanceof Request ? input.url : String(input);
    const method = typeof init?.body === "string" ? methodOf(init.body) : undefined;
    // A streamed body: never re-sent by fetch (see the module doc).
    const body = typeof init?.body === "string" ? streamOf(init.body) : init?.body;
    // The request's own exchange ends when the request settles (answered, failed,
    // timed out, cancelled): an upstream that never answers keeps no socket of weir's.
    const signal = ownRequest
      ? (init?.signal ? AbortSignal.any([init.signal, scope!.stopped]) : scope!.stopped)
      : init?.signal;
    let response: Response;
    try {
      response = await fetch(input, { ...init, headers, body, signal, redirect: "manual" });
    } catch (error) {
      const why = connectFailure(error);
      if (!why) throw error;
      throw new UpstreamUnavailable(
        `${why}; start the MCP server, or correct its address`,
        { cause: error },
      );
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw failed(
        scope,
        new UpstreamRedirected(response.status, response.headers.get("location"), url),
      );
    }
    const sent = scope?.headers?.authorization !== undefined || options.exchanged
      ? "exchanged"
      : own !== undefined
      ? "connection"
      : headers.has("authorization")
      ? "own"
      : "none";
    const refusal = httpRefusal(response.status, url, method, sent);
    if (refusal) {
      if (own !== undefined && response.status === 401) options.ownToken!.refused(own);
      await response.body?.cancel().catch(() => {});
      throw failed(scope, refusal);
    }
    if (!response.body) return response;
    const type = (response.headers.get("content-type") ?? "").toLowerCase();
    if (type.startsWith("text/event-stream")) {
      const modern = headers.get("mcp-protocol-version") === "2026-07-28";
      return new Response(reframe(response.body, scope, max, modern), copyOf(response));
    }
    const declared = Number(response.headers.get("content-length") ?? "NaN");
    if (declared > max) {
      await response.body.cancel().catch(() => {});
      throw failed(scope, new UpstreamTooLarge(max));
    }
    let bytes: Uint8Array | null;
    try {
      bytes = await readAtMost(response.body, max, scope?.stopped);
    } catch (error) {
      if (scope?.failure) throw scope.failure;
      // A 4xx is a refusal whose status says it all: the body adds nothing worth a
      // "may have run".
      if (response.status >= 400 && response.status < 500) {
        return new Response(null, copyOf(response));
      }
      throw failed(
        scope,
        new UpstreamCutOff(
          `the upstream answered ${response.status} and the body broke off ` +
            `(${(error as Error).name ?? "error"}); the request was delivered and may have run`,
        ),
      );
    }
    if (bytes === null) throw failed(scope, new UpstreamTooLarge(max));
    if (scope?.method === "tools/call" && scope.id !== undefined && response.ok) {
      scope.result = exactResult(new TextDecoder().decode(bytes), scope.id);
    }
    return new Response(bytes as Uint8Array<ArrayBuffer>, copyOf(response));
  };
}

/** weir's own token now, or the request's failure: nothing is sent without it. */
async function ownTokenOf(
  ownToken: OwnToken,
  signal: AbortSignal | undefined,
  scope: RequestScope | undefined,
): Promise<string> {
  try {
    return await ownToken.token(signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    const final = (error as { outcome?: unknown }).outcome === "refused";
    throw failed(
      scope,
      new UpstreamTokenUnavailable((error as Error).message, final, { cause: error }),
    );
  }
}

/** The JSON-RPC method of a message text, if it is one request or notification. */
function methodOf(body: string): string | undefined {
  try {
    const message = JSON.parse(body) as { method?: unknown };
    return typeof message?.method === "string" ? message.method : undefined;
  } catch {
    return undefined;
  }
}

/** The handshake's requests: an answer of 404/405 to them means "not an MCP endpoint". */
const HANDSHAKE = new Set(["initialize", "server/discover"]);

/**
 * The failure for an HTTP status that a person must act on (see the module doc),
 * or `undefined`. Never quotes the answer's body.
 */
export function httpRefusal(
  status: number,
  url: string,
  method: string | undefined,
  sent: "none" | "own" | "exchanged" | "connection",
): UpstreamHttpRefusal | undefined {
  const at = `the upstream answered ${status}`;
  if (sent === "connection" && (status === 401 || status === 403)) {
    return new UpstreamHttpRefusal(
      status,
      status === 401
        ? `${at}: it refused weir's own token (client credentials from the identity ` +
          `provider); check that client-credentials asks for what this MCP server accepts ` +
          `(its audience, the token-exchange block's audience or resource, and scopes)`
        : `${at}: it refused weir's own token access (the scopes under client-credentials, or ` +
          `what weir's client may do there)`,
    );
  }
  if (sent === "exchanged" && (status === 401 || status === 403)) {
    return new UpstreamHttpRefusal(
      status,
      status === 401
        ? `${at}: it refused the caller's exchanged token; check that the token exchange asks ` +
          `for the audience and scopes this MCP server accepts`
        : `${at}: it refused this caller access (the exchanged token's scopes, or the caller's ` +
          `own permissions there)`,
    );
  }
  if (status === 401) {
    return new UpstreamHttpRefusal(
      status,
      sent === "own"
        ? `${at}: it refused the credential sent; check the token the Authorization header ` +
          `reads (--upstream-header, or the mcp-server block's header)`
        : `${at}: it needs a credential; send one with --upstream-header ` +
          `'Authorization=Bearer {env:VAR}' (in a guardfile: header "Authorization" ` +
          `{ prefix "Bearer "; value env "VAR"; } in the mcp-server block)`,
    );
  }
  if (status === 403) {
    return new UpstreamHttpRefusal(
      status,
      `${at}: it refused access; check the credential sent (--upstream-header, or the ` +
        `mcp-server block's header): its scopes or its account's permissions`,
    );
  }
  if ((status === 404 || status === 405) && method !== undefined && HANDSHAKE.has(method)) {
    const path = URL.canParse(url) ? new URL(url).pathname : "";
    return new UpstreamHttpRefusal(
      status,
      `${at}: no MCP endpoint there; point weir at the server's MCP endpoint` +
        (path.endsWith("/mcp") ? " (the path its documentation gives)" : ` (often .../mcp)`),
    );
  }
  return undefined;
}

/** `text` as a one-chunk byte stream. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** Fail the request (when there is one) and return the failure to throw. */
function failed<
  T extends
    | UpstreamRedirected
    | UpstreamTooLarge
    | UpstreamCutOff
    | UpstreamHttpRefusal
    | UpstreamTokenUnavailable,
>(
  scope: RequestScope | undefined,
  failure: T,
): T {
  scope?.fail(failure);
  return failure;
}

function copyOf(response: Response): ResponseInit {
  return { status: response.status, statusText: response.statusText, headers: response.headers };
}

/** The id of the JSON-RPC request `method` in a message text, if it is one. */
function requestIdOf(body: string, method: string): string | number | undefined {
  try {
    const message = JSON.parse(body) as { method?: unknown; id?: unknown };
    if (message?.method !== method) return undefined;
    return typeof message.id === "string" || typeof message.id === "number"
      ? message.id
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An event stream read under the cap (see the module doc) and handed on as
 * one `data:` event per message. Lines follow the WHATWG event-stream
 * format: CRLF, LF or CR end a line; `data` lines of one event are joined
 * with LF; comments, `id`, `retry` and events of other types are dropped.
 * Under 2026-07-28 (`modern`), a request of the upstream's own in a
 * request's stream fails that request and ends the stream
 * (`server_requests.ts`).
 */
function reframe(
  source: ReadableStream<Uint8Array>,
  scope: RequestScope | undefined,
  max: number,
  modern: boolean,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  const lines = new LineSplitter();
  let data: string[] = [];
  let type = "";
  /** Bytes read: of the whole stream (a request's), or since the last event (standalone). */
  let counted = 0;
  let answered = false;
  let out: ReadableStreamDefaultController<Uint8Array>;
  const stop = () => reader.cancel().catch(() => {});
  scope?.stopped.addEventListener("abort", stop, { once: true });

  const event = (): void => {
    if (data.length > 0 && (type === "" || type === "message")) {
      const text = data.join("\n");
      const kind = kindOf(text, scope?.id);
      if (kind === "request" && modern && scope) {
        scope.fail(forbiddenRequest((JSON.parse(text) as { method: string }).method));
        data = [];
        return;
      }
      if (kind === "answer" && !answered) {
        answered = true;
        if (scope?.method === "tools/call") scope.result = exactResult(text, scope.id!);
      }
      // What weir drops anyway (logging, resource updates) never reaches the client.
      if (kind !== "dropped") {
        out.enqueue(encoder.encode(`data: ${text.replaceAll("\n", "\ndata: ")}\n\n`));
      }
    }
    data = [];
    type = "";
    if (!scope) counted = 0;
  };
  const line = (text: string): void => {
    if (text === "") return event();
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") type = value;
  };
  const end = (failure?: UpstreamTooLarge | UpstreamCutOff): void => {
    scope?.stopped.removeEventListener("abort", stop);
    if (failure) {
      scope?.fail(failure);
      out.error(failure);
    } else out.close();
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      out = controller;
    },
    async pull() {
      for (;;) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (error) {
          if (scope?.failure || scope?.stopped.aborted || answered || !scope) return end();
          return end(
            new UpstreamCutOff(
              `the upstream's event stream broke off before the answer ` +
                `(${(error as Error).name ?? "error"}); the request was delivered and may have run`,
            ),
          );
        }
        if (step.done) {
          lines.feed(decoder.decode(), true, line);
          if (scope && !answered && !scope.failure && !scope.stopped.aborted) {
            return end(
              new UpstreamCutOff(
                "the upstream's event stream ended before the answer; " +
                  "the request was delivered and may have run",
              ),
            );
          }
          return end();
        }
        counted += step.value.byteLength;
        if (counted > max) {
          await stop();
          return end(new UpstreamTooLarge(max));
        }
        const before = out.desiredSize;
        lines.feed(decoder.decode(step.value, { stream: true }), false, line);
        // Something went out: let the client read it before reading on.
        if (out.desiredSize !== before) return;
      }
    },
    cancel(reason) {
      scope?.stopped.removeEventListener("abort", stop);
      return reader.cancel(reason);
    },
  });
}

/** Notifications the client acts on; weir drops every other one. */
const KEPT_NOTIFICATIONS = new Set([
  "notifications/progress",
  "notifications/cancelled",
  "notifications/tools/list_changed",
]);

/**
 * What one event's JSON-RPC text is to the request `id`: its `answer`, a
 * `request` of the upstream's own, a message the client acts on (`other`:
 * another answer, a kept notification, a batch, or text it will reject
 * itself), or a notification weir drops (`dropped`).
 */
function kindOf(
  text: string,
  id: string | number | undefined,
): "answer" | "request" | "other" | "dropped" {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "other";
  }
  if (isServerRequest(value)) return "request";
  const messages = Array.isArray(value) ? value : [value];
  let dropped = messages.length > 0;
  for (const m of messages) {
    if (typeof m !== "object" || m === null) return "other";
    const message = m as { id?: unknown; method?: unknown };
    if (
      id !== undefined && message.id === id && message.method === undefined &&
      ("result" in m || "error" in m)
    ) return "answer";
    if (
      message.id !== undefined || typeof message.method !== "string" ||
      KEPT_NOTIFICATIONS.has(message.method)
    ) dropped = false;
  }
  return dropped ? "dropped" : "other";
}

/**
 * Splits text into lines at CRLF, LF or a lone CR, across pieces, in time
 * linear in the text (an unterminated line is kept as pieces, not re-joined
 * at every read).
 */
export class LineSplitter {
  #pieces: string[] = [];
  /** The last piece ended with CR: an LF starting the next one belongs to it. */
  #afterCR = false;

  /** Feed `text`; `line` gets each complete line. At the `final` piece a partial line is dropped. */
  feed(text: string, final: boolean, line: (text: string) => void): void {
    let at = 0;
    if (this.#afterCR && text.startsWith("\n")) at = 1;
    this.#afterCR = false;
    let lf = text.indexOf("\n", at);
    let cr = text.indexOf("\r", at);
    while (lf >= 0 || cr >= 0) {
      const i = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      this.#pieces.push(text.slice(at, i));
      const whole = this.#pieces.length === 1 ? this.#pieces[0] : this.#pieces.join("");
      this.#pieces = [];
      line(whole);
      at = i + 1;
      if (text[i] === "\r") {
        if (at === text.length) this.#afterCR = true;
        else if (text[at] === "\n") at++;
      }
      if (lf >= 0 && lf < at) lf = text.indexOf("\n", at);
      if (cr >= 0 && cr < at) cr = text.indexOf("\r", at);
    }
    if (at < text.length) this.#pieces.push(text.slice(at));
    if (final) this.#pieces = [];
  }
}
