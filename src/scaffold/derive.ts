/**
 * One OpenAPI operation -> one guardfile grant, or the exact reason the
 * grammar (`docs/guardfile.md`) cannot express it. Weir's own derivation:
 *
 * - path parameters become `param` nodes (integer or string, bounds, pattern,
 *   lengths, enum); a name the grammar does not allow, or one a body field
 *   also uses, is renamed in the template (path names never reach the wire);
 * - query parameters become typed `field`s and `array`s (form style, exploded);
 *   a name weir reserves, or one another input uses, keeps its wire name with
 *   `upstream=`; a non-exploded or delimited array is one string;
 * - a JSON or form request body becomes typed `field`s, nested `object`s and
 *   `array`s;
 *   a sole reserved field that is a required string becomes a body `map`;
 * - numeric bounds on body fields, which the grammar does not carry, and
 *   anything else not kept are listed as notes for the reviewer.
 *
 * Header parameters become `header` inputs (`./derive_headers.ts`); an
 * `application/x-www-form-urlencoded` body becomes a `form` grant. What cannot
 * be sent (a cookie, a header weir sets or another credential, an object or
 * deepObject query parameter, a multipart or array body, a path style other
 * than `simple`, a method weir does not send) is left out with a note when
 * optional and makes the operation inexpressible when required. Pure: no I/O.
 *
 * @module
 */
import type {
  BodyField,
  BodyMapping,
  FormEncoding,
  HeaderInput,
  HttpMethod,
  PathParam,
  QueryInput,
} from "../guardfile/model.ts";
import { RESERVED_INPUTS } from "../guardfile/grant.ts";
import { isObject, type Json, type Operation } from "./document.ts";
import { type ReadSchema, readSchema } from "./schema.ts";
import {
  clip,
  copyBounds,
  copyRules,
  freeName,
  Inexpressible,
  lostNotes,
  paramSchema,
  scalarOf,
} from "./derive_shared.ts";
import { deriveHeaders, isCredential } from "./derive_headers.ts";
import type { GrantName } from "./naming.ts";
import type { AuthPlan } from "./upstream.ts";
import { writtenExactly } from "./kdl_text.ts";

/** A grant derived from an operation. */
export interface ScaffoldGrant {
  /** The verb, resource and tool name. */
  name: GrantName;
  method: HttpMethod;
  /** The path template (placeholders renamed where the grammar needs it). */
  path: string;
  params: PathParam[];
  query: QueryInput[];
  /** Header parameters the caller supplies (`header` nodes). */
  headers: HeaderInput[];
  body: BodyField[];
  bodyMap: BodyMapping[];
  /** The body is `application/x-www-form-urlencoded` (a `form` node). */
  form?: FormEncoding;
  /** The summary, as `describe`. */
  describe?: string;
  /** What the reviewer should know: renames, what is not enforced or left out. */
  notes: string[];
}

/** One operation and what became of it. */
export interface Derivation {
  op: Operation;
  /** `METHOD /path`, what `--select` matches besides the operationId. */
  key: string;
  name: GrantName;
  /** The grant, when the grammar can express the operation. */
  grant?: ScaffoldGrant;
  /** Why it cannot be expressed, when it cannot. */
  reason?: string;
  /** The operation accepts only a security scheme this file does not send. */
  otherAuth?: string;
}

const METHODS: Record<string, HttpMethod | undefined> = {
  GET: "GET",
  HEAD: "HEAD",
  POST: "POST",
  PUT: "PUT",
  PATCH: "PATCH",
  DELETE: "DELETE",
};
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const NUMBER_PATTERN = "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$";
const FORM_MEDIA = /^application\/x-www-form-urlencoded(?:\s*;.*)?$/i;
const JSON_MEDIA = /^(?:application\/(?:[\w.+-]+\+)?json|\*\/\*|application\/\*)(?:\s*;.*)?$/i;

/** Why a name with characters {@link writtenExactly} refuses cannot be written. */
const UNWRITABLE =
  "its name holds characters a guardfile cannot hold (controls, bidirectional marks)";

