/**
 * `can <verb> <resource> { ... }`: one grant, read into a {@link Grant}.
 *
 * Children (a closed set): `path`, `param`, `query`, `body`, `set`, `method`,
 * `describe`, `fail-when`, `raw-response`, `graphql`, `scope`, `sql` (`./sql.ts`).
 * Grammar reference: `docs/guardfile.md`.
 *
 * @module
 */
import type {
  BodyField,
  BodyMapping,
  Grant,
  GraphqlSpec,
  HttpMethod,
  QueryInput,
  ScalarType,
} from "./model.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";
import { HTTP_METHODS, methodForVerb } from "./verbs.ts";
import { compileJmesPath } from "./jmespath.ts";
import {
  checkEnumAgainstRules,
  defaultParam,
  readGate,
  readParams,
  readValueRules,
  RULE_PROPERTIES,
} from "./rules.ts";
import { readSql } from "./sql.ts";

const GRANT_CHILDREN = [
  "path",
  "param",
  "query",
  "body",
  "set",
  "method",
  "describe",
  "fail-when",
  "raw-response",
  "graphql",
  "sql",
  "scope",
];
const SCALARS: readonly ScalarType[] = ["string", "boolean", "integer", "number"];
/** Input names the reference reserves (its CLI flags); reach such an upstream name with an alias. */
export const RESERVED_INPUTS: readonly string[] = ["dry-run", "query", "output", "body-file"];
const PARAM = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MAP_SEGMENT = /^[A-Za-z0-9_-]+$/;

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
    const name of ["path", "method", "describe", "fail-when", "raw-response", "graphql", "sql"]
  ) {
    onlyOnce(kids, name);
  }

  const { method: verbMethod, inferred } = methodForVerb(verb);
  const grant: Grant = {
    verb,
    resource,
    tool,
    method: verbMethod,
    methodInferred: inferred,
    destructive: verb === "delete",
    path: "",
    pathParams: [],
    params: [],
    query: [],
    exclusive: [],
    body: [],
    bodyMap: [],
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
      if (text !== undefined && text.trim() === "") describe.error("describe must not be blank");
      else if (text) grant.describe = text.trim();
    }
  }

  const raw = kids.find((k) => k.name === "raw-response");
  if (raw) {
    raw.onlyProperties();
    raw.noChildren();
    if (raw.node.values.length > 0) raw.error(`"raw-response" is bare: it takes no arguments`);
    grant.rawResponse = true;
  }

  const failWhen = kids.find((k) => k.name === "fail-when");
  if (failWhen) {
    failWhen.onlyProperties();
    failWhen.noChildren();
    if (failWhen.argCount(1, 1, "a JMESPath expression")) {
      const expr = failWhen.stringArg(0, "fail-when");
      if (expr !== undefined) {
        const problem = compileJmesPath(expr);
        if (problem) {
          failWhen.error(`fail-when ${JSON.stringify(expr)} does not compile: ${problem}`);
        } else grant.failWhen = expr;
      }
    }
    if (raw) {
      failWhen.error(`"fail-when" cannot be used with "raw-response" (there is no JSON to test)`);
    }
  }

  for (const scope of kids.filter((k) => k.name === "scope")) readScope(scope, grant);
  if (sqlNode) {
    const others = kids.filter((k) =>
      ["path", "param", "query", "body", "set", "graphql", "raw-response", "method"].includes(
        k.name,
      )
    );
    for (const other of others) {
      other.error(
        `a sql grant runs its statement and sends no HTTP request: remove "${other.name}" ` +
          `(inputs are declared with param inside sql)`,
      );
    }
    grant.sql = readSql(sqlNode, inferred ? false : verbMethod === "GET");
    grant.methodInferred = false;
    if (others.length === 0 && grant.sql) checkInputNames(can, grant);
    return grant;
  }

  for (const query of kids.filter((k) => k.name === "query")) readQuery(query, grant);
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
    if (method && grant.method !== "POST") graphql.error(`a graphql grant is sent with POST only`);
    grant.method = "POST";
    grant.methodInferred = false;
  }

  if (grant.set && (grant.body.length > 0 || grant.bodyMap.length > 0)) {
    sets[0].error(
      `"set" fixes the whole body, so the declared body inputs would be silently dropped; ` +
        `remove "body" or "set"`,
    );
  }
  if (grant.bodyMap.length > 0 && grant.body.length > 0) {
    bodies[0].error(`a body "map" block cannot be combined with body fields in the same grant`);
  }
  checkInputNames(can, grant);
  return grant;
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
  if (!template.startsWith("/")) {
    path.error(`path ${JSON.stringify(template)} must start with "/"`);
    return;
  }
  if (/[?#]/.test(template)) {
    path.error(
      `path ${JSON.stringify(template)} contains "?" or "#": declare query inputs with "query" ` +
        `instead of writing them into the path`,
    );
    return;
  }
  if (/[\s\x00-\x1f\x7f]/.test(template)) {
    path.error(`path ${JSON.stringify(template)} contains whitespace or a control character`);
    return;
  }
  const literalSegments = template.split("/").map((seg) => seg.replace(/\{[^{}]*\}/g, "x"));
  if (literalSegments.some((seg) => /^(?:\.|%2e){1,2}$/i.test(seg))) {
    path.error(
      `path ${JSON.stringify(template)} has a "." or ".." segment (also percent-encoded); ` +
        `write the path it means`,
    );
    return;
  }
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
      path.error(`path parameter {${name}} must be a name of letters, digits, _ or -`);
    } else if (params.includes(name)) {
      path.error(`path parameter {${name}} appears twice; each parameter fills one place`);
    } else {
      params.push(name);
    }
  }
  if (template.replace(re, "").match(/[{}]/)) {
    path.error(`path ${JSON.stringify(template)} has an unmatched "{" or "}"`);
  }
  grant.path = template;
  grant.pathParams = params;
  grant.params = params.map(defaultParam);
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

