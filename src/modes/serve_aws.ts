/**
 * What the two AWS modes share at the edge: the tools `lint` lists, the
 * surface `describe` prints, and serving over stdio or HTTP with the same
 * routes, inbound checks (Origin, Host, bearer token, body cap), log lines
 * and reload (SIGHUP, `POST /admin/reload`) as spec mode.
 *
 * @module
 */
import type { StateKeys } from "../mcp/signed_state.ts";
import type { AwsPolicy } from "../guardfile/aws.ts";
import type { McpServer, RequestWrapper } from "../mcp/server.ts";
import { startTelemetry } from "../ops/telemetry.ts";
import { stderrLogger } from "../mcp/server.ts";
import type { ToolSpec } from "../mcp/types.ts";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { SSM_OUTPUT_SCHEMA, ssmTools } from "../aws/ssm.ts";
import { S3_OUTPUT_SCHEMAS, s3Tools } from "../aws/s3.ts";
import { WITHHELD_META } from "../guard/tools.ts";
import type { S3Tool } from "../guardfile/aws.ts";
import { AwsConfigError, resolveEndpoint } from "../aws/config.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import { type LoadOutcome, Reloader, type Surface as ReloadSurface } from "../ops/reload.ts";
import type { ServedTool } from "./lint.ts";
import type { Surface, Tool } from "../surface/model.ts";
import { emptyTool, settingsOf, sortByName, withheldSurface } from "../surface/spec.ts";
import { schemaRules, schemaType } from "../surface/wrap.ts";
import { errorsOf, loadGuardfileFile, type ServeOptions } from "./serve.ts";
import { runOn } from "../serving/listen.ts";
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
  return toolsOf(policy).map((t) =>
    t._meta?.[WITHHELD_META]
      ? { name: t.name, kind: "withheld" as const, method: "WITHHELD" }
      : { name: t.name, kind: "grant" as const, method: ACTIONS[t.name] ?? "GetParameter" }
  ).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Each tool's `outputSchema` (for `weir describe --format openapi`). */
export function awsOutputSchemas(policy: AwsPolicy): Record<string, JsonObject> {
  return Object.fromEntries(
    toolsOf(policy).map((t) => [
      t.name,
      policy.mode === "ssm" ? SSM_OUTPUT_SCHEMA : S3_OUTPUT_SCHEMAS[t.name as S3Tool],
    ]),
  );
}

/** The served surface of a policy, for `weir describe` (the surface model, form `aws`). */
export function describeAws(policy: AwsPolicy): Surface {
  const service = policy.mode === "ssm" ? "SSM" : "S3";
  const variable = `AWS_ENDPOINT_URL_${service}`;
  const fallback = resolveEndpoint(
    policy.mode,
    policy.region,
    () => undefined,
    "bucket" in policy ? policy.bucket : "",
  ).url;
  const tools: Tool[] = toolsOf(policy).map((t) => {
    if (t._meta?.[WITHHELD_META]) {
      return withheldSurface(t.name, (t.description ?? "").replace(/^NOT AVAILABLE: /, ""));
    }
    const schema = t.inputSchema as {
      properties?: Record<string, JsonObject>;
      required?: string[];
    };
    const scope = policy.mode === "ssm"
      ? (t.name === "get_parameter"
        ? `name must be one of ${policy.parameters.map((p) => JSON.stringify(p)).join(", ")}`
        : `reads ${policy.convenience.find((c) => c.tool === t.name)?.parameter}`)
      : `bucket ${policy.bucket}${policy.prefix ? `, keys under ${policy.prefix}` : ""}`;
    const reads = t.annotations?.readOnlyHint === true;
    const tool = emptyTool(t.name, "grant");
    tool.access = reads
      ? { reads: true, why: `${ACTIONS[t.name] ?? "GetParameter"} reads` }
      : { reads: false, why: `${ACTIONS[t.name]} writes` };
    const within = policy.mode === "ssm"
      ? {
        parameters: t.name === "get_parameter"
          ? [...policy.parameters]
          : policy.convenience.filter((c) => c.tool === t.name).map((c) => c.parameter),
      }
      : { bucket: policy.bucket, prefix: policy.prefix };
    tool.operation = { kind: "aws", action: ACTIONS[t.name] ?? "GetParameter", scope, within };
    if (t.description !== undefined) tool.description = t.description;
    tool.arguments = Object.entries(schema.properties ?? {}).map(([name, p]) => ({
      name,
      in: "argument",
      sentAs: name,
      type: schemaType(p),
      required: schema.required?.includes(name) ?? false,
      rules: schemaRules(p),
      restrict: [],
      served: true,
    }));
    if (t.inputSchema) tool.inputSchema = t.inputSchema;
    return tool;
  });
  const policyFields: JsonObject = policy.mode === "ssm"
    ? { region: policy.region, parameters: policy.parameters }
    : {
      region: policy.region,
      bucket: policy.bucket,
      prefix: policy.prefix,
      baseUrl: policy.baseUrl,
      maxBytes: policy.maxBytes,
      contentTypes: policy.contentTypes,
    } as JsonObject;
  return {
    form: "aws",
    server: policy.name,
    file: policy.file,
    upstream: {
      kind: "aws",
      service,
      region: policy.region,
      endpoint: `${variable}, else AWS_ENDPOINT_URL, else ${fallback}`,
    },
    credentials: [{
      scheme: "sigv4",
      sentAs: "SigV4 signature",
      prefix: "",
      // Read at each call; the secret key (and a session token) sign, never sent.
      value: {
        from: [{
          provider: "env",
          address: "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)",
        }],
      },
    }],
    headers: [],
    callers: { inboundTokens: [] },
    settings: settingsOf(policy.surface),
    texts: { resources: [], prompts: [], icons: [] },
    readableResources: [],
    aws: { mode: policy.mode === "ssm" ? "aws-ssm" : "aws-s3", policy: policyFields },
    tools: sortByName(tools),
  };
}

