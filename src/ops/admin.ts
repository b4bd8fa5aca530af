/**
 * The admin endpoints, off unless `--admin-token-env VAR` names their own
 * token (never the inbound one):
 *
 * - `POST /admin/reload`: reload now, as SIGHUP does. 200 `{"ok": true,
 *   "tools": [...], "added": [...], "removed": [...]}`; 422 `{"ok": false,
 *   "errors": ["file:line:column: message", ...]}` when the file has errors
 *   (the running surface is unchanged).
 * - `GET /admin/describe`: the running surface as `weir describe --format
 *   json` prints it (tools, inputs, restrictions, withheld; no secret is read).
 *
 * Each needs `Authorization: Bearer <admin token>` (403 otherwise, reason in
 * the log), refuses a browser-borne request (any `Origin`: 403), reads no
 * body, and answers `Cache-Control: no-store`.
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { Reloader } from "./reload.ts";
import { bearerTokenCheck } from "../inbound/static_tokens.ts";

const HEADERS = {
  "content-type": "application/json",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  connection: "close",
};

function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...extra } });
}

/**
 * Build the admin handler for paths under `/admin/`.
 * @param tokens the admin tokens (from the admin variable; several for rotation)
 */
export function createAdminHandler(
  reloader: Reloader,
  options: { tokens: readonly string[]; log: Logger },
): (request: Request, pathname: string) => Promise<Response> {
  const check = bearerTokenCheck(options.tokens);
  const log = options.log;
  const refused = (rule: string, status: number, reason: string) => {
    log({ level: "warn", event: "refused", decision: "refuse", rule, status, reason });
    return json(status, { error: status === 404 ? "Not Found" : "Forbidden" });
  };
  return async (request, pathname) => {
    const route = pathname === "/admin/reload"
      ? "POST"
      : pathname === "/admin/describe"
      ? "GET"
      : null;
    if (route === null) return json(404, { error: "Not Found" });
    if (request.headers.has("origin")) return refused("origin", 403, "admin: browser origin");
    if (!check(request.headers.get("authorization"))) {
      return refused("auth", 403, "admin: missing or wrong admin token");
    }
    if (request.method !== route) {
      return json(405, { error: `Method Not Allowed: ${route} ${pathname}` }, { allow: route });
    }
    if (route === "GET") {
      const surface = reloader.current;
      return json(200, surface.describe ? surface.describe() : { tools: surface.tools });
    }
    await request.body?.cancel().catch(() => {});
    const result = await reloader.reload("POST /admin/reload");
    return result.ok
      ? json(200, {
        ok: true,
        tools: result.tools,
        added: result.added,
        removed: result.removed,
        warnings: result.warnings,
      })
      : json(422, { ok: false, errors: result.errors, warnings: result.warnings });
  };
}
