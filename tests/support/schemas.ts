/**
 * Holding every response a test receives to the official MCP JSON schema of
 * its revision (`tests/fixtures/mcp-schema/<rev>/schema.json`, the official files), with
 * `@cfworker/json-schema`.
 *
 * A result is checked twice: the envelope against `JSONRPCResultResponse`,
 * and `result` against the method's own `#/$defs/<Name>Result`. An error is
 * checked against `JSONRPCErrorResponse`, and under 2026-07-28 also against
 * the revision's definition for its code (`UnsupportedProtocolVersionError`,
 * `HeaderMismatchError`, `InvalidParamsError`, ...), at the level that
 * definition describes (the whole message, or its `error` member).
 */
import { format, type Schema, Validator } from "@cfworker/json-schema";
import { AssertionError } from "node:assert/strict";

/** The two revisions the core serves. */
export type Revision = "2025-11-25" | "2026-07-28";
export const LEGACY: Revision = "2025-11-25";
export const MODERN: Revision = "2026-07-28";

// cfworker ignores formats it does not know; the schema marks base64 fields
// (`blob`, image/audio `data`) with `format: "byte"`, so teach it that one.
format.byte = (value: string) => value.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(value);

const ROOT = new URL("../fixtures/mcp-schema/", import.meta.url);

/** Result definitions both revisions name the same way. */
const SHARED_RESULTS: Record<string, string> = {
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
  "resources/list": "ListResourcesResult",
  "resources/templates/list": "ListResourceTemplatesResult",
  "resources/read": "ReadResourceResult",
  "prompts/list": "ListPromptsResult",
  "prompts/get": "GetPromptResult",
};

/** The result definition of each request method, by revision. */
const RESULTS: Record<Revision, Record<string, string>> = {
  "2025-11-25": { "initialize": "InitializeResult", "ping": "EmptyResult", ...SHARED_RESULTS },
  "2026-07-28": { "server/discover": "DiscoverResult", ...SHARED_RESULTS },
};

/** The error definition of each code, where the revision has one. */
const ERRORS: Record<Revision, Record<number, string>> = {
  "2025-11-25": {},
  "2026-07-28": {
    [-32700]: "ParseError",
    [-32600]: "InvalidRequestError",
    [-32601]: "MethodNotFoundError",
    [-32602]: "InvalidParamsError",
    [-32603]: "InternalError",
    [-32020]: "HeaderMismatchError",
    [-32021]: "MissingRequiredClientCapabilityError",
    [-32022]: "UnsupportedProtocolVersionError",
  },
};

const documents = new Map<Revision, { $defs: Record<string, Schema> }>();
const validators = new Map<string, Validator>();

function document(revision: Revision): { $defs: Record<string, Schema> } {
  let doc = documents.get(revision);
  if (!doc) {
    doc = JSON.parse(Deno.readTextFileSync(new URL(`${revision}/schema.json`, ROOT)));
    documents.set(revision, doc!);
  }
  return doc!;
}

function validatorFor(revision: Revision, name: string): Validator {
  const key = `${revision}#${name}`;
  let validator = validators.get(key);
  if (!validator) {
    const doc = document(revision);
    if (!(name in doc.$defs)) throw new Error(`schema ${revision} has no $defs/${name}`);
    validator = new Validator({ ...doc, $ref: `#/$defs/${name}` } as Schema, "2020-12", false);
    validators.set(key, validator);
  }
  return validator;
}

/**
 * Problems of `value` against `#/$defs/<name>` of a revision's schema.
 * @returns `[]` when it conforms, else `keywordLocation @ instanceLocation: error` lines
 */
export function problemsAgainst(revision: Revision, name: string, value: unknown): string[] {
  const result = validatorFor(revision, name).validate(value);
  if (result.valid) return [];
  return result.errors
    .filter((e) => e.error !== "A subschema had errors.")
    .map((e) => `${revision} $defs/${name}: ${e.instanceLocation}: ${e.error}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Every problem of one JSON-RPC response under a revision.
 *
 * @param method the request's method, needed to name a result's definition
 */
export function responseProblems(
  revision: Revision,
  response: unknown,
  method?: string,
): string[] {
  if (!isObject(response)) return [`${revision}: a response is a JSON object`];
  if ("result" in response) {
    const problems = problemsAgainst(revision, "JSONRPCResultResponse", response);
    // 2026-07-28: tools/call, resources/read and prompts/get may answer InputRequiredResult.
    const inputRequired = revision === "2026-07-28" && isObject(response.result) &&
      response.result.resultType === "input_required";
    const name = method === undefined
      ? undefined
      : inputRequired
      ? "InputRequiredResult"
      : RESULTS[revision][method];
    if (!name) {
      return [...problems, `${revision}: no result definition for method ${method}`];
    }
    return [...problems, ...problemsAgainst(revision, name, response.result)];
  }
  if ("error" in response) {
    const problems = problemsAgainst(revision, "JSONRPCErrorResponse", response);
    const code = isObject(response.error) ? response.error.code : undefined;
    const name = typeof code === "number" ? ERRORS[revision][code] : undefined;
    if (!name) return problems;
    const def = document(revision).$defs[name] as { properties?: Record<string, unknown> };
    const whole = def.properties !== undefined && "jsonrpc" in def.properties;
    return [...problems, ...problemsAgainst(revision, name, whole ? response : response.error)];
  }
  return [`${revision}: a response has "result" or "error"`];
}

/**
 * Assert that one JSON-RPC response conforms to the official schema of each
 * revision given (two for an answer that belongs to neither, e.g. a parse
 * error). Accepts the serialized text or the parsed value; returns the parsed value.
 *
 * @throws {AssertionError} listing every problem
 */
export function assertValidResponse<T = Record<string, unknown>>(
  revisions: Revision | readonly Revision[],
  response: unknown,
  method?: string,
): T {
  const value = typeof response === "string" ? JSON.parse(response) : response;
  const problems = (typeof revisions === "string" ? [revisions] : revisions)
    .flatMap((revision) => responseProblems(revision, value, method));
  if (problems.length > 0) {
    throw new AssertionError({
      message: `response does not conform to the MCP schema:\n  ${problems.join("\n  ")}\n` +
        `response: ${JSON.stringify(value).slice(0, 2000)}`,
    });
  }
  return value as T;
}