/**
 * Derive the grant of one operation.
 * @param op the operation
 * @param name its tool name (named beforehand, so names do not depend on the selection)
 * @param auth the file's auth: its query key or header is the credential, not an input
 * @returns the grant, or the reason it cannot be expressed
 */
export function deriveGrant(op: Operation, name: GrantName, auth: AuthPlan): Derivation {
  const key = `${op.method} ${op.path}`;
  try {
    return { op, key, name, grant: derive(op, name, auth) };
  } catch (error) {
    if (error instanceof Inexpressible) return { op, key, name, reason: error.message };
    throw error;
  }
}

function derive(op: Operation, name: GrantName, auth: AuthPlan): ScaffoldGrant {
  const method = METHODS[op.method];
  if (!method) {
    throw new Inexpressible(
      `method ${op.method}: weir sends GET, HEAD, POST, PUT, PATCH and DELETE only`,
    );
  }
  checkPath(op.path);
  if (op.servers) {
    throw new Inexpressible(
      `served from ${String(op.servers[0].url)}, not the document's server: a guardfile ` +
        `reaches one base-url; scaffold it into a guardfile of its own`,
    );
  }
  const notes: string[] = [];
  const used = new Set<string>();
  const { body, bodyMap, form } = deriveBody(op, notes, used);
  const query = deriveQuery(op, notes, used, auth);
  const { path, params } = derivePath(op, notes, used);
  const headers = deriveHeaders(op, notes, used, auth);
  return {
    name,
    method,
    path,
    params,
    query,
    headers,
    body,
    bodyMap,
    ...(form ? { form } : {}),
    ...(op.summary ? { describe: clip(op.summary, 300) } : {}),
    notes,
  };
}

function checkPath(path: string): void {
  if (!path.startsWith("/")) {
    throw new Inexpressible(`path ${JSON.stringify(path)} does not start with "/"`);
  }
  if (/[?#]/.test(path)) {
    throw new Inexpressible(
      `path ${JSON.stringify(path)} holds "?" or "#", which a path template may not`,
    );
  }
  if (/[\s\x00-\x1f\x7f]/.test(path)) {
    throw new Inexpressible(`path ${JSON.stringify(path)} holds whitespace or a control character`);
  }
  const literal = path.split("/").map((s) => s.replace(/\{[^{}]*\}/g, "x"));
  if (literal.some((s) => /^(?:\.|%2e){1,2}$/i.test(s))) {
    throw new Inexpressible(`path ${JSON.stringify(path)} has a "." or ".." segment`);
  }
  if (path.replace(/\{[^{}]*\}/g, "").match(/[{}]/)) {
    throw new Inexpressible(`path ${JSON.stringify(path)} has an unmatched "{" or "}"`);
  }
}

// ---- path ----

function derivePath(op: Operation, notes: string[], used: Set<string>): {
  path: string;
  params: PathParam[];
} {
  const declared = new Map(
    op.parameters.filter((p) => p.in === "path").map((p) => [String(p.name), p]),
  );
  const params: PathParam[] = [];
  const seen = new Set<string>();
  let path = op.path;
  const renames: [string, string][] = [];
  for (const m of op.path.matchAll(/\{([^{}]*)\}/g)) {
    const original = m[1];
    if (seen.has(original)) {
      throw new Inexpressible(`path parameter {${original}} appears twice in the path`);
    }
    seen.add(original);
    const p = declared.get(original);
    let local = original;
    if (!PARAM_NAME.test(local) || RESERVED_INPUTS.includes(local) || used.has(local)) {
      const clean = original.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^[^A-Za-z_]/, "p_$&") ||
        "param";
      local = freeName(used.has(clean) ? `${clean}_path` : clean, used);
      renames.push([original, local]);
    }
    used.add(local);
    params.push(pathParam(local, p, notes));
  }
  for (const [from, to] of renames) {
    path = path.replace(`{${from}}`, `{${to}}`);
    notes.push(`path parameter {${from}} is written {${to}} (the name never reaches the upstream)`);
  }
  return { path, params };
}

