#!/usr/bin/env -S deno run --allow-net --allow-env --allow-read
/**
 * The `weir` command line: lint a guardfile, serve it over stdio or HTTP,
 * describe its surface, or run the demo.
 *
 * Exit codes: 0 success; 1 a guardfile has errors, cannot be read, or serving
 * failed; 2 the command line itself is wrong (unknown command or flag, missing
 * argument).
 *
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { formatDiagnostic } from "./src/guardfile/diagnostics.ts";
import { errorsOf, type LoadedFile, loadGuardfileFile, runServe } from "./src/modes/serve.ts";
import { lintWarnings, servedTools } from "./src/modes/lint.ts";
import { describeGuardfile, describeText } from "./src/modes/describe.ts";
import { parseListenAddress } from "./src/modes/listen.ts";
import { createLogger, resolveLogLevel } from "./src/ops/log.ts";

const VERSION = "0.1.0";

const USAGE = `weir ${VERSION}: serve exactly what a guardfile grants, as a guarded MCP server

Usage:
  weir lint [--methods] [--format text|json] FILE...
  weir serve FILE (--stdio | --http [HOST:]PORT) [options]
  weir describe [--format text|json] FILE
  weir demo
  weir help [COMMAND]
  weir --version

Commands:
  lint      Check guardfiles with the same loader as serve (no network, no secrets).
            Prints the served tool names, one per line; errors go to stderr with
            file:line:column, and the exit code is 1.
  serve     Serve a guardfile as an MCP server over stdio or stateless Streamable HTTP
            (MCP at POST /mcp, the tool API at POST /api/<tool>, GET /healthz).
  describe  Print the served surface as a person reads it: each tool's method, path,
            inputs with types and bounds, restrictions, and withheld tools with reasons.
  demo      Serve guardfiles/demo.mcp.kdl against a small local upstream and run a
            scripted session with the official MCP client.

Exit codes: 0 success, 1 guardfile errors or a failure while serving, 2 usage errors.
Run "weir help serve" for serve's options.`;

const HELP: Record<string, string> = {
  lint: `Usage: weir lint [--methods] [--format text|json] FILE...

Loads each guardfile exactly as serve would, without listening or reading secrets.

  --methods        Print "name<TAB>METHOD" (WITHHELD for withheld stubs, - for the info tool).
  --format json    One JSON document on stdout: {"ok": bool, "files": [...]}, each file with
                   its tools and diagnostics (line, column, node path, message).

With several files, each text line starts with the file path and a TAB.
Warnings (e.g. a verb that fell through to POST) go to stderr and never change stdout
or the exit code. Exit 1 when any file has an error or cannot be read.`,
  serve: `Usage: weir serve FILE (--stdio | --http [HOST:]PORT) [options]

  --stdio                    Newline-delimited JSON-RPC on stdin/stdout (logs on stderr).
  --http [HOST:]PORT         Listen for HTTP. HOST defaults to 127.0.0.1; PORT 0 picks one.
                             Routes: POST /mcp, POST /api/<tool>, GET /healthz.
  --allow-origin ORIGIN      A browser origin allowed to call (repeatable; default none).
  --inbound-token-env VAR    Require "Authorization: Bearer <value of VAR>" on HTTP requests.
                             Without it weir does no inbound authentication: keep it on
                             loopback or behind something that does.
  --upstream-timeout MS      Abandon an upstream call after MS milliseconds (default 30000;
                             0 disables).
  --max-response-bytes N     Refuse upstream answers larger than N bytes (default 8388608).
  --log-level LEVEL          debug, info (default), warn or error; else WEIR_LOG_LEVEL.
                             One JSON object per line on stderr: an audit line per call
                             (tool, outcome, status, duration) and per refusal (its rule).

Secrets named by the guardfile (value env "X", value file "...") are read at every call,
never at start-up. They are redacted from every result and error (as sent, percent-encoded
or JSON-escaped) and never logged; a credential shorter than 8 characters is refused.`,
  describe: `Usage: weir describe [--format text|json] FILE

Prints each served tool: method, path template, inputs (types, bounds, required),
restrictions on path parameters, and withheld tools with their reasons.`,
  demo: `Usage: weir demo

Starts a small ticket API on 127.0.0.1, serves guardfiles/demo.mcp.kdl in front of it,
and drives it with the official MCP client: list tools, read, write, call the withheld
tool, and break a restrict rule. Prints each exchange. Exit 0 when every step behaved.`,
};

class UsageError extends Error {}

function parse<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function printDiagnostics(loaded: LoadedFile): void {
  if (loaded.readError) console.error(`weir: ${loaded.readError}`);
  for (const d of loaded.diagnostics) console.error(`weir: ${formatDiagnostic(loaded.file, d)}`);
}

async function lint(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    methods: { type: "boolean" },
    format: { type: "string", default: "text" },
  });
  if (positionals.length === 0) throw new UsageError("lint needs at least one FILE");
  if (values.format !== "text" && values.format !== "json") {
    throw new UsageError(`--format must be text or json, not ${values.format}`);
  }
  const results = [];
  let failed = false;
  for (const file of positionals) {
    const loaded = await loadGuardfileFile(file);
    const warnings = loaded.guardfile ? lintWarnings(loaded.guardfile) : [];
    loaded.diagnostics.push(...warnings);
    if (!loaded.guardfile) failed = true;
    results.push(loaded);
  }
  if (values.format === "json") {
    const doc = {
      ok: !failed,
      files: results.map((r) => ({
        file: r.file,
        ok: Boolean(r.guardfile),
        server: r.guardfile?.name,
        tools: r.guardfile ? servedTools(r.guardfile) : [],
        diagnostics: [
          ...(r.readError ? [{ severity: "error", message: r.readError, path: "" }] : []),
          ...r.diagnostics.map((d) => ({
            severity: d.severity,
            message: d.message,
            path: d.path,
            line: d.position?.line,
            column: d.position?.column,
          })),
        ],
      })),
    };
    console.log(JSON.stringify(doc, null, 2));
  } else {
    const lines: string[] = [];
    for (const r of results) {
      printDiagnostics(r);
      if (!r.guardfile) continue;
      for (const t of servedTools(r.guardfile)) {
        const line = values.methods ? `${t.name}\t${t.method}` : t.name;
        lines.push(positionals.length > 1 ? `${r.file}\t${line}` : line);
      }
    }
    if (!failed && lines.length > 0) console.log(lines.join("\n"));
  }
  return failed ? 1 : 0;
}

function parseHttpAddress(text: string): { hostname: string; port: number } {
  const parsed = parseListenAddress(text);
  if (typeof parsed === "string") throw new UsageError(parsed);
  return parsed;
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} takes a whole number, got ${value}`);
  return Number(value);
}

async function serve(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    stdio: { type: "boolean" },
    http: { type: "string" },
    "allow-origin": { type: "string", multiple: true },
    "inbound-token-env": { type: "string" },
    "upstream-timeout": { type: "string" },
    "max-response-bytes": { type: "string" },
    "log-level": { type: "string" },
  });
  if (positionals.length !== 1) throw new UsageError("serve takes exactly one FILE");
  let log;
  try {
    const level = resolveLogLevel(values["log-level"] as string, Deno.env.get("WEIR_LOG_LEVEL"));
    log = createLogger({ level });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (Boolean(values.stdio) === (values.http !== undefined)) {
    throw new UsageError("serve needs exactly one of --stdio or --http [HOST:]PORT");
  }
  const limits = {
    timeoutMs: positiveInt("--upstream-timeout", values["upstream-timeout"] as string, 30_000),
    maxResponseBytes: positiveInt(
      "--max-response-bytes",
      values["max-response-bytes"] as string,
      8 * 1024 * 1024,
    ),
  };
  let inboundToken: string | undefined;
  const tokenVar = values["inbound-token-env"] as string | undefined;
  if (tokenVar !== undefined) {
    inboundToken = Deno.env.get(tokenVar);
    if (!inboundToken) {
      console.error(`weir: --inbound-token-env ${tokenVar}: the variable is not set or empty`);
      return 1;
    }
  }
  const transport = values.stdio
    ? { kind: "stdio" as const }
    : { kind: "http" as const, ...parseHttpAddress(values.http as string) };
  const loaded = await loadGuardfileFile(positionals[0]);
  printDiagnostics(loaded);
  if (!loaded.guardfile || errorsOf(loaded.diagnostics).length > 0) return 1;
  const controller = new AbortController();
  const stop = () => controller.abort();
  for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, stop);
  try {
    await runServe(loaded.guardfile, {
      transport,
      allowedOrigins: values["allow-origin"] as string[] | undefined,
      inboundToken,
      limits,
      signal: controller.signal,
      log,
    });
  } catch (error) {
    console.error(`weir: serve: ${(error as Error).message}`);
    return 1;
  } finally {
    for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.removeSignalListener(signal, stop);
    await log.flush();
  }
  return 0;
}

async function describe(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { format: { type: "string", default: "text" } });
  if (positionals.length !== 1) throw new UsageError("describe takes exactly one FILE");
  if (values.format !== "text" && values.format !== "json") {
    throw new UsageError(`--format must be text or json, not ${values.format}`);
  }
  const loaded = await loadGuardfileFile(positionals[0]);
  printDiagnostics(loaded);
  if (!loaded.guardfile) return 1;
  const surface = describeGuardfile(loaded.guardfile);
  console.log(values.format === "json" ? JSON.stringify(surface, null, 2) : describeText(surface));
  return 0;
}

async function demo(args: string[]): Promise<number> {
  parse(args, {});
  const { runDemo } = await import("./src/modes/demo.ts");
  return await runDemo();
}

/**
 * Run the CLI.
 * @param args the arguments after the program name
 * @returns the exit code
 */
export async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case "lint":
        return await lint(rest);
      case "serve":
        return await serve(rest);
      case "describe":
        return await describe(rest);
      case "demo":
        return await demo(rest);
      case "help":
      case "--help":
      case "-h":
        console.log(rest[0] && HELP[rest[0]] ? HELP[rest[0]] : USAGE);
        return 0;
      case "--version":
      case "-V":
        console.log(`weir ${VERSION}`);
        return 0;
      case undefined:
        console.error(USAGE);
        return 2;
      default:
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(HELP[command] ?? USAGE);
          return 0;
        }
        throw new UsageError(
          `unknown command "${command}"; commands: lint, serve, describe, demo, help`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`weir: ${error.message}\nRun "weir help" for usage.`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.main) {
  const args = Deno.args;
  const command = args[0];
  if (command && HELP[command] && (args.includes("--help") || args.includes("-h"))) {
    console.log(HELP[command]);
    Deno.exit(0);
  }
  Deno.exit(await main(args));
}
