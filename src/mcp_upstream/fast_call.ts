/**
 * The short path of a `tools/call` to an HTTP MCP server: weir writes the
 * JSON-RPC request itself and sends it with its own HTTP/1.1 client
 * (src/outbound/http1_client.ts: kept-alive connections per origin, the body
 * sent with `Content-Length`), instead of through the official client and
 * `fetch`. Measured here (docs/performance.md), the official path cost about
 * five times the CPU of this one per call on weir's side (the client's
 * request bookkeeping and result schemas, the `fetch` machinery, a new
 * connection per call so that `fetch` never re-sends, a second parse for
 * exact numbers), which was most of what weir added to a call.
 *
 * The connection (`connection.ts`) takes it only where it sends what the
 * official client would: a call over HTTP whose caller did not ask for
 * progress, to a tool whose schema asks for no `Mcp-Param` headers
 * (2026-07-28 `x-mcp-header`), with no proxy variable set, once the session
 * is open (the handshake, listing and everything else stay on the official
 * client). What it sends: `POST` to the configured URL with what the
 * session's client sends on a request (the negotiated `MCP-Protocol-Version`
 * and the `Mcp-Session-Id` under 2025-11-25; `Mcp-Method`, `Mcp-Name` and
 * the `_meta` envelope of protocol version, client info and capabilities
 * under 2026-07-28), the MCP server's header values read now, and the W3C
 * trace context when telemetry is on. The rules of the hop hold as on the
 * official path (`http_fetch.ts`):
 *
 * - at most once: the request is written once; weir's client never re-sends
 *   a `POST` (a kept-alive connection that turns out closed fails the call,
 *   saying it may have run);
 * - no redirect: any 3xx is {@link UpstreamRedirected};
 * - the cap: an answer (a JSON body, or the event stream of the request up to
 *   its answer) over `maxResponseBytes` is {@link UpstreamTooLarge}, weir's
 *   memory bounded by it;
 * - an event stream is read up to the call's answer and no further (a server
 *   may keep it open); one that ends first is {@link UpstreamCutOff};
 * - exact numbers: `structuredContent` keeps the numbers as the MCP server
 *   wrote them (`exact.ts`);
 * - the caller's cancellation and the request timeout close the connection,
 *   and the MCP server is told (`notifications/cancelled`, `cancel`);
 * - a request of the MCP server's own in the call's stream (sampling, roots,
 *   elicitation, ping...) is answered at once (`answer`), or under
 *   2026-07-28, which forbids it, fails the call (`server_requests.ts`);
 * - the answer's hop fields are dropped by the connection as on the official
 *   path, and a `notifications/tools/list_changed` in the call's event stream
 *   is reported.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { CallToolResult } from "../mcp/types.ts";
import { type Http1Client, Http1Error } from "../outbound/http1_client.ts";
import { Deadline } from "../outbound/deadline.ts";
import { proxySetting } from "../outbound/proxy.ts";
import {
  conciseMessage,
  unavailable,
  UpstreamCutOff,
  UpstreamRedirected,
  UpstreamRefused,
  UpstreamTimeout,
  UpstreamTooLarge,
  UpstreamUnavailable,
} from "./errors.ts";
import { exactResult, withExactNumbers } from "./exact.ts";
import { httpRefusal, LineSplitter } from "./http_fetch.ts";
import { type McpUpstreamCall, upstreamTracing } from "../ops/trace_hooks.ts";
import { traceContext } from "./hop.ts";
import {
  answerFor,
  forbiddenRequest,
  isServerRequest,
  type ServerRequest,
} from "./server_requests.ts";

/** What the session's client puts on a request (see the module doc). */
export interface FastWire {
  revision: "2025-11-25" | "2026-07-28";
  /** `MCP-Protocol-Version`: the negotiated one under 2025-11-25. */
  protocolVersion: string;
  /** `Mcp-Session-Id`, when the server gave one. */
  sessionId?: string;
  /** 2026-07-28: the request `_meta` envelope (protocol version, client info, capabilities). */
  meta?: JsonObject;
}

