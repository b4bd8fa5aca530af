/**
 * Running `weir serve-upstream` / `weir lint-upstream` as a user does: the
 * real CLI in a subprocess (`deno run -A cli.ts ...`, as docs/cli.md says to
 * run it), and the official clients connected to it.
 */
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import {
  BINARY,
  BUNDLE,
  CLI,
  CONFIG,
  ROOT,
  runCommand,
  type Served,
  untilListening,
  weirCommand,
} from "./cli.ts";

/** `deno run -A --config deno.json cli.ts` (a shipped form under `WEIR_TEST_BUNDLE` or `WEIR_TEST_BINARY`) */
export function weirAll(): { command: string; args: string[] } {
  if (BUNDLE || BINARY) return weirCommand(["--allow-all"]);
  return { command: Deno.execPath(), args: ["run", "--quiet", "-A", "--config", CONFIG, CLI] };
}

/**
 * `weir serve FILE --http 127.0.0.1:0` with every permission, as
 * docs/wrapping-mcp-servers.md says to run a file whose MCP server is a stdio
 * child; resolves once it listens (a cold start may take up to 120 s).
 */
export async function serveAll(
  file: string,
  env: Record<string, string> = {},
  extra: string[] = [],
): Promise<Served> {
  const { command, args } = weirAll();
  const child = new Deno.Command(command, {
    args: [...args, "serve", file, "--http", "127.0.0.1:0", ...extra],
    env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await untilListening(child, "weir serve", { timeoutMs: 120_000 });
}

/** The official server-everything release the tests run, over stdio. */
export const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";

/**
 * Download server-everything (and its dependencies) into Deno's cache before
 * any test starts it, so a cold cache (a clean CI clone) costs no test its
 * start-up deadline.
 * @throws when `deno cache` fails (no npm registry)
 */
export async function cacheEverything(): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", "--config", CONFIG, EVERYTHING],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`deno cache ${EVERYTHING} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** The command line that starts server-everything over stdio. */
export function everythingCommand(): string[] {
  return [Deno.execPath(), "run", "--quiet", "-A", "--config", CONFIG, EVERYTHING, "stdio"];
}

/** `PRE serve-upstream ARGS TRANSPORT`, with TRANSPORT before any `--` in ARGS (the upstream's command line). */
function serveUpstreamArgs(pre: string[], args: string[], transport: string[]): string[] {
  const dash = args.indexOf("--");
  const flags = dash < 0 ? args : args.slice(0, dash);
  const tail = dash < 0 ? [] : args.slice(dash);
  return [...pre, "serve-upstream", ...flags, ...transport, ...tail];
}

/** A running `weir serve-upstream --http`. */
export interface Wrapper {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** weir's process id. */
  pid: number;
  stderr(): string;
  stop(): Promise<number>;
}

/**
 * Start `weir serve-upstream ARGS --http 127.0.0.1:0` and wait until it listens.
 * @throws with its stderr when it exits first
 */
export async function startWrapper(
  args: string[],
  options: {
    env?: Record<string, string>;
    /** Run `then` once stderr matches `pattern` (before weir listens). */
    onStderr?: { pattern: RegExp; then: () => Promise<unknown> };
  } = {},
): Promise<Wrapper> {
  const { command, args: pre } = weirAll();
  const child = new Deno.Command(command, {
    args: serveUpstreamArgs(pre, args, ["--http", "127.0.0.1:0"]),
    env: options.env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await untilListening(child, "weir serve-upstream", {
    timeoutMs: 60_000,
    onStderr: options.onStderr,
  });
}

/** Run `weir <args>` to completion (with every permission, as `deno run -A`). */
export async function runWeir(
  args: string[],
  env?: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { command, args: pre } = weirAll();
  return await runCommand(command, { args: [...pre, ...args], env, cwd: ROOT, stdin: "null" });
}

/** Loosely typed: the methods the v1 and v2 clients share. */
export interface AnyClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    schema?: unknown,
    options?: { signal?: AbortSignal; timeout?: number },
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The official v1 client (2025-11-25) over HTTP. */
export async function v1Http(url: string): Promise<AnyClient> {
  const client = new ClientV1({ name: "weir-test-v1", version: "1.0.0" });
  await client.connect(new HttpV1(new URL(`${url}/mcp`)));
  return client as unknown as AnyClient;
}

/** The official v2 client pinned to 2026-07-28 over HTTP. */
export async function v2Http(url: string): Promise<AnyClient> {
  const client = new ClientV2({ name: "weir-test-v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(new HttpV2(new URL(`${url}/mcp`)));
  return client as unknown as AnyClient;
}

/**
 * The official v1 client over stdio, spawning `weir serve-upstream ARGS --stdio`;
 * `notifications` collects the method of every notification weir sends it.
 */
export async function v1Stdio(
  args: string[],
  env?: Record<string, string>,
  notifications: string[] = [],
): Promise<AnyClient> {
  const { command, args: pre } = weirAll();
  const client = new ClientV1({ name: "weir-test-v1", version: "1.0.0" });
  client.fallbackNotificationHandler = (n: { method: string }) => {
    notifications.push(n.method);
    return Promise.resolve();
  };
  await client.connect(
    new StdioClientTransport({
      command,
      args: serveUpstreamArgs(pre, args, ["--stdio"]),
      env: { ...Deno.env.toObject(), ...env },
      cwd: ROOT,
      stderr: "ignore",
    }),
  );
  return client as unknown as AnyClient;
}

/** The text of a `CallToolResult`'s first content block. */
export function textOf(result: Record<string, unknown>): string {
  return ((result.content as { text?: string }[])[0]?.text) ?? "";
}

/** The official v2 client pinned to 2026-07-28 over stdio, spawning `weir serve-upstream ARGS --stdio`. */
export async function v2Stdio(args: string[]): Promise<AnyClient> {
  const { command, args: pre } = weirAll();
  const client = new ClientV2({ name: "weir-test-v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(
    new StdioV2({
      command,
      args: serveUpstreamArgs(pre, args, ["--stdio"]),
      env: Deno.env.toObject(),
      cwd: ROOT,
      stderr: "ignore",
    }),
  );
  return client as unknown as AnyClient;
}
