/**
 * `--upstream-header 'Name=text {env:VAR} text'`: headers weir presents to an
 * HTTP upstream, with secrets read from the environment or a file at every
 * request (never at start-up only, never echoed, never logged).
 *
 * A template is literal text with at least one `{provider:address}` span;
 * providers are `env` (a variable), `file` (a file's text, one trailing
 * newline dropped) and `literal` (the address itself). Header names follow
 * RFC 9110 section 5.1 (a token: no whitespace, no colon) and are refused when
 * they are ones the MCP transport or HTTP itself owns.
 *
 * @module
 */
import { FileRefused, MAX_VALUE_FILE_BYTES, readBoundedTextSync } from "../ops/bounded_file.ts";

/** A header template the command line got wrong, or a value that cannot be resolved. */
export class HeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HeaderError";
  }
}

/** One source of a header's value, read per request. */
export interface TemplateSpan {
  provider: "env" | "file" | "literal";
  address: string;
}

/**
 * One part of a template: literal text, a span resolved per request, or a
 * chain of spans whose first non-empty one is used (a guardfile's `value { env
 * "A"; file "/run/secrets/a" }`).
 */
export type TemplatePart = string | TemplateSpan | { chain: TemplateSpan[] };

/** One parsed `--upstream-header` (or a guardfile's `header` of an MCP server). */
export interface HeaderTemplate {
  /** Canonical name (`x-api-key` -> `X-Api-Key`). */
  name: string;
  parts: TemplatePart[];
  /** How messages name it (default `--upstream-header <name>`). */
  origin?: string;
}

/** Reads secrets at request time (the process environment and files, by default). */
export interface SecretSource {
  env(name: string): string | undefined;
  readFile(path: string): string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const SPAN = /\{(env|file|literal):([^{}]*)\}/g;
/**
 * Headers the transport, HTTP or the MCP protocol set themselves (or, for
 * `expect` and `proxy-authorization`, that would change how or to whom a
 * request is sent), refused in `--upstream-header`. The guardfile form keeps
 * the same list (src/guardfile/mcp_wrap_server.ts: the guardfile room imports
 * nothing); tests/mcp_upstream/headers_test.ts holds the two equal.
 */
export const RESERVED_UPSTREAM_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "expect",
  "host",
  "keep-alive",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "mcp-protocol-version",
  "mcp-session-id",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * Parse `--upstream-header` values.
 * @throws {HeaderError} naming the header: no `=`, a name that is not a token
 *   or is reserved, a newline, no `{provider:address}` span, an unknown
 *   provider, an empty address, or a name given twice (case-insensitive)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseHeaderTemplates } from "./headers.ts";
 * const [h] = parseHeaderTemplates(["authorization=Bearer {env:API_TOKEN}"]);
 * assert.equal(h.name, "Authorization");
 * assert.equal(h.parts.length, 2);
 * ```
 */
export function parseHeaderTemplates(specs: readonly string[]): HeaderTemplate[] {
  const seen = new Set<string>();
  return specs.map((spec) => {
    const eq = spec.indexOf("=");
    if (eq <= 0) {
      throw new HeaderError(
        `--upstream-header needs Name=template, e.g. 'Authorization=Bearer {env:API_TOKEN}'`,
      );
    }
    const rawName = spec.slice(0, eq).trim();
    const template = spec.slice(eq + 1);
    if (!TOKEN.test(rawName)) {
      throw new HeaderError(
        `--upstream-header ${JSON.stringify(rawName)}: a header name is a token ` +
          `(letters, digits, !#$%&'*+.^_\`|~-; no whitespace or colon)`,
      );
    }
    const lower = rawName.toLowerCase();
    if (RESERVED_UPSTREAM_HEADERS.has(lower)) {
      throw new HeaderError(
        `--upstream-header ${rawName}: weir or the MCP transport sets this header itself`,
      );
    }
    if (seen.has(lower)) throw new HeaderError(`--upstream-header ${rawName} is given twice`);
    seen.add(lower);
    const name = lower.replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase());
    if (/[\r\n\0]/.test(template)) {
      throw new HeaderError(`--upstream-header ${name}: the template holds a newline or NUL`);
    }
    const parts: TemplatePart[] = [];
    let last = 0;
    for (const m of template.matchAll(SPAN)) {
      if (m.index! > last) parts.push(template.slice(last, m.index));
      if (m[2] === "") {
        throw new HeaderError(`--upstream-header ${name}: {${m[1]}:} names nothing`);
      }
      parts.push({ provider: m[1] as "env" | "file" | "literal", address: m[2] });
      last = m.index! + m[0].length;
    }
    if (last < template.length) parts.push(template.slice(last));
    const stray = /\{[a-z]+:[^{}]*\}/.exec(template.replace(SPAN, ""));
    if (stray) {
      throw new HeaderError(
        `--upstream-header ${name}: unknown provider in ${stray[0].split(":")[0]}:...}; ` +
          `use {env:VAR}, {file:PATH} or {literal:TEXT}`,
      );
    }
    if (!parts.some((p) => typeof p !== "string")) {
      throw new HeaderError(
        `--upstream-header ${name}: the template has no {env:VAR}, {file:PATH} or ` +
          `{literal:TEXT} span; a secret belongs in the environment or a file, not the command line`,
      );
    }
    return { name, parts };
  });
}