/** One call on the short path. */
export interface FastCall {
  url: URL;
  http: Http1Client;
  wire: FastWire;
  /** The request's JSON-RPC id (unique among the session's requests). */
  id: number;
  name: string;
  /** Sent as they are (`JSON.rawJSON` numbers keep their spelling). */
  args: JsonObject;
  /** Trace context for `params._meta`, when telemetry is on. */
  traceMeta?: JsonObject;
  /** Header values: the MCP server's (read now) and the trace context. */
  headers: Record<string, string>;
  /** Its `authorization` is the caller's exchanged token (token exchange), not weir's own. */
  exchanged?: boolean;
  maxResponseBytes: number;
  /** The caller's cancellation. */
  signal?: AbortSignal;
  /** The request timeout, in ms (0: none). */
  timeoutMs: number;
  /** Tell the MCP server the request is abandoned (`notifications/cancelled`). */
  cancel(id: number, reason: string): void;
  /** The MCP server said its tool list changed. */
  onToolsChanged(): void;
  /** Send the MCP server weir's answer to one of its requests (`sendAnswer`). */
  answer(response: JsonObject): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Content block types of MCP and the string fields each must have. */
const CONTENT_FIELDS: Record<string, readonly string[]> = {
  text: ["text"],
  image: ["data", "mimeType"],
  audio: ["data", "mimeType"],
  resource_link: ["uri", "name"],
  resource: [],
};

/** The request headers and body of a JSON-RPC message on this session. */
export function framed(
  wire: FastWire,
  message: { id?: number; method: string; params: JsonObject } | { response: JsonObject },
  name: string | undefined,
  extra: Record<string, string>,
): { headers: [string, string][]; body: Uint8Array } {
  const headers: [string, string][] = [
    ["content-type", "application/json"],
    ["accept", "application/json, text/event-stream"],
    // Uncoded, so an event stream can be read up to its answer (http1_client.ts `until`).
    ["accept-encoding", "identity"],
    ["mcp-protocol-version", wire.protocolVersion],
  ];
  if (wire.sessionId !== undefined) headers.push(["mcp-session-id", wire.sessionId]);
  if (wire.revision === "2026-07-28" && "method" in message) {
    headers.push(["mcp-method", message.method]);
    if (name !== undefined) headers.push(["mcp-name", name]);
  }
  for (const [k, v] of Object.entries(extra)) headers.push([k, v]);
  if ("response" in message) {
    return { headers, body: encoder.encode(JSON.stringify(message.response)) };
  }
  const params = { ...message.params };
  if (wire.meta) {
    params._meta = { ...(params._meta as JsonObject | undefined), ...wire.meta };
  }
  const body = encoder.encode(JSON.stringify({ jsonrpc: "2.0", ...message, params }));
  return { headers, body };
}

/**
 * Send one `tools/call` (see the module doc).
 * @returns the tool's result as the MCP server answered it (numbers exact)
 * @throws {UpstreamFailure} typed by kind; the caller's abort reason when it cancelled
 */
export async function fastCall(call: FastCall): Promise<CallToolResult> {
  const params: JsonObject = { name: call.name, arguments: call.args };
  if (call.traceMeta) params._meta = call.traceMeta;
  const { headers, body } = framed(
    call.wire,
    { id: call.id, method: "tools/call", params },
    call.name,
    call.headers,
  );
  const caller = call.signal;
  caller?.throwIfAborted();
  // The caller's cancellation and the request timeout as one signal, on the
  // shared deadline slots (no timer of its own per call: src/outbound/deadline.ts).
  const deadline = new Deadline(caller, call.timeoutMs, () => new UpstreamTimeout(call.timeoutMs));
  const stream = new AnswerStream(call);
  let answer;
  try {
    answer = await call.http.request({
      method: "POST",
      url: call.url,
      headers,
      body,
      signal: deadline.signal,
      maxBodyBytes: call.maxResponseBytes,
      until: (piece) => stream.feed(piece),
    });
  } catch (error) {
    // The MCP server sent a request 2026-07-28 forbids (AnswerStream): the connection is closed.
    if (error instanceof UpstreamRefused) throw error;
    if (deadline.signal.aborted) {
      const timedOut = deadline.signal.reason instanceof UpstreamTimeout;
      call.cancel(call.id, timedOut ? "request timeout" : "the caller cancelled");
      if (timedOut) throw new UpstreamTimeout(call.timeoutMs);
      throw caller?.reason ?? error;
    }
    if (error instanceof Http1Error && error.phase === "body") {
      throw new UpstreamCutOff(
        `the upstream's answer broke off (${error.message}); the request was delivered and ` +
          "may have run",
      );
    }
    throw new UpstreamUnavailable(conciseMessage((error as Error).message), { cause: error });
  } finally {
    deadline.clear();
  }
  const { status } = answer;
  if (status >= 300 && status < 400) {
    throw new UpstreamRedirected(status, answer.headers.get("location") ?? null, call.url);
  }
  // A refused credential is said in words that point at it, never quoting the body (as http_fetch.ts).
  const sent = call.exchanged ? "exchanged" : call.headers.authorization ? "own" : "none";
  const refusal = httpRefusal(status, call.url.href, "tools/call", sent);
  if (refusal) throw refusal;
  if (answer.body === null) throw new UpstreamTooLarge(call.maxResponseBytes);
  const type = (answer.headers.get("content-type") ?? "").toLowerCase();
  if (status < 200 || status >= 300) {
    const text = decoder.decode(answer.body.subarray(0, 400));
    throw new UpstreamUnavailable(
      conciseMessage(`Error POSTing to endpoint (HTTP ${status}): ${text}`),
    );
  }
  const found = type.startsWith("text/event-stream")
    ? stream.answer ?? stream.end(answer.body)
    : jsonAnswer(decoder.decode(answer.body), call);
  if (found === undefined) {
    throw new UpstreamCutOff(
      type.startsWith("text/event-stream")
        ? "the upstream's event stream ended before the answer; the request was delivered " +
          "and may have run"
        : `the upstream answered ${status} without the call's result; the request was ` +
          "delivered and may have run",
    );
  }
  return resultOf(found, call.id);
}

/** One JSON-RPC answer, and the JSON text it came in (for exact numbers). */
interface Answer {
  message: JsonObject;
  text: string;
}

/**
 * The answer to the call in one JSON body (a message or a batch); a request
 * of the MCP server's own in a batch is answered or refused as in a stream.
 */
function jsonAnswer(text: string, call: FastCall): Answer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UpstreamRefused(0, "the upstream's answer is not JSON");
  }
  let found: Answer | undefined;
  for (const m of Array.isArray(value) ? value : [value]) {
    if (isServerRequest(m)) upstreamAsked(call, m);
    else if (isObject(m) && m.id === call.id && ("result" in m || "error" in m)) {
      found ??= { message: m, text };
    }
  }
  return found;
}

