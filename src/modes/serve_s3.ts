/**
 * `weir serve-s3 FILE`: a one-bucket S3 publisher. The policy
 * (`wrap ward mcp aws s3 { … }`) becomes a catalog and dispatch
 * (`src/aws/s3.ts`), served on the same transports, inbound checks and log
 * lines as spec mode (see `serve_aws.ts`).
 *
 * @module
 */
import { McpServer, stderrLogger } from "../mcp/server.ts";
import type { S3Policy } from "../guardfile/aws.ts";
import { resolveEndpoint } from "../aws/config.ts";
import { createS3Host } from "../aws/s3.ts";
import { type AwsServerOptions, processEnv } from "./serve_ssm.ts";

/**
 * Build the MCP server of an S3 policy.
 * @throws {import("../aws/config.ts").AwsConfigError} when a configured endpoint variable is malformed
 */
export function s3Server(policy: S3Policy, options: AwsServerOptions = {}): McpServer {
  const env = options.env ?? processEnv;
  const log = options.log ?? stderrLogger;
  const endpoint = resolveEndpoint("s3", policy.region, env, policy.bucket);
  return new McpServer({
    ...createS3Host(policy, { env, endpoint, limits: options.limits, log }),
    log,
    around: options.around,
    stateKeys: options.stateKeys,
    schemaProfile: policy.surface.schemaProfile,
  });
}

/**
 * Largest inbound request an S3 policy needs: the base64 of `max-bytes`
 * plus room for the JSON-RPC envelope, the key and the media type (64 KiB).
 */
export function s3BodyCap(policy: S3Policy): number {
  return Math.max(1024 * 1024, Math.ceil(policy.maxBytes / 3) * 4 + 64 * 1024);
}