/** Build the MCP server of a policy (the endpoint variables are read here). */
export function awsServer(
  policy: AwsPolicy,
  options: Pick<ServeOptions, "limits" | "log"> & {
    around?: RequestWrapper;
    stateKeys?: StateKeys;
  },
): McpServer {
  const limits = options.limits
    ? { timeoutMs: options.limits.timeoutMs, maxResponseBytes: options.limits.maxResponseBytes }
    : undefined;
  const opts = {
    env: processEnv,
    limits,
    log: options.log,
    around: options.around,
    stateKeys: options.stateKeys,
  };
  return policy.mode === "ssm" ? ssmServer(policy, opts) : s3Server(policy, opts);
}

/** A policy's surface for the reloader: its server, tool names and describe. */
function awsSurface(
  policy: AwsPolicy,
  options: Parameters<typeof awsServer>[1],
): ReloadSurface {
  return {
    server: awsServer(policy, options),
    tools: toolsOf(policy).map((t) => t.name),
    describe: () => describeAws(policy),
  };
}

/**
 * Re-read a policy file for a reload, with `weir lint`'s loader. Refused (the
 * old surface keeps serving): any error, a file that is now another mode, an
 * S3 policy whose `max-bytes` needs a larger body cap than the one bound at
 * start, a malformed endpoint variable.
 */
async function reloadAws(
  file: string,
  started: AwsPolicy,
  options: Parameters<typeof awsServer>[1] & Pick<ServeOptions, "surface">,
): Promise<LoadOutcome> {
  const loaded = await loadGuardfileFile(file, options.surface);
  const errors = [
    ...(loaded.readError ? [loaded.readError] : []),
    ...errorsOf(loaded.diagnostics).map((d) => formatDiagnostic(file, d)),
  ];
  if (errors.length > 0) return { errors };
  const policy = loaded.policy;
  if (!policy || policy.mode !== started.mode) {
    return {
      errors: [
        `${file}: no longer an AWS ${started.mode.toUpperCase()} policy; restart weir to serve another kind of file`,
      ],
    };
  }
  if (
    policy.mode === "s3" && started.mode === "s3" && s3BodyCap(policy) > s3BodyCap(started)
  ) {
    return {
      errors: [
        `${file}: max-bytes ${policy.maxBytes} needs a larger request body cap than the one ` +
        `set at start (max-bytes ${started.maxBytes}); restart weir to raise it`,
      ],
    };
  }
  try {
    return { surface: awsSurface(policy, options) };
  } catch (error) {
    if (error instanceof AwsConfigError) return { errors: [error.message] };
    throw error;
  }
}

/**
 * Serve an AWS policy until `signal` aborts (or, on stdio, input ends), on
 * the glue every mode shares (`listen.ts`); an S3 policy raises the body cap
 * to fit `max-bytes` base64-encoded.
 * @throws {import("../aws/config.ts").AwsConfigError} when an endpoint variable is malformed
 */
export async function runServeAws(policy: AwsPolicy, options: ServeOptions): Promise<void> {
  const log = options.log ?? stderrLogger;
  // OpenTelemetry SERVER spans and the duration metric when OTEL_* turn it on (src/ops/telemetry.ts).
  const names = { current: new Set(toolsOf(policy).map((t) => t.name)) };
  const telemetry = await startTelemetry(policy.name, () => names.current, undefined, log);
  const build = {
    limits: options.limits,
    log,
    around: telemetry?.around,
    stateKeys: options.state?.keys,
    surface: options.surface,
  };
  const surface = awsSurface(policy, build);
  const file = options.file;
  // SIGHUP (and POST /admin/reload) re-read the file as weir lint does.
  let served: McpServer | Reloader = surface.server;
  if (file !== undefined) {
    const reloader = new Reloader(surface, () => reloadAws(file, policy, build), log);
    reloader.onSwap((next) => (names.current = new Set(next.tools)));
    served = reloader;
  }
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
  await runOn(served, {
    ...options,
    oauth: undefined, // the AWS modes take no OAuth flags
    log,
    mode: `aws-${policy.mode}`,
    server: policy.name,
    tools: toolsOf(policy).length,
    maxBodyBytes: policy.mode === "s3" ? s3BodyCap(policy) : undefined,
  }).finally(() => telemetry?.shutdown());
}