/**
 * A request of the MCP server's own during the call: answered at once under
 * 2025-11-25; under 2026-07-28, which forbids it, the call fails (thrown).
 */
function upstreamAsked(call: FastCall, request: ServerRequest): void {
  if (call.wire.revision === "2026-07-28") throw forbiddenRequest(request.method);
  call.answer(answerFor(call.wire.revision, request));
}

/**
 * The call's event stream, read as it arrives (WHATWG event-stream lines:
 * CRLF, LF or CR; `data` lines of an event joined with LF), until the
 * answer to the call; a `notifications/tools/list_changed` in it is
 * reported, a request of the MCP server's own is answered or fails the call
 * ({@link upstreamAsked}: thrown out of {@link AnswerStream.feed}), other
 * messages are dropped.
 */
class AnswerStream {
  readonly #call: FastCall;
  readonly #lines = new LineSplitter();
  readonly #decoder = new TextDecoder();
  #data: string[] = [];
  #type = "";
  answer?: Answer;

  constructor(call: FastCall) {
    this.#call = call;
  }

  /** Whether any piece came through {@link feed} (a chunked or close-framed, uncoded body). */
  #fed = false;

  /** Feed a piece of the body; true once the answer has arrived. */
  feed(piece: Uint8Array): boolean {
    if (this.answer) return true;
    this.#fed = true;
    this.#lines.feed(this.#decoder.decode(piece, { stream: true }), false, this.#line);
    return this.answer !== undefined;
  }

