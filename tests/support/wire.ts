/**
 * Watching the wire when an official client is the one receiving responses:
 * every JSON-RPC response is checked against the official schema of the
 * revision its request was sent under, and problems are collected for the
 * test to assert empty. Over HTTP the handler is wrapped; over stdio the
 * client's transport is.
 */
import { MODERN_META } from "./mcp.ts";
import { LEGACY, MODERN, responseProblems, type Revision } from "./schemas.ts";

/** What a tap saw: responses checked, and every schema problem found. */
export interface WireLog {
  /** `method -> count` of responses checked. */
  checked: Map<string, number>;
  problems: string[];
}

function newLog(): WireLog {
  return { checked: new Map(), problems: [] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The revision a request was sent under: a modern `_meta` says 2026-07-28. */
function revisionOf(request: Record<string, unknown>): Revision {
  const params = isObject(request.params) ? request.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const key = Object.keys(MODERN_META)[0];
  return key in meta ? MODERN : LEGACY;
}

function check(log: WireLog, revision: Revision, method: string, response: unknown): void {
  log.checked.set(method, (log.checked.get(method) ?? 0) + 1);
  for (const problem of responseProblems(revision, response, method)) {
    log.problems.push(`${method}: ${problem} in ${JSON.stringify(response).slice(0, 500)}`);
  }
}

/** Wrap an HTTP handler so every JSON response it sends is schema-checked. */
export function tapHandler(
  handler: (request: Request) => Promise<Response>,
): { handler: (request: Request) => Promise<Response>; log: WireLog } {
  const log = newLog();
  return {
    log,
    handler: async (request) => {
      let sent: unknown = null;
      if (request.method === "POST") {
        try {
          sent = JSON.parse(await request.clone().text());
        } catch {
          sent = null;
        }
      }
      const response = await handler(request);
      const text = await response.clone().text();
      if (isObject(sent) && "id" in sent && typeof sent.method === "string" && text !== "") {
        check(log, revisionOf(sent), sent.method, JSON.parse(text));
      }
      return response;
    },
  };
}

/** The part of an SDK client transport (v1 and v2 alike) a tap needs. */
export interface Transport {
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: unknown, options?: unknown): Promise<void>;
  onmessage?: (message: unknown, extra?: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId?: string;
  setProtocolVersion?: (version: string) => void;
}

/** Wrap an SDK client transport so every response it delivers is schema-checked. */
export function tapTransport(inner: Transport): { transport: Transport; log: WireLog } {
  const log = newLog();
  const pending = new Map<string | number, { method: string; revision: Revision }>();
  const transport: Transport = {
    start: () => inner.start(),
    close: () => inner.close(),
    send: (message: unknown, options?: unknown) => {
      const m = message as Record<string, unknown>;
      if ("id" in m && typeof m.method === "string") {
        pending.set(m.id as string | number, { method: m.method, revision: revisionOf(m) });
      }
      return inner.send(message, options);
    },
    get sessionId() {
      return inner.sessionId;
    },
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
  };
  Object.defineProperty(transport, "onmessage", {
    set(handler: ((message: unknown, extra?: unknown) => void) | undefined) {
      inner.onmessage = handler === undefined ? undefined : (message: unknown, extra?: unknown) => {
        const m = message as Record<string, unknown>;
        const sent = "id" in m && !("method" in m)
          ? pending.get(m.id as string | number)
          : undefined;
        if (sent) {
          pending.delete(m.id as string | number);
          check(log, sent.revision, sent.method, message);
        }
        handler(message, extra);
      };
    },
    get() {
      return inner.onmessage;
    },
  });
  for (const hook of ["onclose", "onerror"] as const) {
    Object.defineProperty(transport, hook, {
      set(handler: never) {
        inner[hook] = handler;
      },
      get() {
        return inner[hook];
      },
    });
  }
  return { transport, log };
}
