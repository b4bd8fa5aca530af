/**
 * The errors a host throws to the core: {@link ToolError} (a failure the
 * model sees as an `isError` result), {@link NotFoundError} (a resource or
 * prompt that is not there) and {@link InputRequiredError} (a 2026-07-28
 * tool asking the client for input first). Protocol errors are
 * `McpError` (src/mcp/jsonrpc.ts).
 *
 * @module
 */
import type { JsonObject } from "./jsonrpc.ts";

/**
 * Thrown by a tool (2026-07-28) to ask the client for input before it can
 * finish: the core answers `tools/call` with an `InputRequiredResult`
 * (`resultType: "input_required"`, `inputRequests`, `requestState`), and the
 * client retries the call with `inputResponses` and the `requestState` echoed.
 * Only meaningful when {@link CallContext.input} is present; elsewhere the
 * core turns it into an `isError` result (status 403 on the tool API) saying
 * the input could not be asked for.
 *
 * @example Ask the person before closing (2026-07-28)
 * ```ts
 * import { InputRequiredError } from "./errors.ts";
 * const ask = new InputRequiredError(
 *   {
 *     confirm: {
 *       method: "elicitation/create",
 *       params: { message: "Close ticket 7?", requestedSchema: { type: "object", properties: {} } },
 *     },
 *   },
 *   "signed-state",
 * );
 * if (ask.requestState !== "signed-state" || !("confirm" in ask.inputRequests)) throw new Error("no");
 * ```
 */
export class InputRequiredError extends Error {
  /** Request id -> `elicitation/create` (or another input request) object. */
  readonly inputRequests: JsonObject;
  /** Opaque state the client echoes on the retry (protect it: it is untrusted). */
  readonly requestState?: string;

  /**
   * Ask the client for input before the tool can finish.
   *
   * @param inputRequests key -> request object (e.g. `{method: "elicitation/create", params}`)
   * @param requestState opaque state for the retry; integrity-protect anything it decides
   * @param message what to say where the input cannot be asked for
   */
  constructor(inputRequests: JsonObject, requestState?: string, message = "input required") {
    super(message);
    this.name = "InputRequiredError";
    this.inputRequests = inputRequests;
    this.requestState = requestState;
  }
}

/**
 * A failure a tool reports to the model: becomes `isError: true` with `message` as text.
 *
 * @example A refusal the tool API answers with 404
 * ```ts
 * import { ToolError } from "./errors.ts";
 * const error = new ToolError("no ticket 7 on board demo-team", { status: 404 });
 * if (error.status !== 404 || error.name !== "ToolError") throw new Error("unexpected");
 * ```
 */
export class ToolError extends Error {
  /** HTTP status the tool API (`POST /api/<tool>`) answers with. */
  readonly status: number;
  /** Optional structured detail (only for tools without an `outputSchema`). */
  readonly structuredContent?: JsonObject;

  /**
   * Make the error.
   * @param message what went wrong, sent to the client as the result's text
   * @param options `status` for the tool API (default 500); `structuredContent` as detail;
   *   `cause`, what led to it (kept on the error, never sent)
   */
  constructor(
    message: string,
    options: { status?: number; structuredContent?: JsonObject; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolError";
    this.status = options.status ?? 500;
    this.structuredContent = options.structuredContent;
  }
}

/**
 * Thrown by a resource or prompt reader: nothing there. `reason` goes to the client as data.
 *
 * @example A resource reader with nothing at that URI
 * ```ts
 * import { NotFoundError } from "./errors.ts";
 * const read = (uri: string) => {
 *   if (uri !== "docs://policy") throw new NotFoundError(uri);
 *   return { contents: [{ uri, text: "Be kind." }] };
 * };
 * let reason = "";
 * try {
 *   read("docs://other");
 * } catch (error) {
 *   if (error instanceof NotFoundError) reason = error.message;
 * }
 * if (reason !== "docs://other") throw new Error("not refused");
 * ```
 */
export class NotFoundError extends Error {
  /**
   * Make the error.
   * @param reason what was not found, e.g. the URI or prompt name
   */
  constructor(reason: string) {
    super(reason);
    this.name = "NotFoundError";
  }
}
