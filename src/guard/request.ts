/**
 * Arguments -> the one upstream request a grant allows, or a refusal before
 * anything is sent.
 *
 * Path parameters are percent-encoded as exactly one segment (RFC 3986
 * `pchar`): `?`, `#` and `%` itself are encoded, so no value can add a query
 * or a fragment, or reach another host. A value containing `/` or `\` (raw
 * or percent-encoded as `%2F`/`%5C`) is refused by name, because some
 * upstreams decode `%2F` before routing; a parameter declared
 * `slashes="segments"` takes a relative path instead (each segment encoded on
 * its own; empty, `.` and `..` segments refused; at most
 * {@link SEGMENTS_MAX_LENGTH} characters), and one declared
 * `slashes="encoded"` sends `/` as `%2F` inside its one segment. Values the
 * WHATWG URL parser would reinterpret are refused: `.` and `..` (folded as dot
 * segments even when percent-encoded), empty values, and control characters.
 * An integer parameter, and an integer given for an untyped input (no `type=`;
 * src/guard/untyped.ts), is sent in decimal. Every `restrict` on the parameter
 * must match the whole value (globs within one node are OR'd, nodes are
 * AND'd). Query and path values also pass the reference's metacharacter gate
 * unless the input states `metacharacters="allow"`.
 *
 * Optional inputs given as JSON `null` mean "not given" ({@link withoutNulls}).
 *
 * Grammar reference: `docs/guardfile.md`.
 *
 * @module
 */
import type { ToolError } from "../mcp/server.ts";
import {
  type Grant,
  type Guardfile,
  HEADER_VALUE_MAX_LENGTH,
  type PathParam,
  type ValueRules,
} from "../guardfile/model.ts";
import { formBody } from "./form.ts";
export { withoutNulls } from "./nulls.ts";
import { compileGlob } from "../guardfile/glob.ts";
import { SEGMENTS_MAX_LENGTH } from "../guardfile/rules.ts";
import { type KindRule, WeirError } from "../errors/kinds.ts";
import { isRawJson } from "../mcp/text.ts";
import { decimalProblem, decimalText } from "../surface/untyped.ts";
import {
  compatibilityForm,
  decodedForms,
  isDotPiece,
  MAX_DECODING_ROUNDS,
} from "../guardfile/decoded.ts";