function pathParam(name: string, p: Json | undefined, notes: string[]): PathParam {
  const param: PathParam = { name, type: "string", slashes: "refuse", metacharacters: "refuse" };
  if (!p) return param;
  const style = typeof p.style === "string" ? p.style : "simple";
  if (style !== "simple") {
    throw new Inexpressible(
      `path parameter {${p.name}} has style "${style}"; weir fills a segment with the plain value (style simple)`,
    );
  }
  const s = paramSchema(p);
  if (s.type === "array" || s.type === "object") {
    throw new Inexpressible(
      `path parameter {${p.name}} is ${
        s.type === "array" ? "an array" : "an object"
      }; weir fills a path segment with one value`,
    );
  }
  if (s.type === "integer") {
    param.type = "integer";
    if (s.minimum !== undefined) param.minimum = s.minimum;
    if (s.maximum !== undefined) param.maximum = s.maximum;
    if (s.enum) param.enum = s.enum;
  } else if (s.type === "number") {
    param.pattern = NUMBER_PATTERN;
    notes.push(`path parameter {${name}} is a number in the document: a string of digits here`);
  } else if (s.type === "boolean") {
    param.enum = ["true", "false"];
  } else {
    copyRules(param, s);
  }
  lostNotes(notes, `path parameter {${name}}`, s);
  return param;
}

// ---- query ----

function deriveQuery(
  op: Operation,
  notes: string[],
  used: Set<string>,
  auth: AuthPlan,
): QueryInput[] {
  const out: QueryInput[] = [];
  const wires = new Set<string>();
  for (const p of op.parameters) {
    if (p.in !== "query") continue;
    const wire = String(p.name);
    if (isCredential(p, auth)) continue;
    if (wires.has(wire)) continue;
    const required = p.required === true;
    const skip = (why: string) => {
      if (required) throw new Inexpressible(`query parameter "${wire}" ${why}`);
      notes.push(`optional query "${wire}" is left out: it ${why}`);
    };
    if (wire === "") {
      skip("has no name");
      continue;
    }
    if (!writtenExactly(wire)) {
      skip("has a name holding characters a guardfile cannot hold (controls, bidirectional marks)");
      continue;
    }
    const s = paramSchema(p);
    const style = typeof p.style === "string" ? p.style : "form";
    const explode = typeof p.explode === "boolean" ? p.explode : style === "form";
    let local = wire;
    if (RESERVED_INPUTS.includes(local) || used.has(local)) local = freeName(`${wire}_value`, used);
    used.add(local);
    wires.add(wire);
    const input: QueryInput = {
      name: local,
      wire,
      kind: "field",
      type: "string",
      required,
      metacharacters: "refuse",
    };
    if (s.type === "object" || style === "deepObject") {
      used.delete(local);
      skip(`is an object (style ${style}); weir sends scalar query values and arrays of them`);
      continue;
    }
    if (s.type === "array") {
      const items = s.items ?? { type: "unknown", lost: [] };
      if (items.type === "array" || items.type === "object") {
        used.delete(local);
        skip(`is an array of ${items.type}s; weir sends arrays of scalars`);
        continue;
      }
      if (style !== "form" || !explode) {
        notes.push(
          `query "${wire}" is one ${style === "form" ? "comma" : style}-separated string ` +
            `(style ${style}, not exploded): give the joined text`,
        );
      } else {
        input.kind = "array";
        input.type = scalarOf(items.type);
        copyBounds(input, items);
        copyRules(input, items);
        if (s.minItems !== undefined) input.minItems = s.minItems;
        if (s.maxItems !== undefined) input.maxItems = s.maxItems;
        lostNotes(notes, `query "${wire}" items`, items);
      }
    } else {
      input.type = scalarOf(s.type);
      copyBounds(input, s);
      copyRules(input, s);
    }
    lostNotes(notes, `query "${wire}"`, s);
    if (local !== wire) {
      notes.push(
        `query "${wire}" is served as "${local}" (${
          RESERVED_INPUTS.includes(wire) ? "weir reserves the name" : "another input has the name"
        }) and sent as "${wire}"`,
      );
    }
    out.push(input);
  }
  return out;
}

// ---- body ----

