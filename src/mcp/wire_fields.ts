/**
 * The fields a server lists as they are (a catalog entry's `title`, a
 * tool's `annotations`, a resource's `size`, `serverInfo`), checked at
 * construction against what both revisions' schemas allow, so the core never
 * lists what a client's schema check refuses (a tool with `"title": 5`, an
 * `initialize` with no `serverInfo.name`).
 *
 * The rules are `schema.json` of 2025-11-25 and 2026-07-28: `Tool`,
 * `ToolAnnotations`, `ToolExecution`, `Resource`, `ResourceTemplate`,
 * `Annotations`, `Prompt`, `PromptArgument`, `Implementation`, `Icon`,
 * written as a table (tests/mcp/wire_fields_test.ts holds it to the schema
 * files). A field neither schema defines is passed on untouched: both allow
 * more.
 *
 * @module
 */

/** What one field must be. */
type Rule =
  | "string"
  | "uri"
  | "boolean"
  | "integer"
  | "object"
  | "icons"
  | "strings"
  | "roles"
  | "priority"
  | { shape: string }
  | { oneOf: readonly string[] };

/** Field -> rule, per shape; `required` lists what must be there. */
const SHAPES: Readonly<
  Record<string, { fields: Readonly<Record<string, Rule>>; required: readonly string[] }>
> = {
  Tool: {
    fields: {
      name: "string",
      title: "string",
      description: "string",
      icons: "icons",
      annotations: { shape: "ToolAnnotations" },
      execution: { shape: "ToolExecution" },
      _meta: "object",
      inputSchema: "object",
      outputSchema: "object",
    },
    required: ["name"],
  },
  ToolAnnotations: {
    fields: {
      title: "string",
      readOnlyHint: "boolean",
      destructiveHint: "boolean",
      idempotentHint: "boolean",
      openWorldHint: "boolean",
    },
    required: [],
  },
  ToolExecution: {
    fields: { taskSupport: { oneOf: ["forbidden", "optional", "required"] } },
    required: [],
  },
  Resource: {
    fields: {
      uri: "string",
      name: "string",
      title: "string",
      description: "string",
      mimeType: "string",
      size: "integer",
      icons: "icons",
      annotations: { shape: "Annotations" },
      _meta: "object",
    },
    required: ["uri", "name"],
  },
  ResourceTemplate: {
    fields: {
      uriTemplate: "string",
      name: "string",
      title: "string",
      description: "string",
      mimeType: "string",
      icons: "icons",
      annotations: { shape: "Annotations" },
      _meta: "object",
    },
    required: ["uriTemplate", "name"],
  },
  Annotations: {
    fields: { audience: "roles", priority: "priority", lastModified: "string" },
    required: [],
  },
  Prompt: {
    fields: {
      name: "string",
      title: "string",
      description: "string",
      icons: "icons",
      _meta: "object",
    },
    required: ["name"],
  },
  PromptArgument: {
    fields: { name: "string", title: "string", description: "string", required: "boolean" },
    required: ["name"],
  },
  Implementation: {
    fields: {
      name: "string",
      version: "string",
      title: "string",
      description: "string",
      websiteUrl: "uri",
      icons: "icons",
    },
    required: ["name", "version"],
  },
  Icon: {
    fields: {
      src: "uri",
      mimeType: "string",
      sizes: "strings",
      theme: { oneOf: ["light", "dark"] },
    },
    required: ["src"],
  },
};

/** An absolute RFC 3986 URI: a scheme, then URI characters only (`format: "uri"`). */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9A-Fa-f]{2})*$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with `value` under `rule`, or `null`; `at` names where. */
function problem(rule: Rule, value: unknown, at: string): string | null {
  if (typeof rule === "object") {
    if ("shape" in rule) return shapeProblem(rule.shape, value, at);
    return typeof value === "string" && rule.oneOf.includes(value)
      ? null
      : `${at} must be one of ${rule.oneOf.map((v) => `"${v}"`).join(", ")}`;
  }
  switch (rule) {
    case "string":
      return typeof value === "string" ? null : `${at} must be a string`;
    case "boolean":
      return typeof value === "boolean" ? null : `${at} must be true or false`;
    case "uri":
      return typeof value === "string" && URI.test(value)
        ? null
        : `${at} must be an absolute URI (RFC 3986: a scheme, then only URI characters)`;
    case "integer":
      return Number.isInteger(value) ? null : `${at} must be a whole number`;
    case "object":
      return isObject(value) ? null : `${at} must be an object`;
    case "strings":
      return Array.isArray(value) && value.every((v) => typeof v === "string")
        ? null
        : `${at} must be an array of strings`;
    case "roles":
      return Array.isArray(value) && value.every((v) => v === "user" || v === "assistant")
        ? null
        : `${at} must be an array of "user" and "assistant"`;
    case "priority":
      return typeof value === "number" && value >= 0 && value <= 1
        ? null
        : `${at} must be a number from 0 to 1`;
    case "icons":
      if (!Array.isArray(value)) return `${at} must be an array of icons ({src, ...})`;
      for (let i = 0; i < value.length; i++) {
        const p = shapeProblem("Icon", value[i], `${at}[${i}]`);
        if (p) return p;
      }
      return null;
  }
}

/** `at` and `key` as one field path (`annotations.title`, `icons[0].src`). */
function join(at: string, key: string): string {
  return at === "" ? key : `${at}.${key}`;
}

/** What is wrong with an object of one of the {@link SHAPES}, or `null`. */
function shapeProblem(shape: string, value: unknown, at: string): string | null {
  const { fields, required } = SHAPES[shape];
  if (!isObject(value)) return `${at || "it"} must be an object`;
  for (const key of required) {
    if (value[key] === undefined) return `${join(at, key)} is required`;
  }
  for (const [key, rule] of Object.entries(fields)) {
    if (value[key] === undefined) continue;
    const p = problem(rule, value[key], join(at, key));
    if (p) return p;
  }
  return null;
}

/**
 * What a listed entry or `serverInfo` holds that the schemas refuse, as a
 * sentence naming the field, or `null` when it may be served as it is.
 * @param shape `Tool`, `Resource`, `ResourceTemplate`, `Prompt` or `Implementation`
 * @param at how the message names the entry (`tool "x"`, `serverInfo`)
 */
export function wireProblem(
  shape: "Tool" | "Resource" | "ResourceTemplate" | "Prompt" | "Implementation",
  value: unknown,
  at: string,
): string | null {
  const p = fieldProblem(shape, value);
  return p === null ? null : `${at}: ${p} (the MCP schema of both revisions)`;
}

function fieldProblem(shape: string, value: unknown): string | null {
  const p = shapeProblem(shape, value, "");
  if (p !== null || shape !== "Prompt") return p;
  const args = (value as Record<string, unknown>).arguments;
  if (args === undefined) return null;
  if (!Array.isArray(args)) return "arguments must be an array";
  for (let i = 0; i < args.length; i++) {
    const q = shapeProblem("PromptArgument", args[i], `arguments[${i}]`);
    if (q) return q;
  }
  return null;
}