/** Characters the reference refuses in path and query values (shell metacharacters). */
export const METACHARACTERS = /[`$;&|<>(){}\\\n\r\t]/;
const CONTROL = /[\x00-\x1f\x7f]/;

/** The header inputs of a call to a grant that declares none (shared; never written to). */
const NO_HEADERS: [string, string][] = [];

/** A request ready to send, minus credentials and the base URL (resolved at call time). */
export interface PlannedRequest {
  method: string;
  /** Path with every parameter encoded (starts with `/`). */
  path: string;
  /** Query pairs in emission order (keys sorted, array items in caller order). */
  query: [string, string][];
  /** JSON body, or undefined for none. */
  body?: unknown;
  /** The body form-encoded (a grant with `form`; src/guard/form.ts), sent instead of JSON. */
  form?: string;
  /** Header inputs the caller gave (`header` nodes), in declaration order. */
  headers: [string, string][];
}

/** A refusal by policy: a 403 on the tool API, `isError` over MCP, no request sent. */
export function policyDenied(message: string): ToolError {
  return denied("restrict", message);
}

/**
 * A refusal by policy under its own audit rule (src/ops/audit.ts): a dot
 * segment, a separator, a metacharacter, ... each logged by name rather than
 * all as `restrict`; the caller sees `policy_denied` either way.
 */
function denied(rule: KindRule, message: string): ToolError {
  return new WeirError("policy_denied", message, { status: 403, rule });
}

/** Restrict globs per parameter, compiled once per guardfile. */
export type RestrictIndex = Map<string, { globs: string[]; match: (v: string) => boolean }[]>;

/** Compile a guardfile's `restrict` nodes, keyed by parameter. */
export function indexRestricts(guardfile: Guardfile): RestrictIndex {
  const index: RestrictIndex = new Map();
  for (const r of guardfile.restricts) {
    const matchers = r.globs.map(compileGlob);
    const list = index.get(r.param) ?? [];
    list.push({ globs: r.globs, match: (v) => matchers.some((m) => m(v)) });
    index.set(r.param, list);
  }
  return index;
}

/**
 * Encode one path parameter value as one RFC 3986 segment.
 * @throws {ToolError} policy_denied for an empty, dot-segment or control-character value
 */
export function encodeSegment(name: string, value: string): string {
  if (value === "") throw denied("empty_value", `path parameter "${name}" is empty`);
  if (isDotSegment(value)) {
    throw denied("dot_segment", `path parameter "${name}" may not be "${value}" (a dot segment)`);
  }
  if (CONTROL.test(value)) {
    throw denied("control_character", `path parameter "${name}" contains a control character`);
  }
  // encodeURIComponent leaves only unreserved characters and ! ' ( ) *, all
  // valid in a segment; it encodes "/", "?", "#", "%" and everything else.
  return encodeURIComponent(value);
}

/**
 * Whether a segment is `.` or `..` in any form an upstream might decode it to
 * (src/guard/decoded.ts: `%2e`, `%252e`, `%25%32%65`, `%C0%AE`, `%u002e`, ...;
 * RFC 3986 section 3.3 and WHATWG URL "single-dot / double-dot URL path
 * segment"): an upstream decoding before routing would climb on it, as it
 * would on `%2F`.
 */
function isDotSegment(segment: string): boolean {
  return decodedForms(segment).forms.some(isDotPiece);
}

/**
 * Decide a path or query value by every form an upstream might decode it to
 * (src/guard/decoded.ts): each must pass the gate (no unpaired surrogate,
 * control character or refused metacharacter), and, for a path value, hold
 * no `\`, no `/` the value did not already hold, and no `.` or `..` segment.
 * @returns the forms (the value itself first), for the `restrict` check
 * @throws {ToolError} policy_denied naming the input, the rule and the decoding
 */
function checkDecodedForms(
  what: string,
  value: string,
  metacharacters: "refuse" | "allow",
  path: boolean,
): string[] {
  const { forms, unsettled } = decodedForms(value);
  if (unsettled) {
    throw denied(
      "encoded_too_deep",
      `${what} is still percent-encoded after ${MAX_DECODING_ROUNDS} rounds of decoding; ` +
        `send the value itself`,
    );
  }
  const slashes = path ? count(value, "/") : 0;
  for (const [i, form] of forms.entries()) {
    const how = i === 0 ? "" : ` once an upstream percent-decodes it`;
    if (path) pathForm(what, form, slashes, i > 0);
    gate(`${what}${how}`, form, metacharacters);
  }
  return forms;
}

/**
 * A form of a path value (the value itself, or what decoding makes of it) and
 * its Unicode compatibility form (src/guardfile/decoded.ts): no separator the
 * value did not hold, no dot segment, however a piece spells it (`..;x`, `．．`).
 */
function pathForm(what: string, form: string, slashes: number, decoded: boolean): void {
  if (decoded) {
    if (form.includes("\\") || count(form, "/") > slashes) {
      throw denied(
        "separator",
        `${what} contains a percent-encoded "/" or "\\" (%2F, %5C, in any form an upstream ` +
          `decodes); refused so an upstream that decodes before routing cannot see another path`,
      );
    }
    const dot = form.split(/[/\\]/).find(isDotPiece);
    if (dot !== undefined) {
      throw denied(
        "dot_segment",
        `${what} decodes to a "${dot}" segment (a dot segment) once an upstream ` +
          `percent-decodes it; dot segments are refused`,
      );
    }
  }
  const compatible = compatibilityForm(form);
  if (compatible === form) return;
  if (compatible.includes("\\") || count(compatible, "/") > slashes) {
    throw denied(
      "separator",
      `${what} contains a character an upstream that normalizes Unicode (NFKC) reads as "/" ` +
        `or "\\" (a fullwidth ／ or ＼); refused so it cannot see another path`,
    );
  }
  const dot = compatible.split(/[/\\]/).find(isDotPiece);
  if (dot !== undefined) {
    throw denied(
      "dot_segment",
      `${what} has a segment an upstream that normalizes Unicode (NFKC) reads as "${dot}" ` +
        `(a dot segment: fullwidth ．, the leaders ․ and ‥); dot segments are refused`,
    );
  }
}

function count(text: string, char: string): number {
  let n = 0;
  for (const c of text) if (c === char) n++;
  return n;
}

/** RFC 3986 section 2.3 unreserved characters only (and at least one). */
const UNRESERVED = /^[A-Za-z0-9._~-]+$/;

/**
 * A path value's forms (for `restrict`) and its encoding, or a refusal: the
 * decoded forms checked ({@link checkDecodedForms}), then encoded by the
 * parameter's `slashes` rule ({@link encodePathValue}). A one-segment value
 * of unreserved characters other than `.` and `..` is decided at once: it has
 * no other form, passes every gate and is its own encoding, which is what the
 * general path finds for it (`general`: take that path for every value; tests
 * hold the two together).
 * @throws {ToolError} policy_denied as {@link checkDecodedForms} and {@link encodePathValue}
 */
export function checkPathValue(
  param: PathParam,
  what: string,
  value: string,
  general = false,
): { forms: string[]; encoded: string } {
  if (
    !general && param.slashes === "refuse" && UNRESERVED.test(value) && value !== "." &&
    value !== ".."
  ) return { forms: [value], encoded: value };
  const forms = checkDecodedForms(what, value, param.metacharacters, true);
  return { forms, encoded: encodePathValue(param, value) };
}

/**
 * A query value's decoded forms checked ({@link checkDecodedForms}). A value
 * of unreserved characters has no other form and passes the gate: it is not
 * decoded (`general`: check every value the long way; tests hold the two
 * together).
 * @throws {ToolError} policy_denied as {@link checkDecodedForms}
 */
export function checkQueryValue(
  what: string,
  text: string,
  metacharacters: "refuse" | "allow",
  general = false,
): void {
  if (general || !UNRESERVED.test(text)) checkDecodedForms(what, text, metacharacters, false);
}

/**
 * Plan the request for a grant from validated arguments.
 *
 * @param grant the grant
 * @param args arguments already validated against the grant's input schema, optional
 *   inputs given as `null` already dropped ({@link withoutNulls}: the host does it
 *   once, before its own checks)
 * @param restricts the compiled restrictions
 * @throws {ToolError} policy_denied (403) for a value the policy refuses
 */
export function planRequest(
  grant: Grant,
  args: Record<string, unknown>,
  restricts: RestrictIndex,
): PlannedRequest {
  let path = grant.path;
  for (const param of grant.params) {
    const name = param.name;
    const raw = has(args, name) ? args[name] : "";
    const value = pathText(raw);
    const what = `path parameter "${name}"`;
    if (param.untyped && numberOf(raw) !== undefined) untypedInteger(what, value, param);
    if (value.includes("\\")) {
      throw denied(
        "separator",
        `${what} contains "\\"; refused so an upstream that reads it as "/" cannot see ` +
          `another path`,
      );
    }
    if (param.slashes === "refuse" && value.includes("/")) {
      throw denied(
        "separator",
        `${what} contains "/"; it fills exactly one path segment (the guardfile can declare ` +
          `param "${name}" slashes="segments" for a relative path)`,
      );
    }
    const { forms, encoded } = checkPathValue(param, what, value);
    for (const rule of restricts.get(name) ?? []) {
      // Every form must match: what an upstream decodes is what it serves.
      if (!forms.every(rule.match)) {
        throw denied(
          "restrict",
          `"${name}" value ${JSON.stringify(clip(value))} is outside this server's policy ` +
            `(allowed: ${rule.globs.map((g) => JSON.stringify(g)).join(" or ")})`,
        );
      }
    }
    path = path.replace(`{${name}}`, () => encoded);
  }

  for (const group of grant.exclusive) {
    const given = group.filter((n) => has(args, n));
    if (given.length > 1) {
      throw denied(
        "exclusive_inputs",
        `${given.map((n) => `"${n}"`).join(" and ")} cannot be combined; send one`,
      );
    }
  }
  const query: [string, string][] = [];
  for (const input of queryInputsOf(grant)) {
    if (!has(args, input.name)) continue;
    const value = args[input.name];
    for (const item of input.kind === "array" ? value as unknown[] : [value]) {
      const what = `query parameter "${input.name}"`;
      const n = input.untyped ? numberOf(item) : undefined;
      const untyped = n !== undefined;
      const text = untyped ? decimalText(n) : queryText(item);
      if (untyped) untypedInteger(what, text, input);
      checkQueryValue(what, text, input.metacharacters);
      query.push([input.wire, text]);
    }
  }
  // Most grants declare no header input: they share one empty list (never written to).
  const headers: [string, string][] = grant.headers.length === 0 ? NO_HEADERS : [];
  for (const input of grant.headers) {
    if (!has(args, input.name)) continue;
    const value = args[input.name];
    const what = `header "${input.wire}"`;
    const text = queryText(value);
    headerValue(what, text);
    gate(what, text, input.metacharacters);
    headers.push([input.wire, text]);
  }
  const body = planBody(grant, args);
  const planned: PlannedRequest = { method: grant.method, path, query, body, headers };
  if (grant.form && body !== undefined) {
    planned.form = formBody(grant.form, body as Record<string, unknown>);
  }
  return planned;
}

