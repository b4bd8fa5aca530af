/**
 * `confirm "<tool>" message="..."`: a person says yes before a gated call
 * reaches the upstream, through MCP elicitation.
 *
 * - **2026-07-28** (MCP "multi round-trip requests"): the first call answers
 *   with an `InputRequiredResult` holding one `elicitation/create` form request
 *   (key {@link CONFIRM_INPUT}: the message, the tool and its exact arguments,
 *   an empty form) and a `requestState` that binds the question to the tool and
 *   a SHA-256 digest of its canonical arguments, with an expiry and a one-time
 *   nonce, signed by the server's key service (src/mcp/signed_state.ts:
 *   HMAC-SHA-256 under the configured keys, or a per-process key) and bound
 *   there to the caller (the authenticated subject or token) when there is one.
 *   Only a retry carrying that state, verified, from the same caller, for the
 *   same arguments, with `action: "accept"`, runs; the nonce is then spent in
 *   the key service's single-use store (Redis when configured, so an answer
 *   runs its call once across every replica; a nonce from before the store
 *   lost its records is never taken as unspent). A decline or cancel is a tool
 *   error. A retry whose state does not verify (malformed, forged or altered,
 *   issued to another caller or for another call, or already answered) is
 *   refused with JSON-RPC `-32602` saying why and to call again without it,
 *   never re-asked: a state that fails verification is rejected (2026-07-28,
 *   "multi round-trip requests"). Only an expired question, a valid one still
 *   without an answer, or one the single-use store can no longer place
 *   (`unrecorded`), is asked again. A single-use store
 *   that cannot be reached refuses the call (503): it never runs unrecorded. A
 *   request that did not declare the `elicitation` capability is refused with
 *   JSON-RPC `-32021` (`data.requiredCapabilities: {elicitation: {}}`).
 * - **2025-11-25**: when the client declared `elicitation` in `initialize` and
 *   the transport carries server-to-client requests (stdio), weir sends
 *   `elicitation/create` and waits (at most {@link CONFIRM_WAIT_MS}) for the
 *   answer. Over HTTP (stateless here, no server-to-client requests) or
 *   without the capability, the call is refused: confirmation is impossible.
 * - **The tool API** (`POST /api/<tool>`) cannot ask anyone: a gated tool never
 *   runs there.
 *
 * Nothing here reaches the upstream: a refusal happens before any request.
 *
 * @module
 */
import {
  type CallContext,
  InputRequiredError,
  type Logger,
  type ToolError,
} from "../mcp/server.ts";
import { ErrorCode, type JsonObject, McpError } from "../mcp/jsonrpc.ts";
import { base64url, type SpendOutcome, StateKeys } from "../mcp/signed_state.ts";
import { WeirError } from "../errors/kinds.ts";
import { clipText } from "../mcp/text.ts";

/** The `inputRequests` / `inputResponses` key of the confirmation (and its signing purpose). */
export const CONFIRM_INPUT = "weir/confirm";
/** How long a confirmation question stays answerable (ms). */
export const CONFIRM_TTL_MS = 10 * 60_000;
/** Longest wait for a 2025-11-25 elicitation answer (ms). */
export const CONFIRM_WAIT_MS = 10 * 60_000;
/** Longest argument value shown whole to a person (its JSON); a longer one is cut, never its key. */
export const VALUE_SHOWN = 200;

/** What a person is shown a call will do, besides the tool and its arguments. */
export interface ShownCall {
  /**
   * The upstream request: `POST /repos/o/r/issues/5/comments` (the method
   * and the resolved path), or `tools/call create_issue` (the wrapped MCP
   * server's tool).
   */
  request: string;
  /** Argument names shown first, in this order (path values, then query); the rest follow sorted. */
  identifying: readonly string[];
  /**
   * The names the tool's schema declares, when it takes others too (an open
   * schema of a wrapped MCP server): a key outside them is listed after every
   * declared one, under its own heading, so no number of extra keys pushes a
   * declared argument out of sight. Absent: every key is declared.
   */
  declared?: ReadonlySet<string>;
  /**
   * What weir itself puts into the request besides the arguments (`pin`s),
   * by the name the upstream reads: a value, or `undefined` for a secret one
   * (shown as such, never its value).
   */
  pinned?: readonly (readonly [string, unknown])[];
}

