/**
 * Small checks on one KDL node (argument counts, allowed properties, allowed
 * children), each reporting into {@link Diagnostics} with the node's path and
 * position, so the loader reads as a list of rules.
 *
 * @module
 */
import { type Diagnostics, type Located, located } from "./diagnostics.ts";
import type { KdlNode, KdlValue } from "./kdl.ts";

/** A node being read, with where it sits. */
export class NodeReader {
  readonly node: KdlNode;
  readonly at: Located;
  readonly diags: Diagnostics;

  constructor(node: KdlNode, diags: Diagnostics, parent?: Located) {
    this.node = node;
    this.diags = diags;
    this.at = located(node, parent);
  }

  get name(): string {
    return this.node.name;
  }

  error(message: string): void {
    this.diags.error(this.at, message);
  }

  warn(message: string): void {
    this.diags.warn(this.at, message);
  }

  /** Readers for the children, with this node as their parent. */
  children(): NodeReader[] {
    return this.node.children.map((c) => new NodeReader(c, this.diags, this.at));
  }

  /**
   * Refuse every child not named in `allowed` (message lists the allowed names).
   * @param kids the children to check (default: all of them)
   */
  onlyChildren(allowed: readonly string[], kids = this.children()): NodeReader[] {
    for (const kid of kids) {
      if (!allowed.includes(kid.name)) {
        kid.error(
          allowed.length === 0
            ? `"${this.name}" takes no block; remove "${kid.name}"`
            : `unknown node "${kid.name}" in ${this.name}${
              suggest(kid.name, allowed)
            }; remove it, or use one of ${allowed.map((a) => `"${a}"`).join(", ")}`,
        );
      }
    }
    return kids.filter((k) => allowed.includes(k.name));
  }

  /** Refuse any block at all. */
  noChildren(): void {
    if (this.node.children.length > 0) {
      this.error(`"${this.name}" takes no block: remove the { ... } after it`);
    }
  }

  /** Refuse properties not in `allowed`. */
  onlyProperties(allowed: readonly string[] = []): void {
    for (const key of Object.keys(this.node.properties)) {
      if (!allowed.includes(key)) {
        this.error(
          allowed.length === 0
            ? `"${this.name}" takes no properties; remove ${key}=`
            : `unknown property ${key}= on "${this.name}"${
              suggest(key, allowed)
            }; remove it, or use one of ${allowed.map((a) => `${a}=`).join(", ")}`,
        );
      }
    }
  }

  /** Check the argument count. @returns false (after reporting) when it is off */
  argCount(min: number, max: number, what: string): boolean {
    const n = this.node.values.length;
    if (n < min || n > max) {
      const want = min === max
        ? `exactly ${min}`
        : max === Infinity
        ? `at least ${min}`
        : `${min} to ${max}`;
      const fix = n > max
        ? `remove ${n - max === 1 ? "the extra one" : `the ${n - max} extra ones`}`
        : `add ${min - n === 1 && min === 1 ? "it" : "what is missing"}`;
      this.error(
        `"${this.name}" takes ${want} argument${
          max === 1 ? "" : "s"
        } (${what}); found ${n}: ${fix}`,
      );
      return false;
    }
    return true;
  }

  /** Argument `i` as a non-empty string, or `undefined` after reporting. */
  stringArg(i: number, what: string): string | undefined {
    const v = this.node.values[i];
    if (typeof v !== "string") {
      this.error(`${what} must be a quoted string, found ${show(v)}: write it in double quotes`);
      return undefined;
    }
    if (v === "") {
      this.error(`${what} must not be empty: write a value between the quotes`);
      return undefined;
    }
    return v;
  }

  /** Property `key` as a string (if present). */
  stringProp(key: string, what = `${key}=`): string | undefined {
    if (!(key in this.node.properties)) return undefined;
    const v = this.node.properties[key];
    if (typeof v !== "string" || v === "") {
      this.error(
        `${what} must be a non-empty quoted string, found ${
          show(v)
        }: write ${key}="..." with a value`,
      );
      return undefined;
    }
    return v;
  }

  /** Property `key` as a boolean (if present); `required=true` is accepted via the shim. */
  boolProp(key: string): boolean | undefined {
    if (!(key in this.node.properties)) return undefined;
    const v = this.node.properties[key];
    if (typeof v !== "boolean") {
      this.error(
        `${key}= must be #true or #false, found ${show(v)}: write ${key}=#true or drop it`,
      );
      return undefined;
    }
    return v;
  }

  /** Property `key` as a finite number (if present). */
  numberProp(key: string): number | undefined {
    if (!(key in this.node.properties)) return undefined;
    const v = this.node.properties[key];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      this.error(`${key}= must be a number (unquoted), found ${show(v)}: write it as ${key}=5`);
      return undefined;
    }
    return v;
  }
}

/** A value as the author would write it, for messages. */
export function show(v: KdlValue | undefined): string {
  if (v === undefined) return "nothing";
  if (v === null) return "#null";
  if (typeof v === "boolean") return v ? "#true" : "#false";
  return JSON.stringify(v);
}

/** Report every second and later node of the same name among `nodes`. */
export function onlyOnce(nodes: NodeReader[], name: string): NodeReader | undefined {
  const found = nodes.filter((n) => n.name === name);
  for (const extra of found.slice(1)) {
    extra.error(`"${name}" appears more than once; keep exactly one`);
  }
  return found[0];
}

/** Suggest the closest known name for a typo (edit distance <= 2). */
export function suggest(name: string, known: readonly string[]): string {
  let best = "";
  let bestDistance = 3;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best ? `; did you mean "${best}"?` : "";
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}