/** Each grant's query inputs sorted by wire name (the order they are sent in), once per grant. */
const sortedQuery = new WeakMap<Grant, Grant["query"]>();

function queryInputsOf(grant: Grant): Grant["query"] {
  let inputs = sortedQuery.get(grant);
  if (inputs === undefined) {
    inputs = grant.query.length < 2
      ? grant.query
      : [...grant.query].sort((a, b) => a.wire < b.wire ? -1 : a.wire > b.wire ? 1 : 0);
    sortedQuery.set(grant, inputs);
  }
  return inputs;
}

/**
 * A header value is sent exactly as given or refused: printable ASCII only
 * (RFC 9110 section 5.5 field-vchar and inner spaces; no control character,
 * no byte an upstream would read in another charset), no space at either
 * end (parsers strip it), not empty, at most {@link HEADER_VALUE_MAX_LENGTH}
 * characters.
 * @throws {ToolError} policy_denied naming the header
 */
function headerValue(what: string, text: string): void {
  if (text === "") throw denied("empty_value", `${what} is empty; give a value or leave it out`);
  if (text.length > HEADER_VALUE_MAX_LENGTH) {
    throw denied("value_too_long", `${what} is longer than ${HEADER_VALUE_MAX_LENGTH} characters`);
  }
  if (CONTROL.test(text)) {
    throw denied(
      "control_character",
      `${what} contains a control character (line break, tab, NUL, ...)`,
    );
  }
  if (!/^[\x20-\x7e]*$/.test(text)) {
    throw denied(
      "schema",
      `${what} holds a character outside printable ASCII, which a header does not carry ` +
        `exactly; send it as ASCII (an API that takes Unicode here documents an encoding)`,
    );
  }
  if (text.startsWith(" ") || text.endsWith(" ")) {
    throw denied(
      "schema",
      `${what} starts or ends with a space, which HTTP parsers strip; remove it`,
    );
  }
}

