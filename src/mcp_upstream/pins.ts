/**
 * `--pin TOOL.ARG=VALUE` on a wrapped tool: how a pin fits a definition, the
 * definition weir serves for a pinned tool, and the pins put into a call.
 *
 * A pin is the one change weir makes to a caller's arguments, and it is made
 * by key and visibly: the served definition no longer lists the pinned
 * argument at all (as the guardfile form's `pin` does: the server sets it, so
 * the caller is not invited to fill it in); every call gets the pinned value;
 * a caller who sends the argument anyway is refused, told the server sets it,
 * and nothing is sent; the arguments with the pins in place must still
 * satisfy the upstream's own schema, or the call is refused. A pin fits a
 * plain `properties` schema only: a root keyword that may name the argument
 * elsewhere (`allOf`, `patternProperties`, ... src/mcp_upstream/overrides.ts
 * {@link COMBINING}) would keep it named where weir does not remove it.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { compileSchema, type ValidateFn } from "../mcp/schema.ts";
import { COMBINING, PINNED_HELD } from "./overrides.ts";

/** A number as JSON spells it (RFC 8259 section 6). */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** A pin as injected: the value converted to the argument's JSON type. */
export interface InjectedPin {
  arg: string;
  value: string | number | boolean;
}

/** The pins of one tool, ready for calls. */
export interface ToolPins {
  pins: InjectedPin[];
  /** The upstream's own input schema, which the pinned arguments must satisfy. */
  validate: ValidateFn;
}

/**
 * Fit the `--pin` values of one tool to its definition.
 * @param pins argument -> value as written
 * @returns the pins, or a sentence saying why they do not fit (the tool is then not served)
 */
export function fitPins(
  tool: string,
  definition: ToolSpec,
  pins: ReadonlyMap<string, string>,
): InjectedPin[] | string {
  const properties = (definition.inputSchema?.properties ?? {}) as Record<string, unknown>;
  const root = (definition.inputSchema ?? {}) as Record<string, unknown>;
  const combining = COMBINING.filter((k) => Object.hasOwn(root, k));
  const fitted: InjectedPin[] = [];
  for (const [arg, written] of pins) {
    const property = Object.hasOwn(properties, arg)
      ? properties[arg] as Record<string, unknown>
      : undefined;
    if (!property || typeof property !== "object") {
      const declared = Object.keys(properties);
      return `--pin ${tool}.${arg}: the tool declares no argument "${arg}" ` +
        `(it declares: ${declared.length ? declared.join(", ") : "none"})`;
    }
    if (combining.length > 0) {
      return `--pin ${tool}.${arg}: the tool's inputSchema uses ${combining.join(", ")} at its ` +
        `root, which may name "${arg}" where weir would not remove it from the served schema; ` +
        `weir pins arguments of a plain properties schema only`;
    }
    const types = [property.type].flat().filter((t) => typeof t === "string");
    let value: string | number | boolean = written;
    if (types.includes("string") || types.length === 0) value = written;
    else if (types.includes("integer") || types.includes("number")) {
      // JSON's number grammar only: Number() would also take "", " 2", "0x10" and "Infinity".
      value = JSON_NUMBER.test(written) ? Number(written) : NaN;
      if (!Number.isFinite(value) || (!types.includes("number") && !Number.isInteger(value))) {
        return `--pin ${tool}.${arg}=${written}: the argument is ${types.join(" or ")}, ` +
          `and ${JSON.stringify(written)} is not one`;
      }
    } else if (types.includes("boolean")) {
      if (written !== "true" && written !== "false") {
        return `--pin ${tool}.${arg}: the argument is boolean; pin true or false`;
      }
      value = written === "true";
    } else {
      return `--pin ${tool}.${arg}: the argument is ${types.join(" or ")}; pins hold strings, ` +
        `numbers and booleans`;
    }
    fitted.push({ arg, value });
  }
  return fitted;
}

/**
 * The upstream's definition as served: the pinned arguments neither listed
 * nor required (weir supplies them; a caller who sends one is refused).
 */
export function pinnedDefinition(definition: ToolSpec, pins: readonly InjectedPin[]): ToolSpec {
  if (pins.length === 0) return definition;
  const pinned = new Set(pins.map((p) => p.arg));
  const schema = definition.inputSchema;
  const inputSchema: JsonObject = { ...schema };
  const properties = schema?.properties;
  if (typeof properties === "object" && properties !== null && !Array.isArray(properties)) {
    const kept: JsonObject = {};
    for (const [name, value] of Object.entries(properties)) {
      if (pinned.has(name)) continue;
      Object.defineProperty(kept, name, {
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    inputSchema.properties = kept;
  }
  if (Array.isArray(schema?.required)) {
    inputSchema.required = schema.required.filter((r) => !pinned.has(r as string));
  }
  return { ...definition, inputSchema: inputSchema as ToolSpec["inputSchema"] };
}

/**
 * The pinned arguments of a tool, each with why a caller may not send it
 * (the core's `heldArguments`: a closed schema refuses them as undeclared).
 */
export function heldPins(pins: readonly InjectedPin[]): ReadonlyMap<string, string> {
  return new Map(pins.map((p) => [p.arg, PINNED_HELD]));
}

/** Prepare a tool's fitted pins for calls (the upstream's schema compiled once). */
export function toolPins(definition: ToolSpec, pins: InjectedPin[]): ToolPins {
  return { pins, validate: compileSchema(definition.inputSchema ?? { type: "object" }) };
}

/** The arguments to send, or why a call's arguments cannot carry the pins. */
export type Pinned =
  | { ok: true; sent: JsonObject }
  | {
    ok: false;
    /** The pinned argument the caller sent another value for, if that is why. */
    arg?: string;
    message: string;
  };

/**
 * The arguments to send: the caller's, with each pin in place. A caller who
 * sends a pinned argument is refused (whatever the value: the served schema
 * does not list it).
 * @param args the arguments as validated
 * @param spelled the same arguments with numbers as the caller spelled them, if any differ
 * @returns what to send, or why the call is refused (nothing is sent then)
 */
export function withPins(
  tool: string,
  args: Record<string, unknown>,
  spelled: Record<string, unknown> | undefined,
  pinned: ToolPins,
): Pinned {
  const sent = copyOwn(spelled ?? args);
  for (const pin of pinned.pins) {
    if (Object.hasOwn(args, pin.arg)) {
      return {
        ok: false,
        arg: pin.arg,
        message: `argument "${pin.arg}" of tool "${tool}" ${PINNED_HELD}`,
      };
    }
    Object.defineProperty(sent, pin.arg, {
      value: pin.value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  const check = copyOwn(args);
  for (const pin of pinned.pins) {
    Object.defineProperty(check, pin.arg, { value: pin.value, enumerable: true, writable: true });
  }
  const problems = pinned.validate(check);
  if (problems.length > 0) {
    return {
      ok: false,
      message: `with the operator's pins in place the arguments no longer match the tool's ` +
        `own schema (${problems.slice(0, 3).join("; ")}); nothing was sent`,
    };
  }
  return { ok: true, sent: sent as JsonObject };
}

/** A shallow copy keeping every own key as a data property (`__proto__` included). */
function copyOwn(source: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    Object.defineProperty(out, key, {
      value: source[key],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}
