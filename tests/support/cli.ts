/**
 * Driving the real CLI: `deno run cli.ts ...` as a subprocess, exactly as a
 * user runs it from a checkout; or the shipped forms, so that a test file
 * driving weir through these helpers tests them too (tests/support/shipped.ts):
 * when `WEIR_TEST_BUNDLE` names a bundle directory (`deno task bundle`), that
 * bundle as the binary runs it (`deno run --no-config ... DIR/cli.js`,
 * scripts/build.ts `bundleRunArgs`); when `WEIR_TEST_BINARY` names a compiled
 * binary, that binary (with the permissions it was compiled with).
 */
import { bundleRunArgs } from "../../scripts/build.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
export const CLI = `${ROOT}cli.ts`;
export const CONFIG = `${ROOT}deno.json`;
/** The lock every task passes (`--lock=deno.lock --frozen`): deno.json itself says `"lock": false`. */
export const LOCK = `${ROOT}deno.lock`;

/** The bundle directory the helpers run instead of cli.ts, when the environment names one. */
export const BUNDLE: string | undefined = Deno.env.get("WEIR_TEST_BUNDLE") || undefined;
/**
 * The first source file changed after `bundle` was built (the entry, deno.json,
 * deno.lock, the demo guardfile, a module under src/), or undefined: a bundle
 * does not follow the sources, and a stale one would pass what they fail.
 */
export async function newerSource(bundle: string): Promise<string | undefined> {
  const built = (await Deno.stat(`${bundle}/cli.js`)).mtime?.getTime() ?? 0;
  const changed = async (path: string) =>
    ((await Deno.stat(`${ROOT}${path}`)).mtime?.getTime() ?? 0) > built;
  for (const path of ["cli.ts", "deno.json", "deno.lock", "guardfiles/demo.mcp.kdl"]) {
    if (await changed(path)) return path;
  }
  const walk = async (dir: string): Promise<string | undefined> => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      const found = entry.isDirectory
        ? await walk(path)
        : entry.name.endsWith(".ts") && await changed(path)
        ? path
        : undefined;
      if (found) return found;
    }
    return undefined;
  };
  return await walk("src");
}

if (BUNDLE) {
  const newer = await newerSource(BUNDLE);
  if (newer) {
    throw new Error(
      `WEIR_TEST_BUNDLE=${BUNDLE} was built before ${newer} changed: build it again ` +
        `(deno task bundle --out-dir ${BUNDLE})`,
    );
  }
}

/** The compiled binary the helpers run instead of cli.ts, when the environment names one. */
export const BINARY: string | undefined = Deno.env.get("WEIR_TEST_BINARY") || undefined;

/**
 * The command line that starts weir (deno + flags + cli.ts, or the bundle's
 * cli.js) with `permissions` (serve's by default).
 */
export function weirCommand(
  permissions: readonly string[] = ["--allow-net", "--allow-env", "--allow-read"],
): { command: string; args: string[] } {
  if (BINARY) return { command: BINARY, args: [] };
  if (BUNDLE) return { command: Deno.execPath(), args: bundleRunArgs(BUNDLE, permissions) };
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--config",
      CONFIG,
      `--lock=${LOCK}`,
      "--frozen",
      ...permissions,
      CLI,
    ],
  };
}

