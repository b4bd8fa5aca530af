/**
 * `can <verb> <resource> { ... }`: one grant, read into a {@link Grant}.
 *
 * Children (a closed set): `path`, `param`, `query`, `header` (`./header_inputs.ts`),
 * `body`, `form` (`./form.ts`), `set`, `method`, `describe`, `fail-when`, `raw-response`,
 * `graphql`, `scope`, `sql` (`./sql.ts`).
 * Grammar reference: `docs/guardfile.md`.
 *
 * @module
 */
import type { Grant, GraphqlSpec, HttpMethod } from "./model.ts";
import { type NodeReader, onlyOnce } from "./nodes.ts";
import { HTTP_METHODS, methodForVerb, readLikePrefix } from "./verbs.ts";
import { compatibilityForm, decodedForms, isDotPiece } from "./decoded.ts";
import { defaultParam, readParams } from "./rules.ts";
import { readerOf } from "./readers.ts";
import { readBody, readQuery } from "./inputs.ts";
import { foldCaseAndWidth, foldName, twinPairs } from "./name_fold.ts";
import { readHeaderInput } from "./header_inputs.ts";
import { formKeyProblem, formKeys, readForm } from "./form.ts";

const GRANT_CHILDREN = [
  "path",
  "param",
  "query",
  "header",
  "body",
  "form",
  "set",
  "method",
  "describe",
  "fail-when",
  "raw-response",
  "graphql",
  "sql",
  "scope",
];
/** What a `sql` grant may hold beside `sql`: everything that shapes an HTTP request is refused. */
const SQL_GRANT_CHILDREN = ["sql", "describe", "fail-when", "scope"];
/** Input names the reference reserves (its CLI flags); reach such an upstream name with an alias. */
export const RESERVED_INPUTS: readonly string[] = ["dry-run", "query", "output", "body-file"];
const PARAM = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Read one `can` node.
 * @returns the grant, or `undefined` when it is too broken to describe
 */
