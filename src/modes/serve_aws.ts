/**
 * What the two AWS modes share at the edge: the tools `lint` lists, the
 * surface `describe` prints, and serving over stdio or HTTP with the same
 * routes, inbound checks (Origin, Host, bearer token, body cap) and log lines
 * as spec mode.
 *
 * @module
 */
import type { AwsPolicy } from "../guardfile/aws.ts";
import type { McpServer } from "../mcp/server.ts";
import { stderrLogger } from "../mcp/server.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { ssmTools } from "../aws/ssm.ts";
import { s3Tools } from "../aws/s3.ts";
import { resolveEndpoint } from "../aws/config.ts";
import type { ServedTool } from "./lint.ts";
import type { DescribedTool, Surface } from "./describe.ts";
import type { ServeOptions } from "./serve.ts";
import { runOn } from "./listen.ts";
import { processEnv, ssmServer } from "./serve_ssm.ts";
import { s3BodyCap, s3Server } from "./serve_s3.ts";

/** The AWS action each tool performs (lint `--methods` and describe print it). */
const ACTIONS: Record<string, string> = {
  put_object: "PutObject",
  list_objects: "ListObjectsV2",
  get_object_url: "HeadObject",
};

function toolsOf(policy: AwsPolicy): ToolSpec[] {
  return policy.mode === "ssm" ? ssmTools(policy) : s3Tools(policy);
}

/** The tools a policy serves, as lint lists them (method: the AWS action). */
export function awsServedTools(policy: AwsPolicy): ServedTool[] {
  return toolsOf(policy).map((t) => ({
    name: t.name,
    kind: "grant" as const,
    method: ACTIONS[t.name] ?? "GetParameter",
  })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The served surface of a policy, for `weir describe`. */
export function describeAws(policy: AwsPolicy): Surface & { policy: Record<string, unknown> } {
  const service = policy.mode === "ssm" ? "SSM" : "S3";
  const variable = `AWS_ENDPOINT_URL_${service}`;
  const fallback = resolveEndpoint(
    policy.mode,
    policy.region,
    () => undefined,
    "bucket" in policy ? policy.bucket : "",
  ).url;
  const tools: DescribedTool[] = toolsOf(policy).map((t) => {
    const schema = t.inputSchema as {
      properties?: Record<string, { type?: string }>;
      required?: string[];
    };
    const scope = policy.mode === "ssm"
      ? (t.name === "get_parameter"
        ? `name must be one of ${policy.parameters.map((p) => JSON.stringify(p)).join(", ")}`
        : `reads ${policy.convenience.find((c) => c.tool === t.name)?.parameter}`)
      : `bucket ${policy.bucket}${policy.prefix ? `, keys under ${policy.prefix}` : ""}`;
    return {
      name: t.name,
      kind: "grant",
      method: ACTIONS[t.name] ?? "GetParameter",
      path: scope,
      description: t.description,
      inputs: Object.entries(schema.properties ?? {}).map(([name, p]) => ({
        name,
        in: "argument",
        type: p.type ?? "any",
        required: schema.required?.includes(name) ?? false,
        constraints: [],
      })),
      destructive: false,
      inputSchema: t.inputSchema,
    };
  });
  const policyFields: Record<string, unknown> = policy.mode === "ssm"
    ? { mode: "aws-ssm", region: policy.region, parameters: policy.parameters }
    : {
      mode: "aws-s3",
      region: policy.region,
      bucket: policy.bucket,
      prefix: policy.prefix,
      baseUrl: policy.baseUrl,
      maxBytes: policy.maxBytes,
      contentTypes: policy.contentTypes,
    };
  return {
    server: policy.name,
    file: policy.file,
    upstream:
      `AWS ${service} in ${policy.region}: ${variable}, else AWS_ENDPOINT_URL, else ${fallback}`,
    auth:
      "SigV4 from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), read at each call",
    tools,
    policy: policyFields,
  };
}

/** Build the MCP server of a policy (the endpoint variables are read here). */
export function awsServer(
  policy: AwsPolicy,
  options: Pick<ServeOptions, "limits" | "log">,
): McpServer {
  const limits = options.limits
    ? { timeoutMs: options.limits.timeoutMs, maxResponseBytes: options.limits.maxResponseBytes }
    : undefined;
  const opts = { env: processEnv, limits, log: options.log };
  return policy.mode === "ssm" ? ssmServer(policy, opts) : s3Server(policy, opts);
}

/**
 * Serve an AWS policy until `signal` aborts (or, on stdio, input ends), on
 * the glue every mode shares (`listen.ts`); an S3 policy raises the body cap
 * to fit `max-bytes` base64-encoded.
 * @throws {import("../aws/config.ts").AwsConfigError} when an endpoint variable is malformed
 */
export async function runServeAws(policy: AwsPolicy, options: ServeOptions): Promise<void> {
  const log = options.log ?? stderrLogger;
  const server = awsServer(policy, { limits: options.limits, log });
  const endpoint = resolveEndpoint(
    policy.mode,
    policy.region,
    processEnv,
    "bucket" in policy ? policy.bucket : "",
  );
  log({
    level: "info",
    event: "aws_endpoint",
    mode: `aws-${policy.mode}`,
    region: policy.region,
    endpoint: endpoint.source,
  });
  await runOn(server, {
    ...options,
    oauth: undefined, // the AWS modes take no OAuth flags
    log,
    mode: `aws-${policy.mode}`,
    server: policy.name,
    tools: toolsOf(policy).length,
    maxBodyBytes: policy.mode === "s3" ? s3BodyCap(policy) : undefined,
  });
}