  /**
   * The stream ended: the answer, if its last event completes it. `body` is
   * the whole body as read: read here when it did not come piece by piece
   * (a `Content-Length` or content-coded body is read whole first).
   */
  end(body: Uint8Array): Answer | undefined {
    if (!this.#fed && body.byteLength > 0) {
      this.#lines.feed(this.#decoder.decode(body, { stream: true }), false, this.#line);
    }
    this.#lines.feed(this.#decoder.decode(), true, this.#line);
    this.#event();
    return this.answer;
  }

  #line = (line: string): void => {
    if (line === "") return this.#event();
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#type = value;
  };

  #event(): void {
    if (this.#data.length > 0 && (this.#type === "" || this.#type === "message") && !this.answer) {
      const text = this.#data.join("\n");
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        message = undefined;
      }
      if (isServerRequest(message)) upstreamAsked(this.#call, message);
      else if (isObject(message)) {
        if (message.id === this.#call.id && ("result" in message || "error" in message)) {
          this.answer = { message, text };
        } else if (message.method === "notifications/tools/list_changed") {
          this.#call.onToolsChanged();
        }
      }
    }
    this.#data = [];
    this.#type = "";
  }
}

/** The tool's result from its JSON-RPC answer, or the failure it stands for. */
function resultOf({ message, text }: Answer, id: number): CallToolResult {
  if ("error" in message) {
    const error = message.error as { code?: unknown; message?: unknown };
    throw new UpstreamRefused(
      typeof error?.code === "number" ? error.code : 0,
      typeof error?.message === "string" ? error.message : "an error without a message",
    );
  }
  const result = message.result;
  if (!isObject(result)) throw invalid("result");
  if (result.resultType !== undefined && result.resultType !== "complete") {
    throw new UpstreamRefused(
      0,
      "the upstream asked for input (input_required), which weir does not relay; " +
        "the call was sent once and not re-sent",
    );
  }
  const content = result.content;
  if (!Array.isArray(content) || !content.every(validBlock)) throw invalid("content");
  if ("isError" in result && typeof result.isError !== "boolean") throw invalid("isError");
  if ("structuredContent" in result && !isObject(result.structuredContent)) {
    throw invalid("structuredContent");
  }
  if ("_meta" in result && !isObject(result._meta)) throw invalid("_meta");
  const typed = result as unknown as CallToolResult;
  // Numbers in structuredContent as the MCP server wrote them (exact.ts), as on the official path.
  return "structuredContent" in result ? withExactNumbers(typed, exactResult(text, id)) : typed;
}

/** A content block of a type MCP defines, with its fields. */
function validBlock(block: unknown): boolean {
  if (!isObject(block) || typeof block.type !== "string") return false;
  const fields = Object.hasOwn(CONTENT_FIELDS, block.type) ? CONTENT_FIELDS[block.type] : null;
  if (!fields) return false;
  if (block.type === "resource") {
    return isObject(block.resource) && typeof block.resource.uri === "string";
  }
  return fields.every((f) => typeof block[f] === "string");
}

