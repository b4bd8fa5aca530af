/**
 * A real HAProxy (Debian's package; `.ci/run` installs it) in front of weir
 * replicas, on 127.0.0.1: HTTP mode, round robin, no retries (as a Kubernetes
 * Service: a request sent to a replica that fails is not tried elsewhere),
 * and a health check on each replica's `GET /readyz` every 100 ms (two
 * failures take a server out, one success brings it back). A request carrying
 * `x-weir-replica: NAME` goes to that replica (while it is up), so a test can
 * choose where a client's next request lands. The admin socket reports each
 * server's state and request count.
 */
import { freePort, waitForPort } from "./port.ts";

/** The haproxy binary, or why it cannot run here. */
export function haproxyBinary(): { path: string } | { missing: string } {
  for (const path of ["haproxy", "/usr/sbin/haproxy"]) {
    try {
      if (new Deno.Command(path, { args: ["-v"], stdout: "null" }).outputSync().success) {
        return { path };
      }
    } catch { /* next */ }
  }
  return { missing: "haproxy is not installed (apt-get install haproxy; .ci/run does it)" };
}

/**
 * The backend's health check, as docs/operating.md ("Running several
 * replicas") gives it; tests/docs/docs_test.ts holds the page's block to this
 * list. `/readyz` over HTTP/1.1 with the Host weir answers on loopback; two
 * failed checks take a server out, one 200 brings it back; `timeout check`
 * lets a check's answer take 2 s (a loaded machine is slow, not down): without
 * it HAProxy gives the whole check `inter` (100 ms) and takes a busy replica out.
 */
export const HEALTH_CHECK: readonly string[] = [
  "option httpchk",
  "http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1",
  "http-check expect status 200",
  "timeout check 2s",
  "default-server inter 100ms fastinter 100ms downinter 100ms fall 2 rise 1",
];

/** One backend server. */
export interface Backend {
  name: string;
  port: number;
}

/** A running HAProxy. */
export interface Haproxy {
  /** `http://127.0.0.1:<port>`: the frontend clients call. */
  url: string;
  /** The frontend's port. */
  port: number;
  /** Server name -> `UP`, `DOWN`, `MAINT`... (HAProxy's status column). */
  states(): Promise<Record<string, string>>;
  /** Server name -> requests it was sent (`stot`). */
  sessions(): Promise<Record<string, number>>;
  /** Wait until `name` has `status` (bounded); false when it never does. */
  waitFor(name: string, status: "UP" | "DOWN", tries?: number): Promise<boolean>;
  /** Everything HAProxy wrote. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Start HAProxy for `backends` and wait until its frontend accepts connections
 * (and, unless `waitUp` is false, every backend is UP).
 * @throws when the binary is missing, the configuration is refused, or it never listens
 */
export async function startHaproxy(
  backends: Backend[],
  options: { waitUp?: boolean; port?: number } = {},
): Promise<Haproxy> {
  const binary = haproxyBinary();
  if ("missing" in binary) throw new Error(binary.missing);
  const dir = await Deno.makeTempDir({ prefix: "weir-haproxy-" });
  const socket = `${dir}/admin.sock`;
  const port = options.port ?? freePort();
  const config = [
    "global",
    `  stats socket ${socket} mode 600 level admin`,
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  timeout http-keep-alive 10s",
    // No retries and no redispatch: a request that fails at a server is a failed call.
    "  retries 0",
    "frontend clients",
    `  bind 127.0.0.1:${port}`,
    "  default_backend weir",
    "backend weir",
    "  balance roundrobin",
    ...HEALTH_CHECK.map((line) => `  ${line}`),
    ...backends.map((b) =>
      `  use-server ${b.name} if { req.hdr(x-weir-replica) -m str ${b.name} }`
    ),
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check`),
    "",
  ].join("\n");
  await Deno.writeTextFile(`${dir}/haproxy.cfg`, config);
  const child = new Deno.Command(binary.path, {
    args: ["-db", "-f", `${dir}/haproxy.cfg`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const decoder = new TextDecoder();
  const pumps = [child.stdout, child.stderr].map(async (stream) => {
    for await (const chunk of stream) out += decoder.decode(chunk);
  });
  const close = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    await Promise.all(pumps);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  if (!await waitForPort(port, child, 200)) {
    await close();
    throw new Error(`haproxy did not start:\n${out}\n${config}`);
  }

  const ask = async (command: string): Promise<string> => {
    const conn = await Deno.connect({ transport: "unix", path: socket });
    try {
      await conn.write(new TextEncoder().encode(`${command}\n`));
      let text = "";
      const buffer = new Uint8Array(65536);
      for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
        text += decoder.decode(buffer.subarray(0, n));
      }
      return text;
    } finally {
      try {
        conn.close();
      } catch { /* closed by haproxy */ }
    }
  };
  /** `show stat` as rows of the `weir` backend's servers. */
  const rows = async (): Promise<Record<string, string>[]> => {
    const [head, ...lines] = (await ask("show stat")).trim().split("\n");
    const columns = head.replace(/^# /, "").split(",");
    return lines.map((line) => {
      const cells = line.split(",");
      return Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? ""]));
    }).filter((r) => r.pxname === "weir" && r.svname !== "BACKEND");
  };
  const states = async () => Object.fromEntries((await rows()).map((r) => [r.svname, r.status]));
  const proxy: Haproxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    states,
    sessions: async () => Object.fromEntries((await rows()).map((r) => [r.svname, Number(r.stot)])),
    waitFor: async (name, status, tries = 300) => {
      for (let i = 0; i < tries; i++) {
        if ((await states())[name]?.startsWith(status)) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    },
    output: () => out,
    close,
  };
  for (const b of options.waitUp === false ? [] : backends) {
    if (!await proxy.waitFor(b.name, "UP")) {
      const seen = await states();
      await close();
      throw new Error(`haproxy never saw ${b.name} up (${JSON.stringify(seen)}):\n${out}`);
    }
  }
  return proxy;
}
