/**
 * Diagnostics of guardfile loading: each names the file, the position
 * (line:column) when the parser gave one, the node path, and what to change.
 *
 * @module
 */
import type { KdlNode, SourcePosition } from "./kdl.ts";

/** One finding. Errors stop lint and serve; warnings do neither. */
export interface Diagnostic {
  /** Errors stop lint and serve; warnings are reported only. */
  severity: "error" | "warning";
  /** What is wrong and what to do about it. */
  message: string;
  /** The node path, e.g. `wrap > can get issue > query`. */
  path: string;
  /** Where in the file (1-based line and column), when known. */
  position?: SourcePosition;
}

/** A guardfile that cannot be served, with every error found. */
export class GuardfileError extends Error {
  /** The guardfile's path. */
  readonly file: string;
  /** Every diagnostic of the load (errors and warnings). */
  readonly diagnostics: Diagnostic[];

  /**
   * Make the error; its message lists every error, one `file:line:col` line each.
   * @param file the guardfile's path
   * @param diagnostics what the load found
   */
  constructor(file: string, diagnostics: Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === "error");
    super(
      `invalid guardfile "${file}": ${errors.length} error${errors.length === 1 ? "" : "s"}\n` +
        errors.map((d) => "  " + formatDiagnostic(file, d)).join("\n"),
    );
    this.name = "GuardfileError";
    this.file = file;
    this.diagnostics = diagnostics;
  }
}

/** `file:line:col: path: message` (position and path when known), on one printable line. */
export function formatDiagnostic(file: string, d: Diagnostic): string {
  const where = d.position ? `${file}:${d.position.line}:${d.position.column}` : file;
  const kind = d.severity === "warning" ? "warning: " : "";
  return printable(
    d.path ? `${where}: ${kind}${d.path}: ${d.message}` : `${where}: ${kind}${d.message}`,
  );
}

/**
 * Escape control characters (line breaks, ESC, ...) as `\uXXXX`, so text taken
 * from a guardfile cannot forge output lines or drive a terminal.
 */
export function printable(text: string): string {
  return text.replace(
    /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** `scheme://user:password@` (RFC 3986 section 3.2.1 userinfo) anywhere in a text. */
const USERINFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@"]*@/g;

/**
 * A text with the userinfo of every URL in it replaced by `[redacted]`: a
 * guardfile that wrongly puts a password in a URL (which lint refuses) must
 * not see it repeated on stderr or in `lint --format json`.
 */
export function withoutUserinfo(text: string): string {
  return text.includes("@") ? text.replace(USERINFO, "$1[redacted]@") : text;
}

/** Collects diagnostics while a file is read. */
export class Diagnostics {
  readonly items: Diagnostic[] = [];

  error(at: Located, message: string): void {
    this.items.push({
      severity: "error",
      message: withoutUserinfo(message),
      path: withoutUserinfo(at.path),
      position: at.position,
    });
  }

  warn(at: Located, message: string): void {
    this.items.push({
      severity: "warning",
      message: withoutUserinfo(message),
      path: withoutUserinfo(at.path),
      position: at.position,
    });
  }

  get failed(): boolean {
    return this.items.some((d) => d.severity === "error");
  }
}

/** Something a diagnostic can point at. */
export interface Located {
  path: string;
  position?: SourcePosition;
}

/** A node with its path, for messages. */
export function located(node: KdlNode, parent?: Located): Located {
  const first = node.values[0];
  const label = node.name === "wrap"
    ? "wrap"
    : node.name === "can" && node.values.length >= 2
    ? `can ${node.values[0]} ${node.values[1]}`
    : node.name === "base-url" && typeof first === "string" && first.includes("@")
    // A scheme-less base-url reads as https://: its userinfo is a password too.
    ? `base-url ${
      JSON.stringify(
        first.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?)[^/?#@]*@/, "$1[redacted]@").slice(
          0,
          80,
        ),
      )
    }`
    : typeof first === "string"
    ? `${node.name} ${
      /^[A-Za-z0-9_.:-]+$/.test(first) ? first : JSON.stringify(first.slice(0, 80)).replace(
        /[^\x20-\x7e]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      )
    }`
    : node.name;
  return {
    path: parent && parent.path ? `${parent.path} > ${label}` : label,
    position: node.position,
  };
}