export function readGrant(can: NodeReader): Grant | undefined {
  can.onlyProperties();
  if (!can.argCount(2, 2, "a verb and a resource, e.g. can get issue")) return undefined;
  const verb = can.stringArg(0, "the verb");
  const resource = can.stringArg(1, "the resource");
  if (!verb || !resource) return undefined;
  const tool = `${verb}_${resource}`;
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(tool)) {
    can.error(
      `tool name "${tool}" is not a valid MCP tool name (1-128 of A-Z a-z 0-9 _ - .); ` +
        `rename the verb or resource`,
    );
  }
  const kids = can.onlyChildren(GRANT_CHILDREN);
  for (
    const name of [
      "path",
      "method",
      "describe",
      "fail-when",
      "raw-response",
      "graphql",
      "sql",
      "form",
    ]
  ) {
    onlyOnce(kids, name);
  }

  const { method: verbMethod, inferred, readWord } = methodForVerb(verb);
  const grant: Grant = {
    verb,
    resource,
    tool,
    method: verbMethod,
    methodInferred: inferred,
    // The verb `delete` in any case (`Delete`, `DELETE`), as the verb table reads it.
    destructive: foldCaseAndWidth(verb) === "delete",
    path: "",
    pathParams: [],
    params: [],
    query: [],
    exclusive: [],
    body: [],
    bodyMap: [],
    headers: [],
    rawResponse: false,
    scopes: [],
    position: can.node.position,
  };

  const sqlNode = kids.find((k) => k.name === "sql");
  const path = kids.find((k) => k.name === "path");
  if (sqlNode) {
    // A sql grant has no path: checked below.
  } else if (!path) {
    can.error(`missing "path": add path "/<template>", e.g. path "/items/{id}"`);
  } else {
    readPath(path, grant);
  }
  readParams(kids.filter((k) => k.name === "param"), grant);

  const method = kids.find((k) => k.name === "method");
  if (method) readMethod(method, grant);

  const describe = kids.find((k) => k.name === "describe");
  if (describe) {
    describe.onlyProperties();
    describe.noChildren();
    if (describe.argCount(1, 1, "the tool description")) {
      const text = describe.stringArg(0, "describe");
      if (text !== undefined && text.trim() === "") {
        describe.error("describe must not be blank; write what the tool does, or remove describe");
      } else if (text) grant.describe = text.trim();
    }
  }

  const raw = kids.find((k) => k.name === "raw-response");
  if (raw) {
    raw.onlyProperties();
    raw.noChildren();
    if (raw.node.values.length > 0) {
      raw.error(`"raw-response" is bare: it takes no arguments; remove them`);
    }
    grant.rawResponse = true;
  }

  const failWhen = kids.find((k) => k.name === "fail-when");
  if (failWhen) {
    failWhen.onlyProperties();
    failWhen.noChildren();
    if (failWhen.argCount(1, 1, "a JMESPath expression")) {
      const expr = failWhen.stringArg(0, "fail-when");
      if (expr !== undefined) {
        const problem = readerOf("jmespath").compileJmesPath(expr);
        if (problem) {
          failWhen.error(
            `fail-when ${
              JSON.stringify(expr)
            } does not compile (${problem}); fix the JMESPath expression`,
          );
        } else grant.failWhen = expr;
      }
    }
    if (raw) {
      failWhen.error(
        `"fail-when" cannot be used with "raw-response" (there is no JSON to test); remove one`,
      );
    }
  }

  for (const scope of kids.filter((k) => k.name === "scope")) readScope(scope, grant);
  if (sqlNode) {
    const others = kids.filter((k) =>
      GRANT_CHILDREN.includes(k.name) && !SQL_GRANT_CHILDREN.includes(k.name)
    );
    for (const other of others) {
      other.error(
        `a sql grant runs its statement and sends no HTTP request: remove "${other.name}" ` +
          `(inputs are declared with param inside sql)`,
      );
    }
    grant.sql = readerOf("sql").readSql(sqlNode, grant.verb);
    grant.methodInferred = false;
    if (others.length === 0 && grant.sql) checkInputNames(can, grant);
    return grant;
  }

  for (const query of kids.filter((k) => k.name === "query")) readQuery(query, grant);
  for (const header of kids.filter((k) => k.name === "header")) readHeaderInput(header, grant);
  const bodies = kids.filter((k) => k.name === "body");
  for (const body of bodies) readBody(body, grant);
  const sets = kids.filter((k) => k.name === "set");
  for (const set of sets) readSet(set, grant);

  const graphql = kids.find((k) => k.name === "graphql");
  if (graphql) {
    grant.graphql = readGraphql(graphql);
    if (bodies.length > 0 || sets.length > 0) {
      graphql.error(`"graphql" builds the body itself; remove "body" and "set" from this grant`);
    }
    if (method && grant.method !== "POST") {
      graphql.error(
        `a graphql grant is sent with POST only; remove the method node or state method "POST"`,
      );
    }
    grant.method = "POST";
    grant.methodInferred = false;
  }

  const form = kids.find((k) => k.name === "form");
  if (form) {
    grant.form = readForm(form);
    if (graphql) form.error(`a graphql grant sends a JSON document; remove "form"`);
    else if (grant.body.length === 0 && grant.bodyMap.length === 0 && !grant.set) {
      form.error(
        `"form" says how the body is sent, but this grant sends no body; declare body inputs ` +
          `(body { field ... }) or set, or remove "form"`,
      );
    }
    for (const [key, nested] of formKeys(grant)) {
      const problem = formKeyProblem(key, nested);
      if (problem) form.error(`form body key ${JSON.stringify(key)} ${problem}`);
    }
  }

  if (grant.set && (grant.body.length > 0 || grant.bodyMap.length > 0)) {
    sets[0].error(
      `"set" fixes the whole body, so the declared body inputs would be silently dropped; ` +
        `remove "body" or "set"`,
    );
  }
  if (grant.bodyMap.length > 0 && grant.body.length > 0) {
    bodies[0].error(
      `a body "map" block cannot be combined with body fields in the same grant; move the fields into map nodes`,
    );
  }
  checkInputNames(can, grant);
  // A read word outside the table sends GET, unless the grant sends a body: then say which.
  const byReadWord = readWord && !method && !grant.graphql;
  if (byReadWord && (grant.body.length > 0 || grant.bodyMap.length > 0 || grant.set)) {
    can.error(
      `the verb "${verb}" reads as a read and sends GET, but this grant sends a body: state ` +
        `the method, e.g. method "POST" (a search or query that takes a body) or method "GET"`,
    );
  }
  const readLike = grant.methodInferred ? readLikePrefix(verb) : undefined;
  if (readLike !== undefined) {
    can.error(
      `the verb "${verb}" reads as a read (it starts with "${readLike}") but is not in the verb ` +
        `table, so it would send POST, a write: state the method, e.g. method "GET" (or ` +
        `"POST" if it writes)`,
    );
  }
  return grant;
}

