/**
 * `weir serve-ssm FILE`: an exact-parameter AWS SSM reader. The policy
 * (`wrap ward mcp aws ssm { … }`) becomes a catalog and dispatch
 * (`src/aws/ssm.ts`), served on the same transports, inbound checks and log
 * lines as spec mode (see `serve_aws.ts`).
 *
 * @module
 */
import { type Logger, McpServer, type RequestWrapper, stderrLogger } from "../mcp/server.ts";
import type { SsmPolicy } from "../guardfile/aws.ts";
import { type EnvReader, resolveEndpoint } from "../aws/config.ts";
import type { AwsLimits } from "../aws/request.ts";
import { createSsmHost } from "../aws/ssm.ts";
import type { StateKeys } from "../mcp/signed_state.ts";

/** Options of {@link ssmServer}. */
export interface AwsServerOptions {
  /** The environment (credentials at every call; the endpoint once, here). */
  env?: EnvReader;
  limits?: Partial<AwsLimits>;
  log?: Logger;
  /** Telemetry's request wrapper (src/ops/telemetry.ts), when on. */
  around?: RequestWrapper;
  /** The key service that signs cursors (src/mcp/signed_state.ts). */
  stateKeys?: StateKeys;
}

/** The process environment. */
export const processEnv: EnvReader = (name) => Deno.env.get(name);

/**
 * Build the MCP server of an SSM policy.
 * @throws {import("../aws/config.ts").AwsConfigError} when a configured endpoint variable is malformed
 */
export function ssmServer(policy: SsmPolicy, options: AwsServerOptions = {}): McpServer {
  const env = options.env ?? processEnv;
  const log = options.log ?? stderrLogger;
  const endpoint = resolveEndpoint("ssm", policy.region, env);
  return new McpServer({
    ...createSsmHost(policy, { env, endpoint, limits: options.limits, log }),
    log,
    around: options.around,
    stateKeys: options.stateKeys,
    schemaProfile: policy.surface.schemaProfile,
  });
}