/**
 * A query value as text: a string as is; a number as the agent wrote it (a
 * `JSON.rawJSON` value of its source text when `JSON.stringify` would write
 * it otherwise: `1e21`, `1.0`, `-0`; src/mcp/jsonrpc.ts `spelledArguments`),
 * else as JSON writes it.
 */
function queryText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A number argument's value: a number, or the value of a number kept as its source text. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  return isRawJson(value) ? Number(value.rawJSON) : undefined;
}

/**
 * Whether `name` is the object's own argument. Inherited members (`constructor`,
 * `toString`, ...) are never arguments: an omitted input is not sent.
 */
function has(value: unknown, name: string): boolean {
  return typeof value === "object" && value !== null && Object.hasOwn(value, name);
}

/**
 * The metacharacter gate: unpaired surrogates and control characters are
 * always refused; shell metacharacters unless the input allows them.
 */
function gate(what: string, value: string, metacharacters: "refuse" | "allow"): void {
  if (!value.isWellFormed()) {
    throw denied(
      "ill_formed_text",
      `${what} contains an unpaired UTF-16 surrogate (not valid Unicode text)`,
    );
  }
  if (CONTROL.test(value)) {
    throw denied(
      "control_character",
      `${what} contains a control character (line break, tab, NUL, ...)`,
    );
  }
  if (metacharacters === "refuse" && METACHARACTERS.test(value)) {
    throw denied(
      "metacharacter",
      `${what} contains a character this server refuses (\` $ ; & | < > ( ) { } \\); ` +
        `the guardfile can allow them for this input with metacharacters="allow"`,
    );
  }
}

