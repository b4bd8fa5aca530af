/**
 * What `weir verify` holds a spec-mode request to: the one request a call of
 * a grant may become, written from the grammar (docs/guardfile.md) and not
 * from the guard's code, so that a fault in the guard shows as a difference.
 * For a request that reached the stand-in it checks: the method and path
 * template of exactly the called grant, every path value inside its own
 * segment (never a dot segment, never an encoded separator it may not hold)
 * and decoding to the value sent; the query and the body holding exactly the
 * declared inputs as sent, pins as pinned, `set` bodies as set (a `form`
 * body read back as form parsers read it: `./form_oracle.ts`); the
 * credential and static headers as the file says, header inputs as sent.
 *
 * @module
 */
import type { Grant, Guardfile } from "../guardfile/model.ts";
import type { RecordedRequest } from "./standin.ts";
import { readForm, sameForm } from "./form_oracle.ts";

/** What the oracle knows besides the grant: the stand-in values verify set. */
export interface SpecContext {
  guardfile: Guardfile;
  /** The base URL's path (`/api/v1`, or `""`), which every request starts with. */
  basePath: string;
  /** The credential as verify set it: header name and full value, or query pairs. */
  auth: { header?: [string, string]; query: [string, string][] };
  /** Pinned query values by tool, as verify set them. */
  pins: Record<string, [string, string][]>;
}

const has = (o: unknown, k: string) =>
  typeof o === "object" && o !== null && !Array.isArray(o) && Object.hasOwn(o, k);

/** Whether a text sent for `value` is `value`: a string exactly, a number by its value. */
function sameText(text: string, value: unknown): boolean {
  if (typeof value === "string") return text === value;
  if (typeof value === "number") return text.trim() !== "" && Number(text) === value;
  if (typeof value === "boolean") return text === String(value);
  return false;
}

/** Whether two JSON values are the same, numbers by value and object keys in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a === "number" || typeof b === "number") {
    return Number(a) === Number(b) && typeof a === typeof b;
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && sameJson((a as never)[k], (b as never)[k]));
}

function decode(piece: string): string | undefined {
  try {
    return decodeURIComponent(piece);
  } catch {
    return undefined;
  }
}

/** The grant's path template as a matcher of raw segments: param name -> raw segments. */
function matchTemplate(
  grant: Grant,
  segments: string[],
): Map<string, string[]> | undefined {
  const template = grant.path.split("/").slice(1);
  const multi = new Set(grant.params.filter((p) => p.slashes === "segments").map((p) => p.name));
  const out = new Map<string, string[]>();
  const walk = (t: number, s: number): boolean => {
    if (t === template.length) return s === segments.length;
    const part = template[t];
    const whole = /^\{([^}]+)\}$/.exec(part);
    if (whole && multi.has(whole[1])) {
      for (let end = s + 1; end <= segments.length; end++) {
        out.set(whole[1], segments.slice(s, end));
        if (walk(t + 1, end)) return true;
      }
      out.delete(whole[1]);
      return false;
    }
    if (s >= segments.length) return false;
    const names: string[] = [];
    const source = part.replace(/\{([^}]+)\}|[^{]+/g, (m, name) => {
      if (name) {
        names.push(name);
        return "([^/]+)";
      }
      return m.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    });
    const m = new RegExp(`^${source}$`).exec(segments[s]);
    if (!m) return false;
    names.forEach((n, i) => out.set(n, [m[i + 1]]));
    return walk(t + 1, s + 1);
  };
  return walk(0, 0) ? out : undefined;
}

/** The query pairs of a request target, decoded. */
function queryPairs(search: string): [string, string][] | string {
  if (search === "") return [];
  const out: [string, string][] = [];
  for (const piece of search.split("&")) {
    const at = piece.indexOf("=");
    const key = decode(at < 0 ? piece : piece.slice(0, at));
    const value = decode(at < 0 ? "" : piece.slice(at + 1));
    if (key === undefined || value === undefined) {
      return `query piece "${piece}" is not valid percent-encoding`;
    }
    out.push([key, value]);
  }
  return out;
}

/** The body a call of `grant` with `args` may send (undefined: none). */
function expectedBody(grant: Grant, args: Record<string, unknown>): unknown {
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
      for (const key of m.source) value = has(value, key) ? (value as never)[key] : undefined;
      if (value !== undefined) body[m.target] = value;
    }
    return body;
  }
  const body: Record<string, unknown> = {};
  for (const field of grant.body) {
    if (!has(args, field.name)) continue;
    const value = args[field.name];
    if (value === null && !field.required) continue;
    body[field.name] = field.untyped && typeof value === "number" ? String(value) : value;
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

/** Optional nested body fields given as `null` are not sent: drop them for the comparison. */
function withoutNulls(fields: Grant["body"], value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field = fields.find((f) => f.name === k);
    if (v === null && field && !field.required) continue;
    out[k] = field?.fields ? withoutNulls(field.fields, v) : v;
  }
  return out;
}

/**
 * Check one request that a call of `grant` (tool `grant.tool`, arguments
 * `args`) made.
 * @returns the violations found, in words (empty: the request is the one the grant allows)
 */