function deriveBody(op: Operation, notes: string[], used: Set<string>): {
  body: BodyField[];
  bodyMap: BodyMapping[];
  form?: FormEncoding;
} {
  const { body, bodyMap, form, media } = deriveBodyFields(op, notes, used);
  return form ? { body, bodyMap, form: formEncoding(body, media, notes) } : { body, bodyMap };
}

function deriveBodyFields(op: Operation, notes: string[], used: Set<string>): {
  body: BodyField[];
  bodyMap: BodyMapping[];
  form?: boolean;
  media?: Json;
} {
  const none = { body: [], bodyMap: [] };
  const rb = op.requestBody;
  if (!rb) return none;
  const required = rb.required === true;
  const content = isObject(rb.content) ? rb.content : {};
  const types = Object.keys(content);
  const media = types.find((t) => JSON_MEDIA.test(t)) ?? types.find((t) => FORM_MEDIA.test(t));
  const form = media !== undefined && FORM_MEDIA.test(media);
  const kind = form ? "form" : "JSON";
  const fail = (why: string) => {
    if (required) throw new Inexpressible(why);
    notes.push(`the optional request body is not sent: ${why}`);
    return none;
  };
  if (!media) {
    return types.length === 0 ? none : fail(
      `the request body is ${types.join(" or ")}; weir sends JSON and ` +
        `application/x-www-form-urlencoded bodies`,
    );
  }
  const mediaType = content[media];
  const s = readSchema(isObject(mediaType) ? mediaType.schema : undefined);
  if (s.type === "unknown" && !(isObject(mediaType) && isObject(mediaType.schema))) return none;
  if (s.type !== "object" || (s.properties ?? []).length === 0) {
    return fail(
      s.type === "object"
        ? `the ${kind} body is an object of arbitrary keys; weir sends bodies of named fields`
        : `the ${kind} body is ${
          s.type === "unknown"
            ? "of any type"
            : `a${s.type === "array" || s.type === "integer" ? "n" : ""} ${s.type}`
        }; weir sends ${form ? "a form" : "a JSON object"} of named fields`,
    );
  }
  const requiredNames = new Set(s.required ?? []);
  const props = (s.properties ?? []).filter(([, v]) => !v.readOnly);
  const reserved = props.filter(([n]) => RESERVED_INPUTS.includes(n));
  if (reserved.length > 0) {
    const [n, v] = reserved[0];
    if (props.length === 1 && v.type === "string") {
      const source = `${n}_text`;
      used.add(source);
      notes.push(
        `body field "${n}" (a name weir reserves) is given as "${source}" and sent as "${n}"`,
      );
      if (!requiredNames.has(n)) {
        notes.push(`body field "${n}" is optional in the document, required here`);
      }
      const map = [{ source: [source], target: n }];
      return form
        ? { body: [], bodyMap: map, form, media: asJson(mediaType) }
        : { body: [], bodyMap: map };
    }
    if (reserved.some(([rn]) => requiredNames.has(rn))) {
      throw new Inexpressible(
        `required body field "${
          reserved.find(([rn]) => requiredNames.has(rn))![0]
        }" is a name weir ` +
          `reserves, and a body map can rename only a sole string field`,
      );
    }
    for (const [rn] of reserved) {
      notes.push(`optional body field "${rn}" is left out (a name weir reserves)`);
    }
  }
  const body: BodyField[] = [];
  for (const [n, v] of props) {
    if (RESERVED_INPUTS.includes(n) || n === "") continue;
    if (!writtenExactly(n)) {
      if (requiredNames.has(n)) throw new Inexpressible(`required body field ${UNWRITABLE}`);
      notes.push(`an optional body field is left out: ${UNWRITABLE}`);
      continue;
    }
    const field = bodyField(n, v, requiredNames.has(n), notes, n);
    if (field) {
      body.push(field);
      used.add(n);
    }
  }
  if (body.length === 0) return fail(`no request body field can be written`);
  return form ? { body, bodyMap: [], form, media: asJson(mediaType) } : { body, bodyMap: [] };
}

function asJson(value: unknown): Json | undefined {
  return isObject(value) ? value : undefined;
}

