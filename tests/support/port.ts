/**
 * Ports for the local servers tests start: a free one on 127.0.0.1, and the
 * bounded wait until a started child process accepts TCP connections there.
 */

/** A free port on 127.0.0.1 (probed: bind port 0, read it, let it go). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** `n` distinct free ports on 127.0.0.1 (all bound at once, then let go). */
export function freePorts(n: number): number[] {
  const listeners = Array.from(
    { length: n },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of listeners) l.close();
  return ports;
}

/**
 * Whether `port` on 127.0.0.1 accepts a TCP connection within `tries`
 * attempts 50 ms apart; false at once when `child` exits first.
 */
export async function waitForPort(
  port: number,
  child: Deno.ChildProcess,
  tries: number,
): Promise<boolean> {
  let exited = false;
  child.status.then(() => exited = true);
  for (let i = 0; i < tries && !exited; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return false;
}