/**
 * A path value as text: an integer (of an integer or an untyped parameter)
 * in decimal, never exponent notation; a string as is.
 */
function pathText(raw: unknown): string {
  const n = numberOf(raw);
  if (n !== undefined && Number.isInteger(n)) return decimalText(n);
  return typeof raw === "string" ? raw : n !== undefined ? String(n) : String(raw);
}

/**
 * Hold an integer given for an untyped input to the input's string rules
 * through its decimal text (src/guard/untyped.ts; the schema admits only
 * integers that keep them, so this refuses only what a schema cannot say).
 * @throws {ToolError} policy_denied naming the rule
 */
function untypedInteger(what: string, text: string, rules: ValueRules): void {
  const problem = decimalProblem(text, rules);
  if (problem) {
    throw denied("schema", `${what}: the integer ${text} (sent as its decimal text) ${problem}`);
  }
}

/**
 * Encode a path value by its parameter's `slashes` rule (see the module doc).
 * @throws {ToolError} policy_denied for an empty, dot, over-long or control-character value
 */
export function encodePathValue(param: PathParam, value: string): string {
  if (param.slashes === "refuse") return encodeSegment(param.name, value);
  const what = `path parameter "${param.name}"`;
  // Counted in code points, as the advertised maxLength counts (JSON Schema 2020-12 section
  // 6.3.1), so a value the schema admits is never refused for its length here.
  if (value.length > SEGMENTS_MAX_LENGTH && [...value].length > SEGMENTS_MAX_LENGTH) {
    throw denied("value_too_long", `${what} is longer than ${SEGMENTS_MAX_LENGTH} characters`);
  }
  const segments = value.split("/");
  segments.forEach((segment, i) => {
    if (segment === "") {
      throw denied(
        i === 0 ? "separator" : "empty_value",
        i === 0
          ? `${what} starts with "/"; give a relative path such as docs/intro.md`
          : `${what} has an empty segment ("//" or a trailing "/")`,
      );
    }
    if (isDotSegment(segment)) {
      throw denied("dot_segment", `${what} has a "${segment}" segment; dot segments are refused`);
    }
  });
  if (param.slashes === "encoded") return encodeSegment(param.name, value);
  return segments.map((segment) => encodeSegment(param.name, segment)).join("/");
}

function planBody(grant: Grant, args: Record<string, unknown>): unknown {
  if (grant.set) return grant.set;
  if (grant.graphql) {
    const variables: Record<string, unknown> = {};
    for (const v of grant.graphql.variables) if (has(args, v)) variables[v] = args[v];
    return { query: grant.graphql.document, variables };
  }
  if (grant.bodyMap.length > 0) {
    const body: Record<string, unknown> = {};
    for (const m of grant.bodyMap) {
      let value: unknown = args;
      for (const segment of m.source) {
        value = has(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
      }
      body[m.target] = value;
    }
    return body;
  }
  const body: Record<string, unknown> = {};
  for (const field of grant.body) {
    if (!has(args, field.name)) continue;
    const value = args[field.name];
    const n = field.untyped ? numberOf(value) : undefined;
    if (n !== undefined) {
      // An untyped body name is a string: the integer goes as its decimal text.
      const text = decimalText(n);
      untypedInteger(`body field "${field.name}"`, text, field);
      body[field.name] = text;
    } else body[field.name] = value;
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

/** Serialize query pairs with RFC 3986 percent-encoding (`%20` for space). */
export function encodeQuery(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
