/**
 * Every field of the surface model declares how a change to it moves what an
 * agent can do (src/diff/declarations.ts), and `weir diff` hears every field:
 * - the declarations cover every field the model's values hold (walked on
 *   surfaces that set every field between them: tests/surface/fixtures.ts,
 *   and every example in guardfiles/), and each has a reason;
 * - the samples hold every declared field (so the walk saw all of them);
 * - changing any one field of a sample makes `diffSurfaces` report a change
 *   (except the keys and the file path, declared ignored; a value rule the
 *   input schema states is changed with no schema known, and every rule of a
 *   grant is checked to be in its advertised schema);
 * - a field the declarations do not know is reported as a widening.
 */
import assert from "node:assert/strict";
import { Concealed } from "../../src/surface/concealed.ts";
import type { Surface } from "../../src/surface/model.ts";
import type { Fields, Leaf, List } from "../../src/diff/declare.ts";
import { SURFACE_DECLARATIONS } from "../../src/diff/declarations.ts";
import { TOOLS } from "../../src/diff/tool_declarations.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { surfaceOfGuardfile } from "../../src/surface/spec.ts";
import { surfaceOfWrap } from "../../src/surface/wrap.ts";
import { describeAws } from "../../src/modes/serve_aws.ts";
import { ROOT } from "../support/cli.ts";
import { fullSurfaces } from "./fixtures.ts";

type Item = Record<string, unknown>;
type AnyDeclaration = Leaf<unknown> | List<Item> | Fields<Item>;
const ROOT_FIELDS = {
  why: "the surface",
  fields: SURFACE_DECLARATIONS,
} as unknown as AnyDeclaration;
const isList = (d: AnyDeclaration): d is List<Item> => "each" in d;
const isFields = (d: AnyDeclaration): d is Fields<Item> => "fields" in d;

/** Every declared path (`tools[].arguments[].rules.maximum`), with its declaration. */
function declaredPaths(): Map<string, AnyDeclaration> {
  const out = new Map<string, AnyDeclaration>();
  const walk = (d: AnyDeclaration, path: string) => {
    out.set(path, d);
    if (isList(d)) {
      for (const [k, v] of Object.entries(d.each as Record<string, AnyDeclaration>)) {
        walk(v, `${path}[].${k}`);
      }
    } else if (isFields(d)) {
      for (const [k, v] of Object.entries(d.fields as Record<string, AnyDeclaration>)) {
        walk(v, path === "" ? k : `${path}.${k}`);
      }
    }
  };
  walk(ROOT_FIELDS, "");
  out.delete("");
  return out;
}

/** Every path a value holds, down to the declared leaves; undeclared keys named. */
function presentPaths(surface: Surface): { present: Set<string>; undeclared: string[] } {
  const present = new Set<string>();
  const undeclared: string[] = [];
  const walk = (d: AnyDeclaration, value: unknown, path: string) => {
    if (value === undefined) return;
    if (path !== "") present.add(path);
    if (isList(d)) {
      for (const item of value as Record<string, unknown>[]) {
        for (const [k, v] of Object.entries(item)) {
          const inner = (d.each as Record<string, AnyDeclaration>)[k];
          if (!inner) undeclared.push(`${path}[].${k}`);
          else walk(inner, v, `${path}[].${k}`);
        }
      }
    } else if (isFields(d)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const inner = (d.fields as Record<string, AnyDeclaration>)[k];
        const at = path === "" ? k : `${path}.${k}`;
        if (!inner) undeclared.push(at);
        else walk(inner, v, at);
      }
    }
  };
  walk(ROOT_FIELDS, surface, "");
  return { present, undeclared };
}