export function checkSpecRequest(
  grant: Grant,
  args: Record<string, unknown>,
  request: RecordedRequest,
  context: SpecContext,
): string[] {
  const problems: string[] = [];
  const [path, search = ""] = request.target.split(/\?(.*)/s, 2);
  if (request.method !== grant.method) {
    problems.push(`method ${request.method}, not the grant's ${grant.method}`);
  }
  if (!path.startsWith(context.basePath + "/")) {
    problems.push(`path ${path} is outside the base URL's path ${context.basePath || "/"}`);
    return problems;
  }
  const segments = path.slice(context.basePath.length).split("/").slice(1);
  const matched = context.guardfile.grants.filter((g) =>
    g.method === request.method && !g.sql && matchTemplate(g, segments)
  );
  const values = matchTemplate(grant, segments);
  if (!values) {
    problems.push(
      `path ${path} does not fill the grant's template ${grant.path}` +
        (matched.length > 0 ? ` (it is ${matched.map((g) => g.tool).join(", ")}'s)` : ""),
    );
    return problems;
  }
  for (const param of grant.params) {
    const raw = values.get(param.name) ?? [];
    const decoded = raw.map(decode);
    raw.forEach((piece, i) => {
      const d = decoded[i];
      if (d === undefined) {
        problems.push(`path value "${param.name}" is not valid percent-encoding`);
      } else if (d === "." || d === ".." || decode(d) === "." || decode(d) === "..") {
        problems.push(`path value "${param.name}" is a dot segment (${piece})`);
      }
      if (/%5c|\\/i.test(piece)) problems.push(`path value "${param.name}" holds a \\ (${piece})`);
      if (param.slashes !== "encoded" && /%2f/i.test(piece)) {
        problems.push(`path value "${param.name}" holds an encoded / (${piece})`);
      }
      if (/[?#]/.test(piece)) problems.push(`path value "${param.name}" leaves its segment`);
    });
    const text = decoded.join("/");
    if (!sameText(text, args[param.name])) {
      problems.push(
        `path value "${param.name}" arrived as ${JSON.stringify(text)}, sent as ${
          JSON.stringify(args[param.name])
        }`,
      );
    }
  }
  const pairs = queryPairs(search);
  if (typeof pairs === "string") problems.push(pairs);
  else {
    const expected: [string, unknown][] = [];
    for (const q of grant.query) {
      if (!has(args, q.name) || (args[q.name] === null && !q.required)) continue;
      const value = args[q.name];
      for (const item of q.kind === "array" && Array.isArray(value) ? value : [value]) {
        expected.push([q.wire, item]);
      }
    }
    for (const [k, v] of context.pins[grant.tool] ?? []) expected.push([k, v]);
    for (const [k, v] of context.auth.query) expected.push([k, v]);
    const left = [...expected];
    for (const [key, value] of pairs) {
      const at = left.findIndex(([k, v]) => k === key && sameText(value, v));
      if (at >= 0) left.splice(at, 1);
      else {
        const pinned = (context.pins[grant.tool] ?? []).some(([k]) => k === key);
        problems.push(
          pinned
            ? `pinned query "${key}" arrived as ${JSON.stringify(value)}, not as pinned`
            : `query "${key}"=${JSON.stringify(value)} is not an input sent as written`,
        );
      }
    }
    for (const [key] of left) problems.push(`query "${key}" is missing or altered`);
  }
  const body = expectedBody(grant, args);
  if (body === undefined) {
    if (request.body !== "") problems.push(`a body was sent, and the grant sends none`);
  } else if (grant.form) {
    const sent = readForm(request.body, grant.form.arrays);
    if (typeof sent === "string") problems.push(sent);
    else if (!sameForm(sent, withoutNulls(grant.body, body))) {
      problems.push(
        `the form body ${clip(request.body)} is not the one the grant sends (${
          clip(JSON.stringify(body))
        })`,
      );
    }
  } else {
    let sent: unknown;
    try {
      sent = JSON.parse(request.body);
    } catch {
      problems.push(`the body is not JSON`);
    }
    if (
      sent !== undefined &&
      !sameJson(withoutNulls(grant.body, sent), withoutNulls(grant.body, body))
    ) {
      problems.push(
        `the body ${clip(request.body)} is not the one the grant sends (${
          clip(JSON.stringify(body))
        })`,
      );
    }
  }
  const header = (name: string) =>
    request.headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  if (context.auth.header) {
    const [name, value] = context.auth.header;
    if (header(name) !== value) problems.push(`the credential header ${name} is not as configured`);
  }
  for (const [name, value] of context.guardfile.headers) {
    if (header(name) !== value) problems.push(`header ${name} is not the file's value`);
  }
  for (const h of grant.headers) {
    const given = has(args, h.name) && args[h.name] !== null ? args[h.name] : undefined;
    const arrived = header(h.wire);
    if (given === undefined ? arrived !== undefined : !sameText(arrived ?? "", given)) {
      problems.push(
        `header ${h.wire} arrived as ${JSON.stringify(arrived ?? null)}, sent as ${
          JSON.stringify(given ?? null)
        }`,
      );
    }
  }
  return problems;
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