/**
 * How a form body writes its arrays, from the media type's `encoding`
 * (OpenAPI 3.1 section 4.8.15): `deepObject` -> `brackets` (`a[]=x`, as
 * Stripe documents), `form` exploded (the default) -> `repeat`; an array of
 * objects needs `indexed` (`a[0][k]=v`). A non-exploded array is one
 * comma-joined string. Objects are written `a[k]=v` whatever the document says.
 */
function formEncoding(body: BodyField[], media: Json | undefined, notes: string[]): FormEncoding {
  const encoding = isObject(media) && isObject(media.encoding) ? media.encoding : {};
  const votes = new Set<FormEncoding["arrays"]>();
  for (const [i, f] of body.entries()) {
    const enc = isObject(encoding[f.name]) ? encoding[f.name] as Json : {};
    const style = typeof enc.style === "string" ? enc.style : "form";
    const explode = typeof enc.explode === "boolean" ? enc.explode : style === "form";
    if (f.type === "object" && style !== "deepObject") {
      notes.push(`form body "${f.name}" is sent as ${f.name}[key]=value (brackets)`);
    }
    if (f.type !== "array") continue;
    if (f.raw) votes.add("indexed");
    else if (style === "deepObject") votes.add("brackets");
    else if (style === "form" && explode) votes.add("repeat");
    else {
      body[i] = { name: f.name, type: "string", required: f.required };
      notes.push(
        `form body "${f.name}" is one ${style === "form" ? "comma" : style}-separated string ` +
          `(style ${style}, not exploded): give the joined text`,
      );
    }
  }
  const arrays = votes.has("indexed") ? "indexed" : votes.has("brackets") ? "brackets" : "repeat";
  if (votes.size > 1) {
    notes.push(
      `the document writes this form's arrays in ${votes.size} ways; every array is sent ` +
        `arrays="${arrays}"`,
    );
  }
  return { arrays };
}

function bodyField(
  name: string,
  s: ReadSchema,
  required: boolean,
  notes: string[],
  where: string,
): BodyField | undefined {
  lostNotes(notes, `body "${where}"`, s);
  if (s.minimum !== undefined || s.maximum !== undefined) {
    notes.push(
      `body "${where}": bounds ${s.minimum ?? "-inf"}..${
        s.maximum ?? "inf"
      } are not enforced here (body fields carry no numeric bounds)`,
    );
  }
  switch (s.type) {
    case "string":
    case "integer":
    case "number":
    case "boolean": {
      const f: BodyField = { name, type: s.type, required };
      copyRules(f, s);
      lostNotes(notes, `body "${where}"`, s);
      return f;
    }
    case "array": {
      const items = s.items ?? { type: "unknown", lost: [] };
      if (
        items.type === "string" || items.type === "integer" || items.type === "number" ||
        items.type === "boolean"
      ) {
        const f: BodyField = { name, type: "array", required, items: items.type };
        copyRules(f, items);
        lostNotes(notes, `body "${where}" items`, items);
        return f;
      }
      return { name, type: "array", required, raw: true };
    }
    case "object": {
      const props = (s.properties ?? []).filter(([, v]) => !v.readOnly && v !== undefined);
      if (s.circular || props.length === 0) return { name, type: "object", required, raw: true };
      const req = new Set(s.required ?? []);
      const fields = props
        .filter(([n]) => {
          if (n !== "" && !writtenExactly(n)) {
            notes.push(`a body field of "${where}" is left out: ${UNWRITABLE}`);
          }
          return n !== "" && writtenExactly(n);
        })
        .map(([n, v]) => bodyField(n, v, req.has(n), notes, `${where}.${n}`))
        .filter((f): f is BodyField => f !== undefined);
      if (fields.length === 0) return { name, type: "object", required, raw: true };
      return { name, type: "object", required, fields };
    }
    default:
      if (required) {
        notes.push(`body "${where}" has no type in the document: sent as a string`);
        return { name, type: "string", required };
      }
      notes.push(`optional body "${where}" is left out: the document gives it no type`);
      return undefined;
  }
}