/** Surfaces of every shipped example (spec mode, the AWS policies, wrap files from the file alone). */
function exampleSurfaces(): Surface[] {
  const out: Surface[] = [];
  for (const entry of Deno.readDirSync(`${ROOT}guardfiles`)) {
    if (!entry.name.endsWith(".mcp.kdl")) continue;
    const file = `guardfiles/${entry.name}`;
    const loaded = loadGuardfileText(Deno.readTextFileSync(`${ROOT}${file}`), file);
    if (loaded.guardfile) out.push(surfaceOfGuardfile(loaded.guardfile));
    else if (loaded.mcpWrap) out.push(surfaceOfWrap(loaded.mcpWrap));
    else if (loaded.policy) out.push(describeAws(loaded.policy));
    else assert.fail(`${file} does not load`);
  }
  return out;
}

Deno.test("every declaration states why; a leaf states which way it moves", () => {
  for (const [path, d] of declaredPaths()) {
    assert.ok(d.why.trim().length > 10, `${path}: a declaration says why`);
    if (!isList(d) && !isFields(d)) {
      assert.ok(["wider", "narrower", "either", "neither"].includes((d as Leaf<unknown>).moves));
    }
  }
});

Deno.test("every field a surface holds is declared, and the samples hold every declared field", () => {
  const declared = declaredPaths();
  const seen = new Set<string>();
  for (const surface of [...fullSurfaces(), ...exampleSurfaces()]) {
    const { present, undeclared } = presentPaths(surface);
    assert.deepEqual(undeclared, [], `${surface.file}: fields with no declaration`);
    for (const p of present) seen.add(p);
  }
  const unseen = [...declared.keys()].filter((p) => !seen.has(p));
  assert.deepEqual(unseen, [], "declared fields no sample sets (make the fixtures set them)");
});

/** A copy of a model value (Concealed kept). */
function copy<T>(v: T): T {
  if (v instanceof Concealed || typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) return v.map(copy) as T;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)])) as T;
}

/** Another value of the same shape. */
function mutate(v: unknown): unknown {
  if (v instanceof Concealed) return new Concealed("another literal");
  if (typeof v === "number") return v + 7;
  if (typeof v === "string") return `${v}-other`;
  if (typeof v === "boolean") return !v;
  if (Array.isArray(v)) return v.length > 0 ? [mutate(v[0]), ...v.slice(1)] : ["another"];
  if (typeof v === "object" && v !== null) {
    const entries = Object.entries(v);
    // Change the last field that is not a discriminating `kind`/`provider`/`where`.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i];
      if (["kind", "provider", "where"].includes(k)) continue;
      return { ...v, [k]: mutate(x) };
    }
    return { ...v, extra: "another" };
  }
  return "another";
}

/** Every leaf location of a surface: a setter that replaces the value there. */
function leafSites(
  surface: Surface,
): { path: string; leaf: Leaf<unknown>; set: (s: Surface) => void }[] {
  const out: { path: string; leaf: Leaf<unknown>; set: (s: Surface) => void }[] = [];
  const walk = (
    d: AnyDeclaration,
    value: unknown,
    path: string,
    locate: (s: Surface) => Record<string, unknown>,
    key: string,
  ) => {
    if (value === undefined) return;
    if (isList(d)) {
      (value as Record<string, unknown>[]).forEach((item, i) => {
        const itemKey = d.key(item);
        for (const [k, v] of Object.entries(item)) {
          const inner = (d.each as Record<string, AnyDeclaration>)[k];
          walk(inner, v, `${path}[${itemKey}].${k}`, (s) => {
            const list = locate(s)[key] as Record<string, unknown>[];
            return list.find((x) => d.key(x) === itemKey) ?? list[i];
          }, k);
        }
      });
    } else if (isFields(d)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const inner = (d.fields as Record<string, AnyDeclaration>)[k];
        walk(
          inner,
          v,
          path === "" ? k : `${path}.${k}`,
          path === "" ? locate : (s) => locate(s)[key] as Record<string, unknown>,
          k,
        );
      }
    } else {
      out.push({
        path,
        leaf: d as Leaf<unknown>,
        set: (s) => {
          const holder = locate(s);
          const empty = Array.isArray(holder[key]) && (holder[key] as unknown[]).length === 0;
          // An empty list of lists (restrict, exclusive) gains a list.
          const schema = holder[key] as Record<string, unknown>;
          holder[key] = empty && ["restrict", "exclusive"].includes(key)
            ? [["another", "other"]]
            : key === "inputSchema" || key === "outputSchema"
            // A schema gains an argument (a change of words alone may mean nothing).
            ? { ...schema, properties: { ...(schema.properties ?? {}), novel: { type: "string" } } }
            : mutate(holder[key]);
        },
      });
    }
  };
  walk(ROOT_FIELDS, surface, "", (s) => s as unknown as Record<string, unknown>, "");
  return out;
}

