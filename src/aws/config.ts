/**
 * Where AWS requests go and with which credentials, read from the standard
 * AWS environment variables as the AWS CLI and SDKs read them:
 *
 * - credentials: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional
 *   `AWS_SESSION_TOKEN` (read at every call, so a rotation takes effect on the
 *   next call);
 * - endpoint: `AWS_ENDPOINT_URL_<SERVICE>` (`AWS_ENDPOINT_URL_SSM`,
 *   `AWS_ENDPOINT_URL_S3`), else `AWS_ENDPOINT_URL`, else the public AWS
 *   endpoint of the region; `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` ignores
 *   both variables ("Service-specific endpoints" in the AWS SDKs and Tools
 *   Reference Guide). With a configured endpoint S3 uses path-style addressing
 *   (`<endpoint>/<bucket>/<key>`), as local S3-protocol servers expect.
 *
 * Nothing here logs or returns a credential in a message.
 *
 * @module
 */
import { MIN_SECRET_LENGTH } from "../guard/secrets.ts";
import { plainHttpUrl } from "../guardfile/aws.ts";

/** Reads one environment variable (`undefined` when unset). */
export type EnvReader = (name: string) => string | undefined;

/** SigV4 credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * A missing or malformed AWS setting; the message names the variable, never its
 * value. Credentials read at call time carry their kind (src/errors/kinds.ts);
 * an endpoint variable is read at start-up and has none.
 */
export class AwsConfigError extends Error {
  /** The kind a call that meets this error fails with, when it is a call's failure. */
  readonly kind?: "aws_credentials_missing" | "aws_credentials_invalid";
  /** The message without its kind. */
  readonly detail: string;

  /**
   * Make the error.
   * @param detail what is wrong and what to set
   * @param kind the call's failure kind (the message then starts with `<kind>: `)
   */
  constructor(detail: string, kind?: "aws_credentials_missing" | "aws_credentials_invalid") {
    super(kind ? `${kind}: ${detail}` : detail);
    this.name = "AwsConfigError";
    this.detail = detail;
    if (kind) this.kind = kind;
  }
}

/**
 * Read the credentials.
 * @throws {AwsConfigError} when the key id or the secret is unset or empty
 */
export function credentialsFromEnv(env: EnvReader): AwsCredentials {
  const accessKeyId = env("AWS_ACCESS_KEY_ID") ?? "";
  const secretAccessKey = env("AWS_SECRET_ACCESS_KEY") ?? "";
  const missing = [
    ...(accessKeyId ? [] : ["AWS_ACCESS_KEY_ID"]),
    ...(secretAccessKey ? [] : ["AWS_SECRET_ACCESS_KEY"]),
  ];
  if (missing.length > 0) {
    throw new AwsConfigError(
      `set ${missing.join(" and ")} (and AWS_SESSION_TOKEN for ` +
        `temporary credentials) in the environment weir runs in`,
      "aws_credentials_missing",
    );
  }
  const sessionToken = env("AWS_SESSION_TOKEN") || undefined;
  for (
    const [name, value] of [["AWS_SECRET_ACCESS_KEY", secretAccessKey], [
      "AWS_SESSION_TOKEN",
      sessionToken,
    ]]
  ) {
    if (value !== undefined && value.length < MIN_SECRET_LENGTH) {
      throw new AwsConfigError(
        `${name} is shorter than ${MIN_SECRET_LENGTH} characters; weir refuses a secret ` +
          `it could not redact: set the credential's whole secret (an AWS secret access key ` +
          `is 40 characters; for a local stand-in see docs/aws.md#trying-it-locally)`,
        "aws_credentials_invalid",
      );
    }
  }
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** Where a service's requests go. */
export interface AwsEndpoint {
  /** Base URL, without a trailing `/`. */
  url: string;
  /** Which variable set it, or `"default"` for the public AWS endpoint. */
  source: string;
  /** S3 only: `<url>/<bucket>/<key>` (path style) rather than `<bucket>.<host>/<key>`. */
  pathStyle: boolean;
}

/**
 * Resolve a service's endpoint.
 *
 * @param service `"ssm"` or `"s3"`
 * @param region the policy's region
 * @param bucket S3 only: the bucket (for the default, virtual-hosted endpoint)
 * @throws {AwsConfigError} when a configured endpoint is not an absolute http(s) URL
 *   without query, fragment or credentials
 */
export function resolveEndpoint(
  service: "ssm" | "s3",
  region: string,
  env: EnvReader,
  bucket = "",
): AwsEndpoint {
  const ignore = (env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") ?? "").toLowerCase() === "true";
  const specific = `AWS_ENDPOINT_URL_${service.toUpperCase()}`;
  for (const name of ignore ? [] : [specific, "AWS_ENDPOINT_URL"]) {
    const value = env(name);
    if (!value) continue;
    const url = plainHttpUrl(value);
    if (!url) {
      throw new AwsConfigError(
        `${name} must be an absolute http(s) URL without query, fragment or credentials, ` +
          `e.g. http://127.0.0.1:4566`,
      );
    }
    return { url: url.href.replace(/\/+$/, ""), source: name, pathStyle: true };
  }
  if (service === "s3" && bucket.includes(".")) {
    // A dotted bucket name does not fit the wildcard TLS certificate of virtual hosting.
    return { url: `https://s3.${region}.amazonaws.com`, source: "default", pathStyle: true };
  }
  const host = service === "s3"
    ? `${bucket}.s3.${region}.amazonaws.com`
    : `${service}.${region}.amazonaws.com`;
  return { url: `https://${host}`, source: "default", pathStyle: false };
}