interface State {
  tool: string;
  digest: string;
  exp: number;
  nonce: string;
}

/**
 * Why a retry's `requestState` did not let the call run (logged at `info` as
 * `confirmation_state_refused`, never with the state itself):
 * `malformed` not of the wire form; `unsigned` no configured key verifies it
 * for this caller (forged, altered, issued to another caller, or signed with a
 * retired key); `expired`; `other_call` issued for another tool or other
 * arguments; `spent` its answer already ran (on any replica sharing the store);
 * `no_answer` a valid state without an accept, decline or cancel;
 * `unrecorded` asked before the single-use store's present records began (it
 * restarted empty, was flushed or lost them since), so whether its answer
 * already ran cannot be told: asked again, never run.
 */
export type StateRefusal =
  | "malformed"
  | "unsigned"
  | "expired"
  | "other_call"
  | "spent"
  | "no_answer"
  | "unrecorded";

/** The confirmation gate of one server. */
export class ConfirmGate {
  readonly #messages: Readonly<Record<string, string>>;
  readonly #keys: StateKeys;
  readonly #log?: Logger;

  /**
   * @param messages tool -> the question to ask
   * @param keys the server's key service (signing and single use); default a
   *   per-process key with single use in this process
   * @param log where refused states are noted (`confirmation_state_refused`)
   */
  constructor(messages: Readonly<Record<string, string>>, keys?: StateKeys, log?: Logger) {
    this.#messages = messages;
    this.#keys = keys ?? new StateKeys();
    this.#log = log;
  }

  /** Whether `tool` is gated. */
  gates(tool: string): boolean {
    return Object.hasOwn(this.#messages, tool);
  }

  /**
   * Resolve when a person confirmed this exact call; otherwise throw. The
   * person sees the file's question, the tool, the upstream request (`call`)
   * and every argument, identifying ones first, each value cut at
   * {@link VALUE_SHOWN} characters (never a key, so no target is hidden).
   * @throws {InputRequiredError} 2026-07-28: ask (or ask again)
   * @throws {ToolError} 403 `confirmation_declined`, `confirmation_cancelled`,
   *   `confirmation_impossible`; 503 `confirmation_store_unavailable` (the
   *   single-use store could not record the answer: the call was not run)
   */
  async confirm(
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
    call?: ShownCall,
  ): Promise<void> {
    const shown = JSON.stringify(canonical(args));
    const message = question(this.#messages[tool], tool, args, call);
    const form: JsonObject = {
      mode: "form",
      message,
      requestedSchema: { type: "object", properties: {} },
    };
    if (ctx.input) {
      if (!isObject(ctx.input.clientCapabilities.elicitation)) {
        // Work that needs a capability the request did not declare is -32021
        // (2026-07-28, "MissingRequiredClientCapabilityError"), with what it needs.
        throw new McpError(
          ErrorCode.MissingRequiredClientCapability,
          `"${tool}" runs only after a person confirms it, which needs the elicitation ` +
            `capability this request did not declare; declare it in _meta["` +
            `io.modelcontextprotocol/clientCapabilities"] (e.g. {"elicitation": {}}) to be ` +
            `asked; nothing was sent upstream`,
          { requiredCapabilities: { elicitation: {} } },
        );
      }
      const digest = await sha256(`${tool}\n${shown}`);
      if (ctx.input.requestState !== undefined) {
        const why = await this.#answered(tool, digest, ctx);
        if (why === "accepted") return;
        this.#log?.({ level: "info", event: "confirmation_state_refused", tool, why });
        if (why !== "expired" && why !== "no_answer" && why !== "unrecorded") {
          throw stateRefused(tool, why);
        }
      }
      // No answer yet, an expired question, or one the store cannot place: ask.
      const fresh: State = {
        tool,
        digest,
        exp: Date.now() + CONFIRM_TTL_MS,
        nonce: await this.#keys.issue(),
      };
      throw new InputRequiredError(
        { [CONFIRM_INPUT]: { method: "elicitation/create", params: form } },
        await this.#keys.seal(CONFIRM_INPUT, fresh, ctx.caller),
        "a person must confirm this call",
      );
    }
    if (ctx.elicit) {
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(CONFIRM_WAIT_MS)]);
      let answer: JsonObject;
      try {
        answer = await ctx.elicit(form, signal);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        throw impossible(
          tool,
          `the confirmation request got no answer (${
            error instanceof Error ? error.message : "failed"
          })`,
        );
      }
      if (answer.action === "accept") return;
      throw refused(tool, answer.action === "decline" ? "decline" : "cancel");
    }
    throw impossible(
      tool,
      ctx.era === "modern"
        ? "the HTTP tool API cannot ask anyone (call it over MCP)"
        : "this connection cannot ask: 2025-11-25 needs a client that declares elicitation, " +
          "over stdio (weir sends no server-to-client requests over HTTP); or use 2026-07-28",
    );
  }