/**
 * Every input name of a grant (path parameters, query, header and body
 * inputs, body map roots, sql parameters), as the tool's schema names them.
 */
export function grantInputNames(grant: Grant): string[] {
  return [
    ...grant.pathParams,
    ...grant.query.map((q) => q.name),
    ...grant.headers.map((h) => h.name),
    ...grant.body.map((b) => b.name),
    ...grant.bodyMap.map((m) => m.source[0]),
    ...(grant.sql?.params.map((p) => p.name) ?? []),
  ];
}

/**
 * RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), that is
 * printable ASCII except space, `"` and backslash.
 */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** `scope "a" "b"`: OAuth scopes the caller's token must all carry (repeatable). */
function readScope(scope: NodeReader, grant: Grant): void {
  scope.onlyProperties();
  scope.noChildren();
  if (!scope.argCount(1, Infinity, `one or more scopes, e.g. scope "tickets:write"`)) return;
  for (let i = 0; i < scope.node.values.length; i++) {
    const value = scope.stringArg(i, "a scope");
    if (value === undefined) continue;
    if (!SCOPE_TOKEN.test(value)) {
      scope.error(
        `scope ${JSON.stringify(value)} is not an OAuth scope (RFC 6749 section 3.3: printable ` +
          `ASCII without spaces, '"' or '\\'); write each scope as its own string, ` +
          `e.g. scope "tickets:read" "tickets:write"`,
      );
    } else if (grant.scopes.includes(value)) {
      scope.error(`scope ${JSON.stringify(value)} is listed twice for this grant; keep one`);
    } else grant.scopes.push(value);
  }
}

