/**
 * A real Prometheus (Debian's `prometheus` package) for tests: started on
 * 127.0.0.1 on a free port with temporary storage, scraping itself every
 * second, with the TSDB admin API enabled (`--web.enable-admin-api`) so a test
 * can prove nothing reached it. Stopped (and its storage removed) by `stop`.
 */

/** The `prometheus` binary on PATH, or why there is none. */
export async function findPrometheus(): Promise<{ bin: string } | { missing: string }> {
  try {
    const out = await new Deno.Command("prometheus", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
    if (out.success) return { bin: "prometheus" };
    return { missing: "`prometheus --version` failed" };
  } catch {
    return {
      missing: "`prometheus` is not installed (Debian package prometheus; .ci/run installs it)",
    };
  }
}

/** A running Prometheus. */
export interface Prometheus {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Sum of `prometheus_http_requests_total` over handlers whose name starts with `prefix`. */
  requestCount(prefix: string): Promise<number>;
  stop(): Promise<void>;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Start Prometheus and wait until it is ready and has scraped itself at least
 * twice (so `rate(...)` over its own counters has a value).
 * @throws Error with Prometheus's own log when it does not come up in 60 s
 */
export async function startPrometheus(bin: string): Promise<Prometheus> {
  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await Deno.makeTempDir({ prefix: "weir-prometheus-" });
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    await Deno.writeTextFile(
      `${dir}/prometheus.yml`,
      [
        "global:",
        "  scrape_interval: 1s",
        "  evaluation_interval: 1s",
        "scrape_configs:",
        "  - job_name: prometheus",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${port}"]`,
        "",
      ].join("\n"),
    );
    const child = new Deno.Command(bin, {
      args: [
        `--config.file=${dir}/prometheus.yml`,
        `--storage.tsdb.path=${dir}/data`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--web.enable-admin-api",
        "--log.level=warn",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let log = "";
    const logDone = child.stderr.pipeTo(
      new WritableStream({ write: (c) => void (log += new TextDecoder().decode(c)) }),
    ).catch(() => {});
    let exited = false;
    const status = child.status.then((s) => {
      exited = true;
      return s;
    });
    const stop = async () => {
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
      }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 10_000);
      await status;
      clearTimeout(timer);
      await logDone;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    };
    const query = async (q: string) => {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = await res.json();
      return (body?.data?.result ?? []) as unknown[];
    };
    const deadline = Date.now() + 60_000;
    let ready = false;
    while (!exited && Date.now() < deadline) {
      try {
        const r = await fetch(`${url}/-/ready`);
        await r.body?.cancel();
        if (r.ok && (await query("rate(prometheus_http_requests_total[5m])")).length > 0) {
          ready = true;
          break;
        }
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 250));
    }
    if (!ready) {
      await stop();
      lastError = log;
      continue;
    }
    return {
      url,
      stop,
      requestCount: async (prefix: string) => {
        const text = await (await fetch(`${url}/metrics`)).text();
        let sum = 0;
        for (const line of text.split("\n")) {
          const m = /^prometheus_http_requests_total\{([^}]*)\} (\S+)$/.exec(line);
          const handler = m && /handler="([^"]*)"/.exec(m[1])?.[1];
          if (m && handler?.startsWith(prefix)) sum += Number(m[2]);
        }
        return sum;
      },
    };
  }
  throw new Error(`prometheus did not become ready in three tries:\n${lastError}`);
}
