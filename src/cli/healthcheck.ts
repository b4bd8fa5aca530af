/**
 * `weir healthcheck [URL]`: ask a running weir whether it serves, for
 * container health checks in images that have no shell or curl.
 *
 * @module
 */
import { connectFailure } from "../outbound/connect_failure.ts";
import { parseFlags, UsageError } from "./args.ts";
import { MAX_TIMEOUT_MS } from "../guardfile/duration.ts";

/** Where `weir serve --http 0.0.0.0:8080` (the image's default) answers. */
export const DEFAULT_HEALTH_URL = "http://127.0.0.1:8080/healthz";

/**
 * Run `weir healthcheck`: GET the URL (default {@linkcode DEFAULT_HEALTH_URL})
 * with a deadline.
 * @param args the arguments after `healthcheck`: `[URL] [--timeout MS]`
 * @returns 0 when the answer is 2xx within the deadline (default 3000 ms), else 1
 * @throws {UsageError} on a bad command line or a URL that is not http(s)
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { timeout: { type: "string" } });
  if (positionals.length > 1) throw new UsageError("healthcheck takes at most one URL");
  const text = positionals[0] ?? DEFAULT_HEALTH_URL;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new UsageError(`healthcheck takes an http(s) URL, e.g. ${DEFAULT_HEALTH_URL}`);
  }
  const timeout = values.timeout ?? "3000";
  if (!/^\d+$/.test(timeout) || Number(timeout) > MAX_TIMEOUT_MS) {
    throw new UsageError(`--timeout takes milliseconds, at most ${MAX_TIMEOUT_MS}; got ${timeout}`);
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(Number(timeout)) });
    await response.body?.cancel();
    if (response.ok) return 0;
    // A URL without a path asks "/", which weir answers 404: say where its health check is.
    const hint = response.status === 404 && url.pathname === "/"
      ? `; weir answers its health check at /healthz (${shown(new URL("/healthz", url))})`
      : "";
    console.error(`weir: healthcheck: ${shown(url)} answered ${response.status}${hint}`);
  } catch (error) {
    const why = (error as Error).name === "TimeoutError"
      ? `no answer within ${timeout} ms`
      : connectFailure(error) ?? (error as Error).message;
    const hint = /nothing is listening/.test(why)
      ? "; is weir serving there (weir serve FILE --http PORT)?"
      : "";
    console.error(`weir: healthcheck: ${shown(url)}: ${why}${hint}`);
  }
  return 1;
}

/** The URL for a message, its userinfo (a password) left out. */
function shown(url: URL): string {
  if (!url.username && !url.password) return url.href;
  const copy = new URL(url);
  copy.username = "";
  copy.password = "";
  return copy.href;
}