function readPath(path: NodeReader, grant: Grant): void {
  path.onlyProperties();
  path.noChildren();
  if (!path.argCount(1, 1, "the path template")) return;
  const template = path.stringArg(0, "path");
  if (!template) return;
  // A template of the wrong shape is an error, and its parameters are still read, so the
  // nodes naming them (param, restrict, reject-empty-argument) do not fail a second time.
  const shape = pathShapeProblem(template);
  if (shape) path.error(shape);
  const params: string[] = [];
  const re = /\{([^{}]*)\}/g;
  for (const m of template.matchAll(re)) {
    const name = m[1];
    if (/^[+#./;?&]/.test(name) && PARAM.test(name.slice(1))) {
      path.error(
        `path parameter {${name}} uses an RFC 6570 operator weir does not read; write ` +
          `{${name.slice(1)}} and declare param "${name.slice(1)}" slashes="segments" ` +
          `for a value of several segments`,
      );
    } else if (!PARAM.test(name)) {
      path.error(`path parameter {${name}} must be a name of letters, digits, _ or -: rename it`);
    } else if (params.includes(name)) {
      path.error(
        `path parameter {${name}} appears twice; each parameter fills one place: rename one`,
      );
    } else {
      params.push(name);
    }
  }
  if (template.replace(re, "").match(/[{}]/)) {
    path.error(
      `path ${JSON.stringify(template)} has an unmatched "{" or "}"; close the parameter as {name}`,
    );
  }
  if (!shape) grant.path = template;
  grant.pathParams = params;
  grant.params = params.map(defaultParam);
}

/** What is wrong with a path template's shape (where it starts, what it holds), if anything. */
function pathShapeProblem(template: string): string | undefined {
  if (!template.startsWith("/")) {
    return `path ${JSON.stringify(template)} must start with "/"; write it as "/${
      template.replace(/^\/*/, "")
    }"`;
  }
  if (/[?#]/.test(template)) {
    return `path ${JSON.stringify(template)} contains "?" or "#": declare query inputs with ` +
      `"query" instead of writing them into the path`;
  }
  if (/[\s\x00-\x1f\x7f]/.test(template)) {
    return `path ${
      JSON.stringify(template)
    } contains whitespace or a control character; percent-encode it or remove it`;
  }
  const literalSegments = template.split("/").map((seg) => seg.replace(/\{[^{}]*\}/g, "x"));
  // A dot segment in any form an upstream might decode it to (src/guardfile/decoded.ts).
  const dotted = (seg: string) =>
    decodedForms(seg).forms.some((f) =>
      [f, compatibilityForm(f)].some((g) => g.split(/[/\\]/).some(isDotPiece))
    );
  if (literalSegments.some(dotted)) {
    return `path ${JSON.stringify(template)} has a "." or ".." segment (also percent-encoded, ` +
      `in any form an upstream decodes); write the path it means`;
  }
  return undefined;
}

function readMethod(method: NodeReader, grant: Grant): void {
  method.onlyProperties();
  method.noChildren();
  if (!method.argCount(1, 1, "an HTTP method")) return;
  const value = method.stringArg(0, "method");
  if (!value) return;
  const upper = value.toUpperCase() as HttpMethod;
  if (!HTTP_METHODS.includes(upper)) {
    method.error(
      `"${value}" is not an HTTP method weir sends; use one of ${HTTP_METHODS.join(", ")}`,
    );
    return;
  }
  grant.method = upper;
  grant.methodInferred = false;
  if (upper === "DELETE") grant.destructive = true;
}

function readSet(set: NodeReader, grant: Grant): void {
  const values: Record<string, unknown> = grant.set ?? {};
  if (set.node.values.length > 0) {
    set.error(
      `"set" takes key=value properties or a block, not arguments; write set status="closed"`,
    );
  }
  const props = Object.entries(set.node.properties);
  if (props.length === 0 && set.node.children.length === 0) {
    set.error(`"set" needs at least one key=value, e.g. set state="closed"`);
    return;
  }
  for (const [key, value] of props) values[key] = value;
  for (const kid of set.children()) {
    const v = setBlockValue(kid);
    if (v !== undefined) values[kid.name] = v;
  }
  grant.set = values;
}

/** `set { key value; key v1 v2; key { nested value } }` (umbra-next block form). */
function setBlockValue(node: NodeReader): unknown {
  node.onlyProperties();
  const n = node.node;
  if (n.children.length > 0) {
    if (n.values.length > 0) {
      node.error(`"${n.name}" takes a value or a block, not both; remove one`);
    }
    const obj: Record<string, unknown> = {};
    for (const kid of node.children()) {
      const v = setBlockValue(kid);
      if (v !== undefined) obj[kid.name] = v;
    }
    return obj;
  }
  if (n.values.length === 0) {
    node.error(`"${n.name}" in set needs a value; write ${n.name} "..." or give it a block`);
    return undefined;
  }
  return n.values.length === 1 ? n.values[0] : [...n.values];
}

function readGraphql(node: NodeReader): GraphqlSpec | undefined {
  node.onlyProperties();
  if (node.node.values.length > 0) {
    node.error(`"graphql" takes a block, not arguments; write graphql { document "..."; }`);
  }
  const kids = node.onlyChildren(["document", "variable"]);
  const doc = onlyOnce(kids, "document");
  if (!doc) {
    node.error(`"graphql" needs document "<query or mutation>"; add it inside the block`);
    return undefined;
  }
  doc.onlyProperties();
  doc.noChildren();
  const document = doc.argCount(1, 1, "the GraphQL document")
    ? doc.stringArg(0, "document")
    : undefined;
  const variables: string[] = [];
  for (const v of kids.filter((k) => k.name === "variable")) {
    v.onlyProperties();
    v.noChildren();
    if (!v.argCount(1, 1, "the variable name")) continue;
    const name = v.stringArg(0, "variable");
    if (!name) continue;
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(name)) {
      v.error(
        `"${name}" is not a GraphQL variable name (letters, digits, _; not starting with a digit); rename it`,
      );
    } else if (variables.includes(name)) {
      v.error(`variable "${name}" is declared twice; keep one`);
    } else if (document && !usesVariable(document, name)) {
      v.error(
        `variable "${name}" is not used as $${name} in the document; use it there or remove the variable`,
      );
    } else {
      variables.push(name);
    }
  }
  return document ? { document, variables } : undefined;
}

/** Input names must be unique across the grant, not reserved, and not shadow a path parameter. */
function checkInputNames(at: NodeReader, grant: Grant): void {
  const seen = new Map<string, string>();
  const add = (name: string, where: string) => {
    const before = seen.get(name);
    if (before) {
      at.error(`two inputs both name "${name}" (${before} and ${where}); rename one`);
    } else if (RESERVED_INPUTS.includes(name)) {
      at.error(
        `input name "${name}" is reserved; name it otherwise and reach the upstream name with ` +
          (where === "query" ? `upstream="${name}"` : `a body map`),
      );
    }
    seen.set(name, where);
  };
  for (const p of grant.pathParams) seen.set(p, "path");
  for (const q of grant.query) add(q.name, "query");
  for (const h of grant.headers) add(h.name, "header");
  for (const b of grant.body) add(b.name, "body");
  for (const root of new Set(grant.bodyMap.map((m) => m.source[0]))) add(root, "body map");
  for (const v of grant.graphql?.variables ?? []) add(v, "graphql variable");
  for (const p of grant.sql?.params ?? []) add(p.name, "sql param");

  const wires = new Map<string, string>();
  for (const q of grant.query) {
    const other = wires.get(q.wire);
    if (other !== undefined) {
      at.error(
        `query inputs "${other}" and "${q.name}" are both sent as "${q.wire}"; remove one, or give one another upstream= name`,
      );
    }
    wires.set(q.wire, q.name);
  }
  checkWireTwins(at, grant);
  checkMethodTunnels(at, grant);
  for (const key of Object.keys(grant.set ?? {})) {
    const param = pathTwinOf(grant, key);
    if (param) at.warn(pathTwinWarning(`the fixed body key set ${key}=`, param));
  }
}

/**
 * The path parameter of `grant` that names the same value as a fixed key
 * (a query pin, a `set` key) for an upstream that merges path, query and body
 * parameters into one map (Rails' `params`, where a path parameter wins;
 * Laravel's `input()`), compared as src/guardfile/name_fold.ts folds names.
 */
export function pathTwinOf(grant: Grant, key: string): string | undefined {
  return grant.pathParams.find((p) => foldName(p) === foldName(key));
}

/** The warning for {@link pathTwinOf}: what it is, and what to write instead. */
export function pathTwinWarning(fixed: string, param: string): string {
  return `${fixed} and the path parameter {${param}} name one value for frameworks that merge ` +
    `path, query and body parameters (Rails, Laravel), which may read the caller's path value ` +
    `instead of the fixed one; if the upstream is one of them, write the fixed value into the ` +
    `path instead of {${param}}`;
}

/** The keys one grant's request carries by name (query and top-level body), with what sends each. */
export function wireKeys(grant: Grant): { key: string; what: string }[] {
  return [
    ...grant.query.map((q) => ({ key: q.wire, what: `query input "${q.name}"` })),
    ...grant.body.map((b) => ({ key: b.name, what: `body input "${b.name}"` })),
    ...grant.bodyMap.map((m) => ({ key: m.target, what: `body map to "${m.target}"` })),
    ...Object.keys(grant.set ?? {}).map((k) => ({ key: k, what: `set ${k}=` })),
  ];
}

/**
 * Two keys of one request that differ only by letter case, width or
 * separators (src/guardfile/name_fold.ts): an upstream that binds names
 * loosely (case-insensitive query binding, Go's encoding/json, a naming
 * strategy) reads them as one, so a rule on one could be bypassed through the
 * other, or the upstream takes either.
 */
function checkWireTwins(at: NodeReader, grant: Grant): void {
  for (const [later, earlier] of twinPairs(wireKeys(grant))) {
    at.error(
      `${later.what} sends "${later.key}" and ${earlier.what} sends "${earlier.key}", which ` +
        `differ only by letter case, width or separators: an upstream that matches names ` +
        `loosely reads them as one; rename one (upstream= for a query input), or remove it`,
    );
  }
}

/**
 * The query or body keys frameworks read as "use this HTTP method instead"
 * (Laravel and Symfony read `_method` from a POST's query or JSON body, Rails
 * and others from its form). A grant sends its own method, which describe,
 * `readOnlyHint`, `--read-only` and `weir diff` all rest on.
 */
export const METHOD_OVERRIDE_KEYS: readonly string[] = ["_method"];

/**
 * Refuse a query or top-level body key that would make the upstream run
 * another method than the grant's, whether a caller gives it or `set` fixes it.
 */
function checkMethodTunnels(at: NodeReader, grant: Grant): void {
  for (const { key, what } of wireKeys(grant)) {
    if (!METHOD_OVERRIDE_KEYS.includes(foldCaseAndWidth(key))) continue;
    at.error(
      `${what} sends "${key}", which many frameworks read as another HTTP method than the ` +
        `grant's ${grant.method} (a method override): remove it; a grant that needs another ` +
        `method says so with method "..."`,
    );
  }
}

/**
 * Whether a GraphQL document uses `$name` (not as the start of a longer
 * name): a search, not a regular expression built from the name, which may
 * be longer than the engine compiles.
 */
function usesVariable(document: string, name: string): boolean {
  const needle = `$${name}`;
  for (let at = document.indexOf(needle); at >= 0; at = document.indexOf(needle, at + 1)) {
    if (!/[_0-9A-Za-z]/.test(document[at + needle.length] ?? "")) return true;
  }
  return false;
}
