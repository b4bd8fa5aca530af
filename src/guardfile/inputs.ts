/**
 * A grant's caller inputs sent as query and body: `query` (names, or typed
 * `field`/`array` inputs with `mutually-exclusive` groups) and `body` (names,
 * typed fields, nested objects and arrays, or a `map` block). Path parameters
 * (`param`) are read in src/guardfile/rules.ts. Grammar: `docs/guardfile.md`,
 * "Inputs".
 *
 * @module
 */
import type {
  BodyField,
  BodyMapping,
  Grant,
  HeaderInput,
  QueryInput,
  ScalarType,
} from "./model.ts";
import { type NodeReader, show } from "./nodes.ts";
import { checkEnumAgainstRules, readGate, readValueRules, RULE_PROPERTIES } from "./rules.ts";

/** The scalar input types. */
export const SCALARS: readonly ScalarType[] = ["string", "boolean", "integer", "number"];
const MAP_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** `query` names, or a block of typed inputs, into `grant.query`. */
export function readQuery(query: NodeReader, grant: Grant): void {
  const hasArgs = query.node.values.length > 0;
  const hasBlock = query.node.children.length > 0;
  if (hasArgs && hasBlock) {
    query.error(
      `"query" takes either names or a block, not both; split it into two query nodes or move the names into the block as fields`,
    );
    return;
  }
  if (!hasArgs && !hasBlock) {
    query.error(
      `"query" needs names (query "status" "page") or a block of typed fields; add one or remove the node`,
    );
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
        untyped: true,
        required: false,
        metacharacters: "refuse",
      });
    });
    return;
  }
  if (Object.keys(query.node.properties).length > 0) {
    query.error(
      `a typed "query" block takes no properties on "query" itself; move them onto its fields`,
    );
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
      group.error(
        `"mutually-exclusive" names at least two inputs of this query block; add the other names`,
      );
    } else if (unique.size !== names.length) {
      group.error(`"mutually-exclusive" names an input twice`);
    } else {
      for (const n of unique) {
        if (!grant.query.some((q) => q.name === n)) {
          group.error(
            `"mutually-exclusive" names "${n}", which this grant does not declare; name a query input of this grant`,
          );
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
        group.error(`this "mutually-exclusive" group repeats an earlier one; remove it`);
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
      `a query input's block holds only "enum" (objects cannot be sent in a query string); remove the other nodes`,
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
      node.error(
        `min-items=${input.minItems} is greater than max-items=${input.maxItems}; lower min-items or raise max-items`,
      );
    }
    readValueRules(node, input.type, input);
    checkEnumAgainstRules(node, input);
    return input;
  }
  if ("min-items" in node.node.properties || "max-items" in node.node.properties) {
    node.error(
      `min-items=/max-items= apply to "array" inputs, not "field"; remove them or declare an array node`,
    );
  }
  return readScalarInput(node, name, input, "a query string") ? input : undefined;
}

/**
 * `type=`, `minimum=`/`maximum=` and the value rules of one scalar input sent
 * as text (a query `field`, a grant's `header`), into `input`.
 *
 * @param where where the value goes, for messages ("a query string", "a header")
 * @param fallback the type when `type=` is absent; none: `type=` is required
 * @returns false when the type cannot be read (the input is unusable)
 */
export function readScalarInput(
  node: NodeReader,
  name: string,
  input: QueryInput | HeaderInput,
  where: string,
  fallback?: ScalarType,
): boolean {
  const type = node.node.properties.type ?? fallback;
  if (type === undefined) {
    node.error(
      `"${node.name}" needs type= (string, boolean, integer or number); add one, e.g. type="string"`,
    );
    return false;
  }
  if (type === "object" || type === "array") {
    node.error(
      type === "array" && node.name === "field"
        ? `type="array" is declared with an "array" node: write array "${name}" items="string"`
        : `type="${type}" cannot be sent in ${where}; use string, boolean, integer or number`,
    );
    return false;
  }
  if (!SCALARS.includes(type as ScalarType)) {
    node.error(`type=${show(type)} is not supported; use string, boolean, integer or number`);
    return false;
  }
  input.type = type as ScalarType;
  input.minimum = node.numberProp("minimum");
  input.maximum = node.numberProp("maximum");
  const bounded = input.minimum !== undefined || input.maximum !== undefined;
  if (bounded && input.type !== "integer" && input.type !== "number") {
    node.error(
      `minimum=/maximum= apply to integer and number ${node.name}s, not ${input.type}; remove them or change type=`,
    );
  }
  if (input.minimum !== undefined && input.maximum !== undefined && input.minimum > input.maximum) {
    node.error(
      `minimum=${input.minimum} is greater than maximum=${input.maximum}; lower minimum or raise maximum`,
    );
  }
  if (input.type === "boolean" && input.metacharacters === "allow") {
    node.error(`metacharacters= applies to string values; a boolean is sent as true or false`);
  }
  readValueRules(node, input.type, input);
  checkEnumAgainstRules(node, input);
  return true;
}