function readQuery(query: NodeReader, grant: Grant): void {
  const hasArgs = query.node.values.length > 0;
  const hasBlock = query.node.children.length > 0;
  if (hasArgs && hasBlock) {
    query.error(`"query" takes either names or a block, not both`);
    return;
  }
  if (!hasArgs && !hasBlock) {
    query.error(`"query" needs names (query "status" "page") or a block of typed fields`);
    return;
  }
  if (hasArgs) {
    query.onlyProperties(["upstream"]);
    const alias = query.stringProp("upstream");
    if (alias !== undefined && query.node.values.length > 1) {
      query.error(`upstream= renames one input; give it a "query" node of its own`);
    }
    query.node.values.forEach((_, i) => {
      const name = query.stringArg(i, `query name ${i + 1}`);
      if (name === undefined) return;
      if (alias !== undefined && alias === name) {
        query.error(`upstream="${alias}" is the same as the input name; drop upstream=`);
      }
      grant.query.push({
        name,
        wire: alias ?? name,
        kind: "field",
        type: "string",
        required: false,
        metacharacters: "refuse",
      });
    });
    return;
  }
  if (Object.keys(query.node.properties).length > 0) {
    query.error(`a typed "query" block takes no properties on "query" itself`);
  }
  const groups: NodeReader[] = [];
  for (const kid of query.onlyChildren(["field", "array", "mutually-exclusive"])) {
    if (kid.name === "mutually-exclusive") {
      groups.push(kid);
      continue;
    }
    const input = readQueryInput(kid);
    if (input) grant.query.push(input);
  }
  for (const group of groups) {
    group.onlyProperties();
    group.noChildren();
    const names = group.node.values.map((_, i) => group.stringArg(i, `name ${i + 1}`));
    if (names.some((n) => n === undefined)) continue;
    const unique = new Set(names as string[]);
    if (names.length < 2) {
      group.error(`"mutually-exclusive" names at least two inputs of this query block`);
    } else if (unique.size !== names.length) {
      group.error(`"mutually-exclusive" names an input twice`);
    } else {
      for (const n of unique) {
        if (!grant.query.some((q) => q.name === n)) {
          group.error(`"mutually-exclusive" names "${n}", which this grant does not declare`);
        }
      }
      // A required member makes every other member of its group unusable
      // (two required members: the tool itself): silent inertness, refused.
      const required = grant.query.find((q) => q.required && unique.has(q.name));
      if (required) {
        const others = [...unique].filter((n) => n !== required.name).map((n) => `"${n}"`);
        group.error(
          `"mutually-exclusive" names "${required.name}", which is required, so ` +
            `${others.join(", ")} could never be given; drop required=#true or the group`,
        );
      }
      const key = [...unique].sort().join("\u0000");
      if (grant.exclusive.some((g) => [...g].sort().join("\u0000") === key)) {
        group.error(`this "mutually-exclusive" group repeats an earlier one`);
      } else {
        grant.exclusive.push([...unique]);
      }
    }
  }
}

