/**
 * The SSM reader as a host of the MCP core: `get_parameter(name)` for the
 * general getter and one argument-less tool per convenience grant, each
 * reading exactly one declared parameter with `GetParameter` and
 * `WithDecryption: true` (AWS Systems Manager API Reference, "GetParameter";
 * JSON 1.1 protocol, `X-Amz-Target: AmazonSSM.GetParameter`).
 *
 * A name the policy does not declare is refused before anything is sent, so
 * AWS never sees the request; IAM bounds the principal independently. A
 * parameter's value appears only in the result of the call that named it:
 * never in a log line or an error.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { cleanDeep } from "../mcp/text.ts";
import {
  type CallContext,
  type Logger,
  type ServerOptions,
  stderrLogger,
  ToolError,
} from "../mcp/server.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import { structuredResult } from "../mcp/results.ts";
import type { SsmPolicy } from "../guardfile/aws.ts";
import { AwsCallError, awsSecrets } from "./request.ts";
import { refuseSecretArguments } from "../guard/secret_arguments.ts";
import {
  auditFinished,
  awsHost,
  type AwsHostOptions,
  DEFAULT_AWS_LIMITS,
  sendAwsChecked,
  toToolError,
} from "./host.ts";
import { WeirError } from "../errors/kinds.ts";

/** What every SSM tool answers (`structuredContent`); the OpenAPI export's response schema. */
export const SSM_OUTPUT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    name: { type: "string", description: "The parameter name" },
    type: { type: "string", description: "String, StringList or SecureString" },
    value: { type: "string", description: "The value (decrypted for a SecureString)" },
    version: { type: "integer", description: "The parameter's version number" },
  },
  required: ["name", "type", "value", "version"],
  additionalProperties: false,
};

/** The parameter types SSM has (GetParameter's `Parameter.Type`); any other answer is unexpected. */
const PARAMETER_TYPES: ReadonlySet<string> = new Set(["String", "StringList", "SecureString"]);

/** Only what differs from the MCP defaults (see `leanAnnotations` in src/guard/tools.ts). */
const READ_ANNOTATIONS = { readOnlyHint: true };

/**
 * The tools an SSM policy serves, sorted by name. Lean as spec mode's are: the
 * result's shape is said in the description, not repeated as an `outputSchema`
 * ({@link SSM_OUTPUT_SCHEMA} is what the OpenAPI export uses).
 */
export function ssmTools(policy: SsmPolicy): ToolSpec[] {
  const tools: ToolSpec[] = [];
  if (policy.getParameter) {
    tools.push({
      name: "get_parameter",
      title: "Get an SSM parameter",
      description: `Read one AWS SSM parameter (decrypted). Returns {name, type, value, version}.`,
      inputSchema: {
        type: "object",
        properties: {
          name: {
            type: "string",
            description: `One of: ${policy.parameters.map((p) => JSON.stringify(p)).join(", ")}.`,
          },
        },
        required: ["name"],
        additionalProperties: false,
      },
      annotations: READ_ANNOTATIONS,
    });
  }
  for (const c of policy.convenience) {
    tools.push({
      name: c.tool,
      title: `Get ${c.parameter}`,
      description: `Read the AWS SSM parameter ${JSON.stringify(c.parameter)} (decrypted). ` +
        `Returns {name, type, value, version}.`,
      inputSchema: { type: "object", additionalProperties: false },
      annotations: READ_ANNOTATIONS,
    });
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Build the core's host contract for an SSM policy.
 *
 * @returns the server options (name, instructions, catalog, dispatch, cache hints)
 */
export function createSsmHost(
  policy: SsmPolicy,
  options: AwsHostOptions,
): Pick<ServerOptions, "name" | "version" | "instructions" | "catalog" | "dispatch" | "cache"> {
  const limits = { ...DEFAULT_AWS_LIMITS, ...options.limits };
  const log = options.log ?? stderrLogger;
  const tools = ssmTools(policy);
  const fixed = new Map(policy.convenience.map((c) => [c.tool, c.parameter]));
  const declared = new Set(policy.parameters);

  const read = async (
    name: string,
    signal: AbortSignal,
    started: number,
  ): Promise<CallToolResult> => {
    const request = {
      service: "ssm",
      region: policy.region,
      action: "GetParameter",
      method: "POST" as const,
      url: `${options.endpoint.url}/`,
      headers: {
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": "AmazonSSM.GetParameter",
      },
      body: new TextEncoder().encode(JSON.stringify({ Name: name, WithDecryption: true })),
    };
    const answer = await sendAwsChecked(request, options.env, limits, signal, undefined, started);
    let parameter: Record<string, unknown> | undefined;
    try {
      const json = JSON.parse(new TextDecoder().decode(answer.body));
      parameter = json?.Parameter;
    } catch { /* reported below */ }
    const ok = parameter && typeof parameter === "object" && parameter.Name === name &&
      PARAMETER_TYPES.has(parameter.Type as string) && typeof parameter.Value === "string" &&
      Number.isSafeInteger(parameter.Version);
    if (!ok) {
      // Say nothing of the body: it may hold the value.
      throw new AwsCallError(
        "aws_unexpected",
        `GetParameter -> ${answer.status} did not answer a Parameter ` +
          `{Name, Type, Value, Version} for the name asked`,
      );
    }
    // Clean text (src/mcp/text.ts: a lone surrogate becomes U+FFFD) before the
    // text content is written, so it says what structuredContent says.
    const out: JsonObject = cleanDeep({
      name: parameter!.Name as string,
      type: parameter!.Type as string,
      value: parameter!.Value as string,
      version: parameter!.Version as number,
    });
    return structuredResult(out);
  };

  const dispatch = async (
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<CallToolResult> => {
    const started = performance.now();
    let parameter: string | undefined = fixed.get(tool);
    try {
      refuseSecretArguments(tool, awsSecrets(options.env), args);
      if (parameter === undefined) {
        if (tool !== "get_parameter" || !policy.getParameter) {
          throw new ToolError(`unknown tool "${tool}"`, { status: 404 });
        }
        const name = args.name;
        if (typeof name !== "string" || !declared.has(name)) {
          throw new WeirError(
            "policy_denied",
            `that parameter name is outside this policy; the names served are ` +
              `${
                policy.parameters.map((p) => JSON.stringify(p)).join(", ")
              } (nothing was sent to AWS)`,
            {
              status: 403,
              rule: "undeclared_parameter",
              reason: "parameter name not declared by the policy",
            },
          );
        }
        parameter = name;
      }
      const result = await read(parameter, ctx.signal, started);
      auditFinished(withParameter(log, parameter), tool, ctx, started);
      return result;
    } catch (error) {
      const refused = toToolError(error);
      auditFinished(withParameter(log, parameter), tool, ctx, started, refused);
      throw refused;
    }
  };

  return awsHost(
    policy.name,
    "This server reads exactly the AWS SSM parameters its policy names, and " +
      "nothing else. Values are secrets: use them for the task at hand, do not repeat them.",
    tools,
    dispatch,
  );
}

/** The logger, with the (declared, not secret) parameter name added to each line. */
function withParameter(log: Logger, parameter: string | undefined): Logger {
  return parameter === undefined ? log : (event) => log({ ...event, parameter });
}
