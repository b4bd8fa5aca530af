/**
 * Multi round-trip requests (2026-07-28, "multi round-trip requests"): the
 * three methods that may answer `InputRequiredResult` (`tools/call`,
 * `resources/read`, `prompts/get`) hand the host the client's answers
 * ({@link CallContext.input}: `inputResponses`, the echoed `requestState`,
 * the request's client capabilities), and turn an {@link InputRequiredError}
 * the host throws into the `InputRequiredResult` itself (no cache hints: the
 * spec forbids them there). Under 2025-11-25 there is no `input`: a host that
 * still asks gets its method's refusal.
 *
 * @module
 */
import type { JsonObject } from "./jsonrpc.ts";
import { MetaKey } from "./revisions.ts";
import type { CallContext } from "./options.ts";
import type { InputRequiredError } from "./errors.ts";
import { isObject } from "./results.ts";
import { RequestCall } from "./session.ts";
import type { ServerSetup } from "./setup.ts";

/**
 * Give a 2026-07-28 request's host its `input` (a JSON-RPC request's call
 * only: the tool API has no client to ask). `params` were typed by
 * src/mcp/params.ts already (`inputResponses` an object of objects,
 * `requestState` a string).
 */
export function prepareInput(call: CallContext, params: Record<string, unknown>): void {
  if (!(call instanceof RequestCall) || call.era !== "modern") return;
  const meta = params._meta as Record<string, unknown>;
  const responses = params.inputResponses;
  call.input = {
    responses: isObject(responses) ? responses as JsonObject : {},
    clientCapabilities: meta[MetaKey.clientCapabilities] as JsonObject,
  };
  if (typeof params.requestState === "string") call.input.requestState = params.requestState;
}

/** The `InputRequiredResult` of a host's {@link InputRequiredError}, serialized. */
export function inputRequiredAnswer(s: ServerSetup, asked: InputRequiredError): { json: string } {
  const answer: JsonObject = {
    resultType: "input_required",
    inputRequests: asked.inputRequests,
    _meta: { [MetaKey.serverInfo]: s.serverInfo },
  };
  if (asked.requestState !== undefined) answer.requestState = asked.requestState;
  return { json: JSON.stringify(answer) };
}