function readQueryInput(node: NodeReader): QueryInput | undefined {
  const array = node.name === "array";
  node.onlyProperties(
    array
      ? [
        "items",
        "min-items",
        "max-items",
        "required",
        "upstream",
        "metacharacters",
        ...RULE_PROPERTIES,
      ]
      : [
        "type",
        "minimum",
        "maximum",
        "required",
        "upstream",
        "metacharacters",
        ...RULE_PROPERTIES,
      ],
  );
  if (node.node.children.some((k) => k.name !== "enum")) {
    node.error(
      `a query input's block holds only "enum" (objects cannot be sent in a query string)`,
    );
  }
  if (!node.argCount(1, 1, "the input name")) return undefined;
  const name = node.stringArg(0, `${node.name} name`);
  if (!name) return undefined;
  const required = node.boolProp("required") ?? false;
  const upstream = node.stringProp("upstream");
  if (upstream !== undefined && upstream === name) {
    node.error(`upstream="${upstream}" is the same as the input name; drop upstream=`);
  }
  const input: QueryInput = {
    name,
    wire: upstream ?? name,
    kind: array ? "array" : "field",
    type: "string",
    required,
    metacharacters: readGate(node),
  };
  if (array) {
    const items = node.node.properties.items ?? "string";
    if (items === "object" || items === "array") {
      node.error(
        `items="${items}" cannot be sent in a query string; use string, boolean, integer or number`,
      );
    } else if (!SCALARS.includes(items as ScalarType)) {
      node.error(`items=${show(items)} is not a type; use string, boolean, integer or number`);
    } else {
      input.type = items as ScalarType;
    }
    input.minItems = itemBound(node, "min-items");
    input.maxItems = itemBound(node, "max-items");
    if (
      input.minItems !== undefined && input.maxItems !== undefined &&
      input.minItems > input.maxItems
    ) {
      node.error(`min-items=${input.minItems} is greater than max-items=${input.maxItems}`);
    }
    readValueRules(node, input.type, input);
    checkEnumAgainstRules(node, input);
    return input;
  }
  const type = node.node.properties.type;
  if (type === undefined) {
    node.error(`"field" needs type= (string, boolean, integer or number)`);
    return undefined;
  }
  if (type === "object" || type === "array") {
    node.error(
      type === "array"
        ? `type="array" is declared with an "array" node: array "${name}" items="string"`
        : `type="object" cannot be sent in a query string`,
    );
    return undefined;
  }
  if (!SCALARS.includes(type as ScalarType)) {
    node.error(`type=${show(type)} is not supported; use string, boolean, integer or number`);
    return undefined;
  }
  input.type = type as ScalarType;
  input.minimum = node.numberProp("minimum");
  input.maximum = node.numberProp("maximum");
  const bounded = input.minimum !== undefined || input.maximum !== undefined;
  if (bounded && input.type !== "integer" && input.type !== "number") {
    node.error(`minimum=/maximum= apply to integer and number fields, not ${input.type}`);
  }
  if (input.minimum !== undefined && input.maximum !== undefined && input.minimum > input.maximum) {
    node.error(`minimum=${input.minimum} is greater than maximum=${input.maximum}`);
  }
  if ("min-items" in node.node.properties || "max-items" in node.node.properties) {
    node.error(`min-items=/max-items= apply to "array" inputs, not "field"`);
  }
  if (input.type === "boolean" && input.metacharacters === "allow") {
    node.error(`metacharacters= applies to string values; a boolean is sent as true or false`);
  }
  readValueRules(node, input.type, input);
  checkEnumAgainstRules(node, input);
  return input;
}

function itemBound(node: NodeReader, key: string): number | undefined {
  const v = node.numberProp(key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0) {
    node.error(`${key}=${v} must be a whole number of 0 or more`);
    return undefined;
  }
  return v;
}

