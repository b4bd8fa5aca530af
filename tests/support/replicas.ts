/**
 * Several weir replicas (the real CLI, `weir serve FILE --http 127.0.0.1:PORT`)
 * behind a real HAProxy (tests/support/haproxy.ts), as an operator runs them:
 * the same guardfile, keys and flags on each, a fixed port per replica so a
 * restarted one comes back where the load balancer looks for it. Used by the
 * multi-replica test and the soak benchmark.
 */
import { type Served, serveHttp } from "./cli.ts";
import { freePorts } from "./port.ts";
import { type Haproxy, startHaproxy } from "./haproxy.ts";

/** One replica: its name in HAProxy, its port and the running process. */
export interface Replica {
  name: string;
  port: number;
  served: Served;
  /** The process id (for memory readings). */
  pid(): number;
}

/** A running cluster. */
export interface Cluster {
  proxy: Haproxy;
  replicas: Replica[];
  /**
   * SIGTERM replica `i` (it turns unready, serves out its grace, drains and
   * exits), start it again on its port (with `env` added to the environment,
   * e.g. rotated keys), and wait until HAProxy has it up.
   * @returns the exit code of the stopped process
   */
  restart(i: number, env?: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  file: string;
  count: number;
  env: Record<string, string>;
  /** Flags after `--http ADDR` (the same for every replica). */
  extra: string[];
}

/** Start `count` replicas and HAProxy in front of them (every replica up). */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const replicas: Replica[] = [];
  let proxy: Haproxy | undefined;
  // The frontend's port is known only once HAProxy runs, so the replicas also
  // answer any loopback Host (the proxy forwards the client's Host).
  const start = async (
    name: string,
    port: number,
    env: Record<string, string> = {},
  ): Promise<Replica> => {
    const served = await serveHttp(options.file, {
      address: `127.0.0.1:${port}`,
      env: { ...options.env, ...env },
      extra: [...options.extra, ...(proxy ? ["--allow-host", `127.0.0.1:${proxy.port}`] : [])],
    });
    return { name, port, served, pid: () => served.pid };
  };
  const stopAll = async () => {
    for (const r of replicas) await r.served.stop();
    await proxy?.close();
  };
  try {
    // HAProxy needs the replica ports first; the replicas need HAProxy's port
    // (--allow-host): choose the replica ports, start HAProxy with them down,
    // then the replicas.
    const [front, ...ports] = freePorts(options.count + 1);
    proxy = await startHaproxy(ports.map((port, i) => ({ name: `w${i + 1}`, port })), {
      waitUp: false,
      port: front,
    });
    for (let i = 0; i < options.count; i++) replicas.push(await start(`w${i + 1}`, ports[i]));
    for (const r of replicas) {
      if (!await proxy.waitFor(r.name, "UP")) throw new Error(`${r.name} never came up`);
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  const lb = proxy!;
  return {
    proxy: lb,
    replicas,
    restart: async (i, env) => {
      const r = replicas[i];
      const code = await r.served.stop();
      // The port is free again once the process is gone; a replacement binds it.
      let next: Replica | undefined;
      for (let attempt = 0; attempt < 20 && !next; attempt++) {
        try {
          next = await start(r.name, r.port, env);
        } catch (error) {
          if (attempt === 19) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      replicas[i] = next!;
      if (!await lb.waitFor(r.name, "UP")) throw new Error(`${r.name} did not come back up`);
      return code;
    },
    close: stopAll,
  };
}
