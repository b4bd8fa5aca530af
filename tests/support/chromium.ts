/**
 * Headless Chromium (Debian's `chromium`) for the tests that need a real
 * browser: where it is, the flags every run takes (no network of its own, a
 * fresh profile), the DOM of a page after it rendered, and a screenshot.
 * Tests that need it are `ignore`d, saying why, where it is not installed.
 */
import { GENEROUS_MS, within } from "./wait.ts";

/** The browser's path, or undefined when it is not installed (`apt-get install chromium`). */
export const CHROMIUM: string | undefined = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  });

/** Flags for every run: headless, no sandbox (containers), nothing fetched on its own. */
export const CHROMIUM_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  "--hide-scrollbars",
];

async function run(args: string[]): Promise<{ code: number; stdout: string }> {
  const profile = await Deno.makeTempDir({ prefix: "weir-chromium-" });
  try {
    const child = new Deno.Command(CHROMIUM!, {
      args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const out = await within(child.output(), `chromium ${args.at(-1)}`, GENEROUS_MS);
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
  } finally {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/** The page's DOM as Chromium serialises it once the page has loaded. */
export async function dumpDom(url: string): Promise<string> {
  const r = await run(["--dump-dom", url]);
  if (r.code !== 0) throw new Error(`chromium --dump-dom ${url} exited ${r.code}`);
  return r.stdout;
}

/** A PNG screenshot of the page at `width` x `height` CSS pixels, written to `file`. */
export async function screenshot(
  url: string,
  file: string,
  width = 1280,
  height = 1600,
): Promise<void> {
  const r = await run([`--window-size=${width},${height}`, `--screenshot=${file}`, url]);
  if (r.code !== 0) throw new Error(`chromium --screenshot ${url} exited ${r.code}`);
}

/**
 * Serve fixed pages on 127.0.0.1 and record every path asked for (so a test
 * can show a page loads nothing else).
 */
export function servePages(pages: Record<string, string>): {
  url: string;
  requested: string[];
  stop(): Promise<void>;
} {
  const requested: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    requested.push(path);
    const page = pages[path];
    return page === undefined
      ? new Response("not found", { status: 404 })
      : new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requested,
    stop: () => server.shutdown(),
  };
}