function readBody(body: NodeReader, grant: Grant): void {
  const hasArgs = body.node.values.length > 0;
  const hasBlock = body.node.children.length > 0;
  body.onlyProperties();
  if (hasArgs && hasBlock) {
    body.error(`"body" takes either names or a block, not both`);
    return;
  }
  if (!hasArgs && !hasBlock) {
    body.error(`"body" needs names (body "title" "details") or a block of typed fields`);
    return;
  }
  if (hasArgs) {
    body.node.values.forEach((_, i) => {
      const name = body.stringArg(i, `body name ${i + 1}`);
      if (name) grant.body.push({ name, type: "string", required: false });
    });
    return;
  }
  const kids = body.children();
  if (kids.some((k) => k.name === "map")) {
    readBodyMap(kids, grant);
    return;
  }
  grant.body.push(...readBodyFields(body, kids));
}

function readBodyFields(parent: NodeReader, kids: NodeReader[]): BodyField[] {
  const fields: BodyField[] = [];
  const allowed = ["field", "object", "array"];
  for (const kid of kids) {
    if (!allowed.includes(kid.name)) {
      kid.error(
        `unknown node "${kid.name}" in a body block; expected "field", "object" or "array"`,
      );
      continue;
    }
    const field = readBodyField(kid);
    if (!field) continue;
    if (fields.some((f) => f.name === field.name)) {
      kid.error(`body field "${field.name}" is declared twice in ${parent.name}`);
      continue;
    }
    fields.push(field);
  }
  return fields;
}

function readBodyField(node: NodeReader): BodyField | undefined {
  if ("metacharacters" in node.node.properties) {
    node.error(`metacharacters= has no effect on a body field: body values are never gated`);
  }
  node.onlyProperties(["type", "items", "required", "raw", "metacharacters", ...RULE_PROPERTIES]);
  if (!node.argCount(1, 1, "the field name")) return undefined;
  const name = node.stringArg(0, `${node.name} name`);
  if (!name) return undefined;
  const required = node.boolProp("required") ?? false;
  const raw = node.boolProp("raw") ?? false;
  const itemsProp = node.node.properties.items;
  let type: BodyField["type"];
  if (node.name === "field") {
    const t = node.node.properties.type;
    if (t === undefined) {
      node.error(`"field" needs type= (string, boolean, integer, number, array or object)`);
      return undefined;
    }
    if (![...SCALARS, "array", "object"].includes(t as string)) {
      node.error(
        `type=${show(t)} is not supported; use string, boolean, integer, number, array or object`,
      );
      return undefined;
    }
    type = t as BodyField["type"];
  } else {
    if ("type" in node.node.properties) {
      node.error(`"${node.name}" has its type in its name; remove type=`);
    }
    type = node.name as "object" | "array";
  }
  const field: BodyField = { name, type, required };
  if (SCALARS.includes(type as ScalarType)) {
    if (raw) node.error(`raw= applies to objects and arrays, not ${type}`);
    if (itemsProp !== undefined) node.error(`items= applies to arrays, not ${type}`);
    if (node.node.children.some((k) => k.name !== "enum")) {
      node.error(`a ${type} field's block holds only "enum"`);
    }
    readValueRules(node, type, field);
    checkEnumAgainstRules(node, field);
    return field;
  }
  if (type === "array") {
    if (node.node.children.some((k) => k.name !== "enum")) {
      node.error(
        `an array field's block holds only "enum" (of its items); use items= for the type`,
      );
    }
    if (raw) {
      if (itemsProp !== undefined) node.error(`raw=#true arrays take any items; remove items=`);
      for (const key of RULE_PROPERTIES) {
        if (key in node.node.properties) node.error(`${key}= does not apply to a raw=#true array`);
      }
      if (node.node.children.length > 0) node.error(`"enum" does not apply to a raw=#true array`);
      field.raw = true;
      return field;
    }
    const items = itemsProp ?? "string";
    if (!SCALARS.includes(items as ScalarType)) {
      node.error(
        `items=${
          show(items)
        } is not a scalar type; use string, boolean, integer or number, or raw=#true`,
      );
    } else {
      field.items = items as ScalarType;
      readValueRules(node, field.items, field);
      checkEnumAgainstRules(node, field);
    }
    return field;
  }
  if (itemsProp !== undefined) node.error(`items= applies to arrays, not objects`);
  for (const key of RULE_PROPERTIES) {
    if (key in node.node.properties) node.error(`${key}= applies to string values, not objects`);
  }
  if (raw) {
    if (node.node.children.length > 0) {
      node.error(`an object is either raw=#true or a block of fields, not both`);
    }
    field.raw = true;
    return field;
  }
  if (node.node.children.length === 0) {
    node.error(`object "${name}" needs a block of fields, or raw=#true for any object`);
    return field;
  }
  field.fields = readBodyFields(node, node.children());
  return field;
}