  /**
   * A retry that carries a `requestState`: `"accepted"` (its nonce now spent:
   * the call may run), a throw after a decline or cancel, or why the state
   * does not let the call run (then the caller asks again).
   */
  async #answered(
    tool: string,
    digest: string,
    ctx: CallContext,
  ): Promise<StateRefusal | "accepted"> {
    const input = ctx.input!;
    const opened = await this.#keys.open(CONFIRM_INPUT, input.requestState, ctx.caller);
    if (!opened.ok) return opened.why;
    const state = opened.payload as Partial<State> | null;
    if (
      !isObject(state) || typeof state.exp !== "number" || typeof state.nonce !== "string" ||
      state.nonce.length > 100
    ) {
      return "malformed";
    }
    if (state.exp < Date.now()) return "expired";
    if (state.tool !== tool || state.digest !== digest) return "other_call";
    const answer = input.responses[CONFIRM_INPUT];
    const action = isObject(answer) ? answer.action : undefined;
    if (action !== "accept" && action !== "decline" && action !== "cancel") return "no_answer";
    let outcome: SpendOutcome;
    try {
      outcome = await this.#keys.spend(state.nonce, state.exp);
    } catch (error) {
      this.#log?.({
        level: "warn",
        event: "confirmation_store_down",
        tool,
        reason: error instanceof Error ? error.message.slice(0, 120) : "store error",
      });
      throw new WeirError(
        "confirmation_store_unavailable",
        `the ${this.#keys.singleUseKind} store that records ` +
          `answered confirmations cannot be reached, so "${tool}" was refused, not run; ` +
          `check that the store is up (weir reconnects on its own) and confirm again`,
        { status: 503 },
      );
    }
    if (outcome === "used") return "spent";
    if (outcome !== "spent") return "unrecorded";
    if (action === "accept") return "accepted";
    throw refused(tool, action);
  }
}

/**
 * The text a person reads: the file's question, then the tool, the upstream
 * request, the values weir sets itself (`pin`s; a secret one named, not
 * shown), and one line per argument (`"key": value`): the identifying ones
 * first, then the rest by name with cut values last, then (under their own
 * heading) keys the tool does not declare; each value's JSON cut at
 * {@link VALUE_SHOWN} characters with its full length said, never a key.
 * Keys and values are written so that nothing in them hides or reorders
 * what follows ({@link visible}): no line breaks, bidirectional controls,
 * invisible or look-alike spaces.
 */
export function question(
  asked: string,
  tool: string,
  args: Record<string, unknown>,
  call?: ShownCall,
): string {
  const first = call ? call.identifying.filter((k) => Object.hasOwn(args, k)) : [];
  const shown = new Map(Object.keys(args).map((k) => [k, valueShown(args[k])]));
  const declared = call?.declared;
  const undeclared = (k: string) => declared !== undefined && !declared.has(k);
  // The rest sorted by name, a cut (long) value after every whole one; undeclared keys last.
  const rest = [...shown.keys()].filter((k) => !first.includes(k)).sort((a, b) =>
    Number(undeclared(a)) - Number(undeclared(b)) ||
    Number(shown.get(a)!.cut) - Number(shown.get(b)!.cut) || (a < b ? -1 : a > b ? 1 : 0)
  );
  const line = (k: string) => `  ${visible(JSON.stringify(k))}: ${shown.get(k)!.text}`;
  const lines = [...first, ...rest.filter((k) => !undeclared(k))].map(line);
  const extra = rest.filter(undeclared).map(line);
  if (extra.length > 0) {
    lines.push(`Not declared by the tool (${extra.length}):`, ...extra);
  }
  const pinned = (call?.pinned ?? []).map(([k, v]) =>
    `  ${visible(JSON.stringify(k))}: ${v === undefined ? "(a secret)" : valueShown(v).text}`
  );
  return `${asked}\n\nTool: ${tool}\n` + (call ? `Request: ${visible(call.request)}\n` : "") +
    (pinned.length > 0 ? `Set by the server:\n${pinned.join("\n")}\n` : "") +
    (lines.length > 0 ? `Arguments:\n${lines.join("\n")}` : "Arguments: none");
}