function invalid(part: string): UpstreamRefused {
  return new UpstreamRefused(0, `the upstream's answer is not a valid CallToolResult (${part})`);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

let route: boolean | undefined;

/**
 * Whether this process may take the short path at all: not when a proxy
 * variable is set or cannot be read (`fetch` honours proxies; weir's client
 * does not), nor when `WEIR_UPSTREAM_CLIENT=fetch` asks for `fetch`.
 */
export function shortPathAllowed(): boolean {
  if (route !== undefined) return route;
  const proxy = proxySetting();
  const readable = proxy.readable &&
    Deno.permissions.querySync({ name: "env", variable: "WEIR_UPSTREAM_CLIENT" }).state ===
      "granted";
  return route = readable && !proxy.variable && !proxy.problem &&
    Deno.env.get("WEIR_UPSTREAM_CLIENT") !== "fetch";
}

const paramHeaders = new WeakMap<object, boolean>();

/** Whether a tool's definition asks for `Mcp-Param` headers (2026-07-28 `x-mcp-header`). */
export function asksForParamHeaders(definition: { inputSchema?: unknown } | undefined): boolean {
  if (!definition) return false;
  let asks = paramHeaders.get(definition);
  if (asks === undefined) {
    asks = JSON.stringify(definition.inputSchema ?? {}).includes('"x-mcp-header"');
    paramHeaders.set(definition, asks);
  }
  return asks;
}

/**
 * Tell the MCP server a call is abandoned (`notifications/cancelled`), once,
 * without waiting for its answer beyond a few seconds; a failure is ignored
 * (the call's own failure is what the caller hears about).
 */
export function sendCancelled(
  http: Http1Client,
  url: URL,
  wire: FastWire,
  headers: Record<string, string>,
  id: number,
  reason: string,
): void {
  post(
    http,
    url,
    framed(
      wire,
      { method: "notifications/cancelled", params: { requestId: id, reason } },
      undefined,
      headers,
    ),
  );
}

/**
 * Send the MCP server weir's answer to one of its requests (a JSON-RPC
 * response, POSTed as the Streamable HTTP transport says a client answers),
 * once, as {@link sendCancelled} does.
 */
export function sendAnswer(
  http: Http1Client,
  url: URL,
  wire: FastWire,
  headers: Record<string, string>,
  response: JsonObject,
): void {
  post(http, url, framed(wire, { response }, undefined, headers));
}

/** POST one message of weir's own, not waiting beyond a few seconds; a failure is ignored. */
function post(
  http: Http1Client,
  url: URL,
  { headers: sent, body }: { headers: [string, string][]; body: Uint8Array },
): void {
  http.request({
    method: "POST",
    url,
    headers: sent,
    body,
    signal: AbortSignal.timeout(5_000),
    maxBodyBytes: 64 * 1024,
  }).catch(() => {});
}

/** What {@link shortPathCall} sends one call with. */
export interface ShortPath {
  url: URL;
  http: Http1Client;
  /** The request's JSON-RPC id. */
  id: number;
  wire: FastWire;
  /** The MCP server's header fields (read now) and the call's own (the caller's exchanged token). */
  headers: Record<string, string>;
  /** `headers.authorization` is the caller's exchanged token. */
  exchanged: boolean;
  maxResponseBytes: number;
  /** The request timeout, in ms (0: none). */
  timeoutMs: number;
  onToolsChanged(): void;
  /** What the CLIENT span says, when telemetry is on. */
  traced: McpUpstreamCall;
}

/**
 * One `tools/call` on the short path (see the module doc), with the trace
 * context, in a CLIENT span when telemetry is on.
 * @throws {UpstreamFailure} typed by kind; the signal's reason when the caller cancelled
 */
export async function shortPathCall(
  path: ShortPath,
  name: string,
  args: JsonObject,
  signal: AbortSignal | undefined,
): Promise<CallToolResult> {
  const { url, http, wire } = path;
  const send = () => {
    const headers = { ...path.headers };
    const traceMeta = traceContext();
    if (traceMeta) Object.assign(headers, traceMeta);
    return fastCall({
      url,
      http,
      wire,
      id: path.id,
      name,
      args,
      traceMeta,
      headers,
      exchanged: path.exchanged,
      maxResponseBytes: path.maxResponseBytes,
      signal,
      timeoutMs: path.timeoutMs,
      cancel: (id, reason) => sendCancelled(http, url, wire, headers, id, reason),
      answer: (response) => sendAnswer(http, url, wire, headers, response),
      onToolsChanged: path.onToolsChanged,
    });
  };
  try {
    const tracing = upstreamTracing();
    return await (tracing ? tracing.mcp(path.traced, send) : send());
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    throw unavailable(error);
  }
}
