/**
 * How a `--pin TOOL.ARG=VALUE` value is typed, as docs/wrapping-mcp-servers.md
 * ("How a pin's value is typed") states it: by the argument's JSON Schema
 * `type` in the upstream's definition, never by the look of the text.
 */
import assert from "node:assert/strict";
import {
  fitPins,
  heldPins,
  type InjectedPin,
  pinnedDefinition,
  toolPins,
  withPins,
} from "../../src/mcp_upstream/pins.ts";
import { PINNED_HELD } from "../../src/mcp_upstream/overrides.ts";
import type { ToolSpec } from "../../src/mcp/types.ts";

function tool(properties: Record<string, unknown>): ToolSpec {
  return { name: "t", inputSchema: { type: "object", properties } } as ToolSpec;
}

function fit(property: Record<string, unknown>, written: string) {
  const fitted = fitPins("t", tool({ x: property }), new Map([["x", written]]));
  return typeof fitted === "string" ? fitted : fitted[0].value;
}

Deno.test("pins: a string argument gets the text as written, quotes and all", () => {
  assert.equal(fit({ type: "string" }, "42"), "42");
  assert.equal(fit({ type: "string" }, '"42"'), '"42"');
  assert.equal(fit({ type: "string" }, "true"), "true");
  assert.equal(fit({ type: "string" }, ""), "");
  // No type, or string among the types: the text as written.
  assert.equal(fit({}, "7"), "7");
  assert.equal(fit({ type: ["string", "number"] }, "7"), "7");
});

Deno.test("pins: number and integer arguments get a JSON number, or the tool is not served", () => {
  assert.equal(fit({ type: "number" }, "2.5"), 2.5);
  assert.equal(fit({ type: "integer" }, "2"), 2);
  assert.equal(fit({ type: "integer" }, "1e3"), 1000);
  assert.match(String(fit({ type: "integer" }, "2.5")), /is integer, and "2\.5" is not one/);
  assert.match(String(fit({ type: "number" }, "abc")), /is number, and "abc" is not one/);
  // JSON's number grammar, not JavaScript's Number(): "" is not 0, "0x10" not 16.
  for (const written of ["Infinity", "", " 2", "0x10", "+1", "1.", ".5", "1e999"]) {
    assert.match(String(fit({ type: "number" }, written)), /is not one/, JSON.stringify(written));
  }
  assert.equal(fit({ type: "number" }, "-0.5e-2"), -0.005);
});

Deno.test("pins: a boolean argument takes exactly true or false", () => {
  assert.equal(fit({ type: "boolean" }, "true"), true);
  assert.equal(fit({ type: "boolean" }, "false"), false);
  for (const written of ["TRUE", "1", "yes", ""]) {
    assert.match(String(fit({ type: "boolean" }, written)), /is boolean; pin true or false/);
  }
});

Deno.test("pins: objects, arrays and null cannot be pinned; an undeclared argument neither", () => {
  for (const type of ["object", "array", "null"]) {
    assert.match(
      String(fit({ type }, "{}")),
      /pins hold strings, numbers and booleans/,
      type,
    );
  }
  const fitted = fitPins("t", tool({ a: { type: "string" } }), new Map([["b", "1"]]));
  assert.equal(fitted, '--pin t.b: the tool declares no argument "b" (it declares: a)');
});

Deno.test("pins: the served definition lists a pinned argument nowhere; a schema whose root may name it elsewhere does not fit", () => {
  const definition = {
    name: "t",
    inputSchema: {
      type: "object",
      properties: { site: { type: "string" }, q: { type: "string" } },
      required: ["site", "q"],
      additionalProperties: false,
    },
  } as ToolSpec;
  const fitted = fitPins("t", definition, new Map([["site", "prod"]]));
  assert.ok(Array.isArray(fitted));
  const served = pinnedDefinition(definition, fitted);
  assert.deepEqual(served.inputSchema, {
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
    additionalProperties: false,
  });
  assert.deepEqual(definition.inputSchema?.required, ["site", "q"], "the upstream's own is kept");
  assert.equal(pinnedDefinition(definition, []), definition);
  for (const keyword of ["allOf", "anyOf", "patternProperties", "dependentRequired", "$ref"]) {
    const combined = {
      name: "t",
      inputSchema: { type: "object", properties: { site: {} }, [keyword]: {} },
    } as ToolSpec;
    assert.match(
      String(fitPins("t", combined, new Map([["site", "x"]]))),
      new RegExp(`uses ${keyword.replace("$", "\\$")} at its root.*plain properties schema only`),
      keyword,
    );
  }
});

Deno.test("pins: a call that sends a pinned argument is refused whatever its value; one that leaves it out gets it", () => {
  const definition = {
    name: "t",
    inputSchema: { type: "object", properties: { site: { type: "string" }, q: {} } },
  } as ToolSpec;
  const fitted = fitPins("t", definition, new Map([["site", "prod"]])) as InjectedPin[];
  const pins = toolPins(definition, fitted);
  for (const site of ["prod", "staging", null]) {
    const refused = withPins("t", { q: 1, site }, undefined, pins);
    assert.equal(refused.ok, false);
    assert.equal(
      !refused.ok && refused.message,
      'argument "site" of tool "t" is set by the server, not by the caller (the operator ' +
        "pinned its value): leave it out",
    );
  }
  assert.deepEqual(withPins("t", { q: 1 }, undefined, pins), {
    ok: true,
    sent: { q: 1, site: "prod" },
  });
  assert.deepEqual([...heldPins(fitted)], [["site", PINNED_HELD]]);
});
