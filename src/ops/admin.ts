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
 * Each needs `Authorization: Bearer <admin token>` (401 with a Bearer
 * challenge otherwise, RFC 6750 section 3; the reason in the log), refuses a
 * browser-borne request (any `Origin`: 403), and answers `Cache-Control:
 * no-store`. The listener has already applied the checks every route shares
 * (`Host`, no request body, an `Accept` that admits JSON; src/serving/listen.ts).
 * Errors have the one error shape of weir's routes (src/inbound/refusal.ts).
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { Reloader } from "./reload.ts";
import { bearerRefusal, bearerTokenCheck } from "../inbound/static_tokens.ts";
import { errorBody } from "../inbound/refusal.ts";

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
  const refused = (
    rule: string,
    status: number,
    message: string,
    reason: string,
    extra: Record<string, string> = {},
  ) => {
    log({ level: "warn", event: "refused", decision: "refuse", rule, status, reason });
    return new Response(errorBody(rule, message, status), {
      status,
      headers: { ...HEADERS, ...extra },
    });
  };
  return async (request, pathname) => {
    const route = pathname === "/admin/reload"
      ? "POST"
      : pathname === "/admin/describe"
      ? "GET"
      : null;
    if (route === null) {
      return refused(
        "not_found",
        404,
        "Not Found: the admin endpoints are POST /admin/reload and GET /admin/describe",
        `no admin route ${pathname.slice(0, 200)}`,
      );
    }
    if (request.headers.has("origin")) {
      return refused(
        "origin",
        403,
        "Forbidden: the admin endpoints refuse browser requests (any Origin); call them from " +
          "a script or curl",
        "admin: browser origin",
      );
    }
    const authorization = request.headers.get("authorization");
    if (!check(authorization)) {
      // RFC 6750 section 3.1: no error code without a bearer credential (none, another scheme).
      const refusal = bearerRefusal(
        authorization,
        { realm: "weir-admin" },
        "<admin token>, a token from the variable --admin-token-env names",
        "the admin token is not one this server accepts",
      );
      return refused("auth", 401, refusal.message, `admin: ${refusal.reason}`, {
        "www-authenticate": refusal.challenge,
      });
    }
    if (request.method !== route) {
      return refused(
        "method",
        405,
        `Method Not Allowed: ${route} ${pathname}`,
        `admin: ${request.method.slice(0, 16)} ${pathname}`,
        { allow: route },
      );
    }
    if (route === "GET") {
      const surface = reloader.current;
      return json(200, surface.describe ? await surface.describe() : { tools: surface.tools });
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
