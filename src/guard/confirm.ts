/**
 * `confirm "<tool>" message="..."`: a person says yes before a gated call
 * reaches the upstream, through MCP elicitation.
 *
 * - **2026-07-28** (MCP "multi round-trip requests"): the first call answers
 *   with an `InputRequiredResult` holding one `elicitation/create` form request
 *   (key {@link CONFIRM_INPUT}: the message, the tool and its exact arguments,
 *   an empty form) and a `requestState` that binds the question to the tool and
 *   a SHA-256 digest of its canonical arguments, with an expiry and a one-time
 *   nonce, signed with HMAC-SHA-256 (a per-process key). Only a retry carrying
 *   that state, verified, for the same arguments, with `action: "accept"`,
 *   runs; the nonce is then spent. A decline or cancel is a tool error. A
 *   missing, forged, expired, spent or mismatched state, or arguments that
 *   changed, asks again. A client that did not declare the `elicitation`
 *   capability gets a tool error saying confirmation is impossible.
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
import { type CallContext, InputRequiredError, ToolError } from "../mcp/server.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { base64url } from "../mcp/cursor.ts";

/** The `inputRequests` / `inputResponses` key of the confirmation. */
export const CONFIRM_INPUT = "weir/confirm";
/** How long a confirmation question stays answerable (ms). */
export const CONFIRM_TTL_MS = 10 * 60_000;
/** Longest wait for a 2025-11-25 elicitation answer (ms). */
export const CONFIRM_WAIT_MS = 10 * 60_000;
const ARGS_SHOWN = 2_000;

interface State {
  tool: string;
  digest: string;
  exp: number;
  nonce: string;
}

/** The confirmation gate of one server. */
export class ConfirmGate {
  readonly #messages: Readonly<Record<string, string>>;
  /** Made on first use: generating it costs tens of milliseconds at start-up otherwise. */
  #key: Promise<CryptoKey> | undefined;
  /** Spent nonces (until their expiry), so an accepted answer runs the call once. */
  readonly #spent = new Map<string, number>();

  /** @param messages tool -> the question to ask */
  constructor(messages: Readonly<Record<string, string>>) {
    this.#messages = messages;
  }

  /** The per-process HMAC-SHA-256 key that signs `requestState`. */
  #signingKey(): Promise<CryptoKey> {
    this.#key ??= crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]) as Promise<CryptoKey>;
    return this.#key;
  }

  /** Whether `tool` is gated. */
  gates(tool: string): boolean {
    return Object.hasOwn(this.#messages, tool);
  }

  /**
   * Resolve when a person confirmed this exact call; otherwise throw.
   * @throws {InputRequiredError} 2026-07-28: ask (or ask again)
   * @throws {ToolError} 403 `confirmation_declined`, `confirmation_cancelled`,
   *   `confirmation_impossible`
   */
  async confirm(tool: string, args: Record<string, unknown>, ctx: CallContext): Promise<void> {
    const shown = JSON.stringify(canonical(args));
    const message = `${this.#messages[tool]}\n\nTool: ${tool}\nArguments: ${
      shown.length > ARGS_SHOWN ? `${shown.slice(0, ARGS_SHOWN)}...` : shown
    }`;
    const form: JsonObject = {
      mode: "form",
      message,
      requestedSchema: { type: "object", properties: {} },
    };
    if (ctx.input) {
      if (!isObject(ctx.input.clientCapabilities.elicitation)) {
        throw impossible(tool, "this client did not declare the elicitation capability");
      }
      const digest = await sha256(`${tool}\n${shown}`);
      const state = await this.#verify(ctx.input.requestState);
      const answer = ctx.input.responses[CONFIRM_INPUT];
      if (state && state.tool === tool && state.digest === digest && isObject(answer)) {
        const action = answer.action;
        if (action === "accept") {
          this.#spend(state);
          return;
        }
        if (action === "decline" || action === "cancel") {
          this.#spend(state);
          throw refused(tool, action);
        }
      }
      // No answer yet, or one that does not belong to these exact arguments: ask.
      const fresh: State = {
        tool,
        digest,
        exp: Date.now() + CONFIRM_TTL_MS,
        nonce: crypto.randomUUID(),
      };
      throw new InputRequiredError(
        { [CONFIRM_INPUT]: { method: "elicitation/create", params: form } },
        await this.#sign(fresh),
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

  async #sign(state: State): Promise<string> {
    const body = base64url(new TextEncoder().encode(JSON.stringify(state)));
    const mac = await crypto.subtle.sign(
      "HMAC",
      await this.#signingKey(),
      new TextEncoder().encode(body),
    );
    return `${body}.${base64url(new Uint8Array(mac))}`;
  }

  async #verify(token: string | undefined): Promise<State | null> {
    if (!token || token.length > 4096) return null;
    const [body, mac, extra] = token.split(".");
    if (!body || !mac || extra !== undefined) return null;
    try {
      const ok = await crypto.subtle.verify(
        "HMAC",
        await this.#signingKey(),
        fromB64url(mac),
        new TextEncoder().encode(body),
      );
      if (!ok) return null;
      const state = JSON.parse(new TextDecoder().decode(fromB64url(body))) as State;
      if (typeof state.exp !== "number" || state.exp < Date.now()) return null;
      if (this.#spent.has(state.nonce)) return null;
      return state;
    } catch {
      return null;
    }
  }

  #spend(state: State): void {
    const now = Date.now();
    for (const [nonce, exp] of this.#spent) if (exp < now) this.#spent.delete(nonce);
    this.#spent.set(state.nonce, state.exp);
  }
}

function refused(tool: string, action: "decline" | "cancel"): ToolError {
  return new ToolError(
    action === "decline"
      ? `confirmation_declined: the person declined "${tool}"; nothing was sent upstream`
      : `confirmation_cancelled: the confirmation of "${tool}" was dismissed; nothing was sent ` +
        `upstream`,
    { status: 403 },
  );
}

function impossible(tool: string, why: string): ToolError {
  return new ToolError(
    `confirmation_impossible: "${tool}" runs only after a person confirms it, and ${why}; ` +
      `nothing was sent upstream`,
    { status: 403 },
  );
}

async function sha256(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return base64url(new Uint8Array(hash));
}

function fromB64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
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