function valueShown(value: unknown): { text: string; cut: boolean } {
  const text = visible(JSON.stringify(canonical(value)) ?? "null");
  if (text.length <= VALUE_SHOWN) return { text, cut: false };
  return {
    text: `${clipText(text, VALUE_SHOWN)}... (cut: ${text.length} characters in all)`,
    cut: true,
  };
}

/**
 * Characters a person cannot see, or that move, break or overlay what they
 * see: format characters (bidirectional controls, zero-width characters, the
 * soft hyphen, tag characters), line and paragraph separators, control
 * characters JSON leaves as they are (C1, DEL), spaces other than U+0020,
 * variation selectors, letters that render blank (Hangul fillers, the
 * braille blank), and a combining mark past the second on one character.
 */
const HIDDEN =
  /[\p{Cf}\p{Zl}\p{Zp}\p{Cc}\p{Zs}\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]|(?<=\p{M}{2})\p{M}/gu;

/**
 * JSON text as a person is shown it: each {@link HIDDEN} character (but the
 * plain space) as its JSON escape (`\u202e`; a pair of escapes past U+FFFF),
 * so a value cannot hide, reorder or break the lines of the question.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { visible } from "./confirm.ts";
 * assert.equal(visible(JSON.stringify("evil\u202e.txt")), '"evil\\u202e.txt"');
 * assert.equal(visible(JSON.stringify("a b")), '"a b"');
 * ```
 */
export function visible(json: string): string {
  return json.replace(HIDDEN, (c) => {
    if (c === " ") return c;
    let out = "";
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}

/** What a refused `requestState` tells the caller, by why it was refused. */
const STATE_REFUSALS: Readonly<
  Record<Exclude<StateRefusal, "expired" | "no_answer" | "unrecorded">, string>
> = {
  malformed: "is not a requestState this server issued (malformed)",
  unsigned: "does not verify: it was altered, issued by another server or to another caller, " +
    "or signed with a key this server no longer holds",
  other_call: "was issued for another call (another tool or other arguments)",
  spent: "was already answered: its call ran once, or was declined or cancelled",
};

/**
 * The JSON-RPC `-32602` answer to a retry whose `requestState` does not let
 * the call run. Nothing was sent upstream.
 */
function stateRefused(
  tool: string,
  why: Exclude<StateRefusal, "expired" | "no_answer" | "unrecorded">,
): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Invalid requestState for "${tool}": it ${STATE_REFUSALS[why]}; nothing was sent upstream. ` +
      `Call the tool again without requestState and inputResponses to be asked to confirm anew`,
    { reason: why },
  );
}

function refused(tool: string, action: "decline" | "cancel"): ToolError {
  return action === "decline"
    ? new WeirError(
      "confirmation_declined",
      `the person declined "${tool}"; nothing was sent upstream`,
    )
    : new WeirError(
      "confirmation_cancelled",
      `the confirmation of "${tool}" was dismissed; nothing was sent upstream`,
    );
}

function impossible(tool: string, why: string): ToolError {
  return new WeirError(
    "confirmation_impossible",
    `"${tool}" runs only after a person confirms it, and ${why}; ` +
      `nothing was sent upstream`,
    { status: 403 },
  );
}

async function sha256(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return base64url(new Uint8Array(hash));
}

/** The arguments with keys sorted at every level (the digest must not depend on key order). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      Object.defineProperty(out, k, { value: canonical(value[k]), enumerable: true });
    }
    return out;
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