/**
 * The default source: `Deno.env`, and files read bounded (a regular file of
 * at most 64 KiB; src/ops/bounded_file.ts refuses /dev/zero, a FIFO, a directory).
 */
export const processSecrets: SecretSource = {
  env: (name) => Deno.env.get(name),
  readFile: (path) =>
    readBoundedTextSync(path, { what: "header file", maxBytes: MAX_VALUE_FILE_BYTES }),
};

/** Resolved headers, and the secret values in them (for redaction). */
export interface ResolvedHeaders {
  headers: Record<string, string>;
  /** Values read from env or file (never literals), to redact from answers. */
  secrets: string[];
}

/**
 * Resolve every template now (called per upstream request).
 * @throws {HeaderError} naming the header and the variable or file, never the value
 */
export function resolveHeaders(
  templates: readonly HeaderTemplate[],
  source: SecretSource = processSecrets,
): ResolvedHeaders {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  for (const { name: header, parts, origin } of templates) {
    const name = origin ?? `--upstream-header ${header}`;
    let value = "";
    for (const whole of parts) {
      if (typeof whole === "string") {
        value += whole;
        continue;
      }
      let part: TemplateSpan;
      if ("chain" in whole) {
        // The first source that resolves non-empty; the last one's failure is reported.
        const found = whole.chain.find((span, i) =>
          i === whole.chain.length - 1 || readsNonEmpty(span, source)
        );
        part = found!;
      } else part = whole;
      let text: string | undefined;
      if (part.provider === "literal") text = part.address;
      else if (part.provider === "env") {
        text = source.env(part.address);
        if (!text) {
          throw new HeaderError(
            `${name}: environment variable ${part.address} is not set or empty`,
          );
        }
      } else {
        try {
          text = source.readFile(part.address).replace(/\r?\n$/, "");
        } catch (error) {
          const why = error instanceof FileRefused
            ? error.reason
            : error instanceof Deno.errors.NotFound
            ? "no such file"
            : error instanceof Deno.errors.PermissionDenied
            ? "permission denied"
            : "cannot be read";
          throw new HeaderError(`${name}: file ${part.address}: ${why}`);
        }
        if (!text) {
          throw new HeaderError(`${name}: file ${part.address} is empty`);
        }
      }
      if (/[\r\n\0]/.test(text)) {
        throw new HeaderError(
          `${name}: the value from ${part.provider} ${part.address} holds a newline or NUL`,
        );
      }
      if (part.provider !== "literal") secrets.push(text);
      value += text;
    }
    headers[header] = value;
  }
  return { headers, secrets };
}

/** Whether a span would resolve to a non-empty value now (for a chain). */
function readsNonEmpty(span: TemplateSpan, source: SecretSource): boolean {
  if (span.provider === "literal") return span.address !== "";
  if (span.provider === "env") return Boolean(source.env(span.address));
  try {
    return source.readFile(span.address).replace(/\r?\n$/, "") !== "";
  } catch {
    return false;
  }
}