function readBodyMap(kids: NodeReader[], grant: Grant): void {
  const sources = new Set<string>();
  const targets = new Set<string>();
  for (const kid of kids) {
    if (kid.name !== "map") {
      kid.error(`a body "map" block holds only map nodes; move "${kid.name}" to another grant`);
      continue;
    }
    kid.onlyProperties(["to"]);
    kid.noChildren();
    if (!kid.argCount(1, 1, `a dotted source path, e.g. map "issue.title" to="title"`)) continue;
    const source = kid.stringArg(0, "the map source");
    const target = kid.node.properties.to;
    if (target === undefined) {
      kid.error(`map needs to="<key>": the top-level body key the value is sent as`);
      continue;
    }
    if (typeof target !== "string" || !MAP_SEGMENT.test(target)) {
      kid.error(`to=${show(target)} must be one key of letters, digits, _ or - (no dots)`);
      continue;
    }
    if (!source) continue;
    const segments = source.split(".");
    if (segments.some((s) => !MAP_SEGMENT.test(s))) {
      kid.error(`map source ${JSON.stringify(source)} must be dot-separated non-empty names`);
      continue;
    }
    if (sources.has(source)) kid.error(`map source "${source}" appears twice`);
    if (targets.has(target)) kid.error(`map target "${target}" appears twice`);
    for (const other of sources) {
      if (other.startsWith(source + ".") || source.startsWith(other + ".")) {
        kid.error(`map sources "${other}" and "${source}" overlap (one is inside the other)`);
      }
    }
    sources.add(source);
    targets.add(target);
    grant.bodyMap.push({ source: segments, target } satisfies BodyMapping);
  }
}

function readSet(set: NodeReader, grant: Grant): void {
  const values: Record<string, unknown> = grant.set ?? {};
  if (set.node.values.length > 0) {
    set.error(`"set" takes key=value properties or a block, not arguments`);
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
    if (n.values.length > 0) node.error(`"${n.name}" takes a value or a block, not both`);
    const obj: Record<string, unknown> = {};
    for (const kid of node.children()) {
      const v = setBlockValue(kid);
      if (v !== undefined) obj[kid.name] = v;
    }
    return obj;
  }
  if (n.values.length === 0) {
    node.error(`"${n.name}" in set needs a value`);
    return undefined;
  }
  return n.values.length === 1 ? n.values[0] : [...n.values];
}

function readGraphql(node: NodeReader): GraphqlSpec | undefined {
  node.onlyProperties();
  if (node.node.values.length > 0) node.error(`"graphql" takes a block, not arguments`);
  const kids = node.onlyChildren(["document", "variable"]);
  const doc = onlyOnce(kids, "document");
  if (!doc) {
    node.error(`"graphql" needs document "<query or mutation>"`);
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
      v.error(`"${name}" is not a GraphQL variable name`);
    } else if (variables.includes(name)) {
      v.error(`variable "${name}" is declared twice`);
    } else if (document && !new RegExp(`\\$${name}\\b`).test(document)) {
      v.error(`variable "${name}" is not used as $${name} in the document`);
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
  for (const b of grant.body) add(b.name, "body");
  for (const root of new Set(grant.bodyMap.map((m) => m.source[0]))) add(root, "body map");
  for (const v of grant.graphql?.variables ?? []) add(v, "graphql variable");
  for (const p of grant.sql?.params ?? []) add(p.name, "sql param");

  const wires = new Map<string, string>();
  for (const q of grant.query) {
    const other = wires.get(q.wire);
    if (other !== undefined) {
      at.error(`query inputs "${other}" and "${q.name}" are both sent as "${q.wire}"`);
    }
    wires.set(q.wire, q.name);
  }
}