function itemBound(node: NodeReader, key: string): number | undefined {
  const v = node.numberProp(key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0) {
    node.error(`${key}=${v} must be a whole number of 0 or more; write one such as ${key}=10`);
    return undefined;
  }
  return v;
}

/** `body` names, typed fields or a `map` block, into the grant's body inputs. */
export function readBody(body: NodeReader, grant: Grant): void {
  const hasArgs = body.node.values.length > 0;
  const hasBlock = body.node.children.length > 0;
  body.onlyProperties();
  if (hasArgs && hasBlock) {
    body.error(
      `"body" takes either names or a block, not both; move the names into the block as fields`,
    );
    return;
  }
  if (!hasArgs && !hasBlock) {
    body.error(
      `"body" needs names (body "title" "details") or a block of typed fields; add one or remove the node`,
    );
    return;
  }
  if (hasArgs) {
    body.node.values.forEach((_, i) => {
      const name = body.stringArg(i, `body name ${i + 1}`);
      if (name) grant.body.push({ name, type: "string", untyped: true, required: false });
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
        `unknown node "${kid.name}" in a body block; remove it, or use "field", "object" or "array"`,
      );
      continue;
    }
    const field = readBodyField(kid);
    if (!field) continue;
    if (fields.some((f) => f.name === field.name)) {
      kid.error(`body field "${field.name}" is declared twice in ${parent.name}; keep one`);
      continue;
    }
    fields.push(field);
  }
  return fields;
}

function readBodyField(node: NodeReader): BodyField | undefined {
  if ("metacharacters" in node.node.properties) {
    node.error(
      `metacharacters= has no effect on a body field: body values are never gated; remove it`,
    );
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
      node.error(
        `"field" needs type= (string, boolean, integer, number, array or object); add one, e.g. type="string"`,
      );
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
    if (raw) node.error(`raw= applies to objects and arrays, not ${type}; remove it`);
    if (itemsProp !== undefined) node.error(`items= applies to arrays, not ${type}`);
    if (node.node.children.some((k) => k.name !== "enum")) {
      node.error(`a ${type} field's block holds only "enum"; remove the other nodes`);
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
        if (key in node.node.properties) {
          node.error(`${key}= does not apply to a raw=#true array; remove it`);
        }
      }
      if (node.node.children.length > 0) {
        node.error(`"enum" does not apply to a raw=#true array; remove it`);
      }
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
  if (itemsProp !== undefined) node.error(`items= applies to arrays, not objects; remove it`);
  for (const key of RULE_PROPERTIES) {
    if (key in node.node.properties) {
      node.error(`${key}= applies to string values, not objects; remove it`);
    }
  }
  if (raw) {
    if (node.node.children.length > 0) {
      node.error(`an object is either raw=#true or a block of fields, not both; remove one`);
    }
    field.raw = true;
    return field;
  }
  if (node.node.children.length === 0) {
    node.error(`object "${name}" needs a block of fields, or raw=#true for any object; add one`);
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
      kid.error(`map needs to="<key>": add the top-level body key the value is sent as`);
      continue;
    }
    if (typeof target !== "string" || !MAP_SEGMENT.test(target)) {
      kid.error(
        `to=${show(target)} must be one key of letters, digits, _ or - (no dots); rename it`,
      );
      continue;
    }
    if (!source) continue;
    const segments = source.split(".");
    if (segments.some((s) => !MAP_SEGMENT.test(s))) {
      kid.error(
        `map source ${
          JSON.stringify(source)
        } must be dot-separated non-empty names; write it like "target.lane"`,
      );
      continue;
    }
    if (sources.has(source)) {
      kid.error(`map source "${source}" appears twice; keep one map node per source`);
    }
    if (targets.has(target)) {
      kid.error(`map target "${target}" appears twice; give each map its own to= key`);
    }
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