Deno.test("changing any one field makes weir diff report a change", () => {
  let sites = 0;
  for (const surface of fullSurfaces()) {
    for (const site of leafSites(surface)) {
      if (site.leaf.ignored) continue;
      const old = copy(surface);
      const next = copy(surface);
      site.set(next);
      if (site.leaf.inSchema) {
        // Stated in the input schema and compared there: with no schema known
        // (a wrap file read alone) the rule itself must be compared.
        for (const t of [...old.tools, ...next.tools]) delete t.inputSchema;
      }
      const changes = diffSurfaces(old, next);
      assert.ok(changes.length > 0, `${surface.file} ${site.path}: a change reported none`);
      sites++;
    }
  }
  assert.ok(sites > 100, `${sites} fields changed one at a time`);
});

Deno.test("every value rule of a grant's argument is in its advertised input schema", () => {
  // The claim the declarations' inSchema rules rest on, for spec mode.
  for (const surface of [fullSurfaces()[0], ...exampleSurfaces()]) {
    if (surface.form !== "spec") continue;
    for (const tool of surface.tools.filter((t) => t.kind === "grant")) {
      const properties = tool.inputSchema!.properties as Record<string, Record<string, unknown>>;
      for (const a of tool.arguments.filter((a) => !a.name.includes(".") && a.in !== "body map")) {
        const property = properties[a.name];
        assert.ok(property, `${tool.name} ${a.name} is in the schema`);
        const schema = a.type.endsWith("[]") ? property.items as Record<string, unknown> : property;
        for (const [rule, value] of Object.entries(a.rules)) {
          const at = ["minItems", "maxItems"].includes(rule) ? property : schema;
          const stated = at[rule];
          if (rule === "enum") {
            for (const v of value as unknown[]) {
              assert.ok((stated as unknown[]).includes(v), `${tool.name} ${a.name} enum ${v}`);
            }
          } else if (rule === "maxLength" && a.encoding?.slashes !== "refuse") {
            assert.ok((stated as number) <= (value as number), `${tool.name} ${a.name} maxLength`);
          } else {
            assert.equal(stated, value, `${tool.name} ${a.name} ${rule}`);
          }
        }
      }
    }
  }
});

Deno.test("a field the declarations do not know is reported as a widening", () => {
  const [surface] = fullSurfaces();
  const next = copy(surface) as Surface & { novel?: string };
  next.novel = "x";
  const tool = next.tools.find((t) => t.kind === "grant")! as typeof next.tools[number] & {
    novel?: number;
  };
  tool.novel = 1;
  const changes = diffSurfaces(surface, next);
  assert.ok(
    changes.some((c) =>
      c.tool === "" && c.effect === "widen" && /novel .*declares nothing/.test(c.what)
    ),
    JSON.stringify(changes),
  );
  assert.ok(
    changes.some((c) =>
      c.tool === tool.name && c.effect === "widen" && /declares nothing/.test(c.what)
    ),
    JSON.stringify(changes),
  );
});

Deno.test("the tools list's renames and kinds are declared as one item", () => {
  assert.ok(TOOLS.pair && TOOLS.whole, "renames pair, a change of kind is judged whole");
});
