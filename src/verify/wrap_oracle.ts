/**
 * What `weir verify` holds a forwarded call to, for a guardfile that wraps an
 * MCP server (docs/wrapping-mcp-servers.md): the MCP server is asked for
 * exactly the proxied tool's own name; each argument arrives under its
 * upstream name with the value sent, inside every rule the file states
 * (restrict globs, bounds, lengths, pattern, enum); pinned arguments arrive
 * as pinned; nothing else arrives (no hidden or unknown argument).
 *
 * @module
 */
import type { ArgumentRule, ProxyTool } from "../guardfile/mcp_wrap_model.ts";
import { compileGlob } from "../guardfile/glob.ts";
import type { RecordedCall } from "./standin.ts";
import { sameJson } from "./spec_oracle.ts";

/** A pinned argument as verify set it: the MCP server's name and the value it must receive. */
export type PinnedArgument = [string, unknown];

const glob = new Map<string, (v: string) => boolean>();
const matches = (pattern: string, value: string) => {
  let m = glob.get(pattern);
  if (!m) glob.set(pattern, m = compileGlob(pattern));
  return m(value);
};

/**
 * A key as a careless reader folds it: NFKC, lower case, no separators or invisible characters.
 *
 * @example
 * ```ts
 * import { folded } from "./wrap_oracle.ts";
 * if (folded("\uff2fwner") !== "owner" || folded("OWNER\u200b") !== "owner") throw new Error();
 * ```
 */
export function folded(key: string): string {
  return key.normalize("NFKC").toLowerCase().replace(/[\s_.\-\u200b-\u200f\u2060\ufeff]/g, "");
}

/** Whether a rule narrows its argument (a twin of it could carry what the rule refuses). */
function constrains(rule: ArgumentRule): boolean {
  return rule.restrict !== undefined || rule.minimum !== undefined || rule.maximum !== undefined ||
    rule.minLength !== undefined || rule.maxLength !== undefined || rule.pattern !== undefined ||
    rule.enum !== undefined;
}

/** The rules an argument's forwarded value breaks, in words. */
function broken(rule: ArgumentRule, value: unknown): string[] {
  const out: string[] = [];
  const name = `argument "${rule.name}"`;
  if (typeof value === "number") {
    if (rule.minimum !== undefined && value < rule.minimum) {
      out.push(`${name} ${value} is below ${rule.minimum}`);
    }
    if (rule.maximum !== undefined && value > rule.maximum) {
      out.push(`${name} ${value} is above ${rule.maximum}`);
    }
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (rule.minLength !== undefined && length < rule.minLength) {
      out.push(`${name} is shorter than ${rule.minLength}`);
    }
    if (rule.maxLength !== undefined && length > rule.maxLength) {
      out.push(`${name} is longer than ${rule.maxLength}`);
    }
    if (rule.pattern !== undefined && !new RegExp(rule.pattern, "u").test(value)) {
      out.push(`${name} does not match its pattern`);
    }
    if (rule.restrict && !rule.restrict.some((g) => matches(g, value))) {
      out.push(`${name} ${JSON.stringify(value)} is outside its restrict`);
    }
  } else if (rule.restrict && value !== undefined) {
    out.push(
      `${name} arrived as ${
        value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`
      }, past its restrict`,
    );
  }
  if (rule.enum && !rule.enum.some((e) => sameJson(e, value))) {
    out.push(`${name} ${JSON.stringify(value)} is not one of its values`);
  }
  return out;
}

/**
 * Check one call the MCP server received for a call of `proxy` with `args`.
 * @param declared the argument names the served tool declares
 * @param admitsOthers the served schema admits keys it does not declare (weir forwards
 *   every key the schema admits: docs/wrapping-mcp-servers.md)
 * @param pins the arguments weir supplies for this tool
 * @returns the violations found (empty: the call is the one the file allows)
 */
export function checkWrapCall(
  proxy: ProxyTool,
  args: Record<string, unknown>,
  call: RecordedCall,
  declared: ReadonlySet<string>,
  admitsOthers: boolean,
  pins: PinnedArgument[],
): string[] {
  const problems: string[] = [];
  if (call.name !== proxy.upstream) {
    problems.push(`the MCP server was asked for "${call.name}", not "${proxy.upstream}"`);
  }
  const received = (typeof call.arguments === "object" && call.arguments !== null &&
      !Array.isArray(call.arguments))
    ? call.arguments as Record<string, unknown>
    : {};
  const expected = new Map<string, { value: unknown; rule?: ArgumentRule; pinned: boolean }>();
  for (const [key, value] of Object.entries(args)) {
    const rule = proxy.arguments.find((a) => a.name === key);
    if (rule?.hide || !declared.has(key)) continue;
    expected.set(rule?.upstream ?? key, { value, rule, pinned: false });
  }
  for (const [name, value] of pins) expected.set(name, { value, pinned: true });
  // Keys a reader that folds case, width or separators could take for a constrained one.
  const guarded = new Map<string, string>();
  for (const a of proxy.arguments) if (constrains(a)) guarded.set(folded(a.upstream), a.upstream);
  for (const [name] of pins) guarded.set(folded(name), name);
  for (const [key, value] of Object.entries(received)) {
    const want = expected.get(key);
    if (!want) {
      const twin = guarded.get(folded(key));
      if (twin !== undefined && twin !== key) {
        problems.push(
          `"${key}", a twin of the constrained argument "${twin}", reached the MCP server ` +
            `(a server that folds case or width in keys reads it past the rule)`,
        );
      } else if (!declared.has(key) && !admitsOthers) {
        problems.push(`argument "${key}" reached the MCP server, and the tool does not serve it`);
      } else if (!sameJson(value, args[key])) {
        problems.push(`argument "${key}" arrived as ${clip(JSON.stringify(value))}, not as sent`);
      }
      continue;
    }
    if (!sameJson(value, want.value)) {
      problems.push(
        want.pinned
          ? `pinned argument "${key}" arrived as ${JSON.stringify(value)}, not as pinned`
          : `argument "${key}" arrived as ${clip(JSON.stringify(value))}, sent as ${
            clip(JSON.stringify(want.value))
          }`,
      );
    }
    if (want.rule) problems.push(...broken(want.rule, value));
  }
  for (const [key, want] of expected) {
    if (!Object.hasOwn(received, key) && (want.pinned || want.value !== null)) {
      problems.push(
        want.pinned ? `pinned argument "${key}" is missing` : `argument "${key}" was dropped`,
      );
    }
  }
  return problems;
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