/** Spawn `weir serve FILE --stdio` with stdin, stdout and stderr piped. */
export function spawnServeStdio(file: string, env?: Record<string, string>): Deno.ChildProcess {
  const { command, args } = weirCommand();
  return new Deno.Command(command, {
    args: [...args, "serve", file, "--stdio"],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `weir <args>` to completion. */
export async function runCli(
  args: string[],
  options: {
    env?: Record<string, string>;
    stdin?: string | Uint8Array;
    cwd?: string;
    /**
     * Stop the command (SIGTERM) after this many ms: for a command that must
     * exit by itself (a refused start), so a regression that serves instead
     * fails the test rather than hanging it. A guard, never the behaviour.
     */
    limitMs?: number;
  } = {},
): Promise<CliResult> {
  const { command, args: pre } = weirCommand();
  const child = new Deno.Command(command, {
    args: [...pre, ...args],
    env: options.env,
    ...(options.limitMs === undefined ? {} : { signal: AbortSignal.timeout(options.limitMs) }),
    cwd: options.cwd ?? ROOT,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(
      typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin,
    );
    await w.close();
  }
  return outputText(await child.output());
}

/** A finished process's exit code and its output as text. */
export function outputText(out: Deno.CommandOutput): CliResult {
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** Run `command` to completion (stdout and stderr piped unless `options` say otherwise). */
export async function runCommand(
  command: string,
  options: Deno.CommandOptions,
): Promise<CliResult> {
  return outputText(
    await new Deno.Command(command, { stdout: "piped", stderr: "piped", ...options }).output(),
  );
}

export interface Served {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, wait for exit; returns the exit code. */
  stop(): Promise<number>;
  /** Send a signal without waiting. */
  kill(signal: Deno.Signal): void;
  /** The exit code once the process ends, without sending it anything. */
  exited: Promise<number>;
  /** The process id. */
  pid: number;
}

/**
 * Start `weir serve FILE --http 127.0.0.1:0` (or another serve `command`, or
 * another `address`) and wait until it listens.
 */
export async function serveHttp(
  file: string,
  options: { env?: Record<string, string>; extra?: string[]; command?: string; address?: string } =
    {},
): Promise<Served> {
  const { command, args: pre } = weirCommand();
  const child = new Deno.Command(command, {
    args: [
      ...pre,
      options.command ?? "serve",
      file,
      "--http",
      options.address ?? "127.0.0.1:0",
      ...(options.extra ?? []),
    ],
    env: options.env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await untilListening(child, "weir serve", { timeoutMs: 60_000 });
}

/**
 * Wait until a spawned weir (stdout and stderr piped) logs its `"mcp":"<url>/mcp"`
 * line; from then on its stderr is collected in the background.
 * @throws with its stderr when it exits first or `timeoutMs` passes (it is killed)
 */
export async function untilListening(
  child: Deno.ChildProcess,
  what: string,
  options: {
    timeoutMs: number;
    /** Run `then` once stderr matches `pattern` (before weir listens). */
    onStderr?: { pattern: RegExp; then: () => Promise<unknown> };
  },
): Promise<Served> {
  let err = "";
  const decoder = new TextDecoder();
  const stdoutDone = child.stdout.pipeTo(new WritableStream());
  const reader = child.stderr.getReader();
  let url = "";
  let hook = options.onStderr;
  const deadline = Date.now() + options.timeoutMs;
  while (!url && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    err += decoder.decode(value);
    const m = /"mcp":"(http:\/\/[^"]+)\/mcp"/.exec(err);
    if (m) url = m[1];
    if (hook && hook.pattern.test(err)) {
      const then = hook.then;
      hook = undefined;
      await then();
    }
  }
  const pump = (async () => {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      err += decoder.decode(value);
    }
  })();
  if (!url) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    await pump;
    await stdoutDone.catch(() => {});
    throw new Error(`${what} did not start:\n${err}`);
  }
  return {
    url,
    pid: child.pid,
    stderr: () => err,
    kill: (signal) => child.kill(signal),
    exited: child.status.then((status) => status.code),
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const status = await child.status;
      await pump;
      await stdoutDone.catch(() => {});
      return status.code;
    },
  };
}

/**
 * Send one raw HTTP/1.1 request (so headers such as Host are exactly as
 * written) and return the status code.
 */
export async function rawStatus(url: string, request: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(1024);
    const n = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  } finally {
    conn.close();
  }
}

/** Write a guardfile to a new temporary file; returns its path. */
export async function tempGuardfile(text: string): Promise<string> {
  const file = await Deno.makeTempFile({ dir: tempDir(), suffix: ".mcp.kdl" });
  await Deno.writeTextFile(file, text);
  return file;
}

let dirOfTempGuardfiles: string | undefined;

/** One temp directory per test process, removed when the process ends (nothing left behind). */
function tempDir(): string {
  if (dirOfTempGuardfiles) return dirOfTempGuardfiles;
  const dir = Deno.makeTempDirSync({ prefix: "weir-guardfiles-" });
  dirOfTempGuardfiles = dir;
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  });
  return dir;
}

/** What `POST /api/<tool>` answered. */
export interface ApiAnswer {
  status: number;
  /** The decoded JSON body (a `CallToolResult`, or an error object). */
  body: Record<string, unknown>;
  /** The result's text content, joined. */
  text: string;
}

/**
 * Call a tool through weir's HTTP tool API, within a deadline (default 30 s):
 * a server that never answers fails the test with a TimeoutError instead of
 * hanging the suite.
 */
export async function callApi(
  url: string,
  tool: string,
  args: unknown,
  options: { timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  const res = await fetch(`${url}/api/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const body = await res.json();
  const content = (body.content ?? []) as { text?: string }[];
  return { status: res.status, body, text: content.map((c) => c.text ?? "").join("\n") };
}
