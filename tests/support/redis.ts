/**
 * A real `redis-server` for tests (the Debian package; `.ci/run` installs
 * it): 127.0.0.1 only, a free port chosen now, no persistence, a temp dir.
 * `stop()` kills it; `start()` brings it back on the same port.
 */
import { freePort, waitForPort } from "./port.ts";

/** Why Redis tests cannot run here, or null when they can. */
export function redisMissing(): string | null {
  try {
    new Deno.Command("redis-server", { args: ["--version"] }).outputSync();
    return null;
  } catch {
    return "redis-server is not installed (apt-get install redis-server; .ci/run does it)";
  }
}

/** A running (or stopped) redis-server. */
export interface RedisServer {
  url: string;
  port: number;
  /** Kill it (SIGKILL: an outage, not a shutdown). */
  stop(): Promise<void>;
  /** Start it again on the same port, empty. */
  start(): Promise<void>;
  /** Stop for good and remove the temp dir. */
  close(): Promise<void>;
}

/** Start redis-server on a free loopback port. */
export async function startRedis(): Promise<RedisServer> {
  const dir = await Deno.makeTempDir({ prefix: "weir-redis-" });
  let port = 0;
  let child: Deno.ChildProcess | undefined;
  const spawn = async (p: number) => {
    const c = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(p),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
        "--protected-mode",
        "yes",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    if (await waitForPort(p, c, 100)) return c;
    try {
      c.kill("SIGKILL");
    } catch { /* gone */ }
    await c.status;
    return undefined;
  };
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = freePort();
    child = await spawn(port);
  }
  if (!child) throw new Error("redis-server did not start");
  const stop = async () => {
    if (!child) return;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    child = undefined;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start: async () => {
      for (let attempt = 0; attempt < 20 && !child; attempt++) {
        child = await spawn(port);
        if (!child) await new Promise((r) => setTimeout(r, 100));
      }
      if (!child) throw new Error(`redis-server did not restart on port ${port}`);
    },
    close: async () => {
      await stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
