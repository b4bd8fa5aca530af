/**
 * Raw 2026-07-28 requests over HTTP, as a stateless client sends them (the
 * `MCP-*` headers, `_meta` with the protocol version and the client's
 * capabilities), optionally with a bearer token; every response is checked
 * against the official 2026-07-28 schema. For tests that follow one client's
 * state (`requestState`, cursors) across servers.
 */
import { MODERN_META } from "./mcp.ts";
import { assertValidResponse, MODERN } from "./schemas.ts";

/** What one request came back with. */
export interface ModernAnswer {
  /** The HTTP status. */
  status: number;
  /** `result`, when the response has one. */
  result?: Record<string, unknown>;
  /** `error`, when the response has one. */
  error?: { code: number; message: string };
}

let nextId = 1;

/**
 * POST one 2026-07-28 request to `${url}/mcp`.
 * @param options `token` a bearer token; `caps` the client capabilities declared
 *   (default `{elicitation: {}}`); `timeoutMs` the whole request; `headers` more headers
 */
export async function modernPost(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: {
    token?: string;
    caps?: Record<string, unknown>;
    timeoutMs?: number;
    /** More request headers (e.g. one a load balancer routes on). */
    headers?: Record<string, string>;
    /** The HTTP client (its own connection pool), e.g. one per simulated client. */
    client?: Deno.HttpClient;
  } = {},
): Promise<ModernAnswer> {
  const name = typeof params.name === "string" ? params.name : undefined;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  Object.assign(headers, options.headers);
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          ...MODERN_META,
          "io.modelcontextprotocol/clientCapabilities": options.caps ?? { elicitation: {} },
        },
      },
    }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    client: options.client,
  });
  const text = await res.text();
  if (!text.startsWith("{")) return { status: res.status };
  const body = assertValidResponse<ModernAnswer>(MODERN, text, method);
  return { status: res.status, result: body.result, error: body.error };
}

/** The `weir/confirm` answer a person gives. */
export const ACCEPT = { "weir/confirm": { action: "accept" } };

/** The text of a tool result's content. */
export function resultText(result: Record<string, unknown> | undefined): string {
  return ((result?.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
}

/**
 * Whether a retry carrying a `requestState` was refused without running: asked
 * again (`input_required`) or refused as invalid params (`-32602`), either of
 * which the MCP spec allows for a state the server will not honour.
 */
export function notRun(answer: Pick<ModernAnswer, "result" | "error">): boolean {
  return answer.result?.resultType === "input_required" || answer.error?.code === -32602;
}
