/**
 * The model of an AWS policy (`wrap ward mcp aws ssm|s3`, docs/aws.md), read
 * by ./aws.ts: types only, so the loader (./readers.ts, ./document.ts) names
 * them without importing the reader.
 *
 * @module
 */
import type { Diagnostic } from "./diagnostics.ts";
import type { SurfaceSettings } from "./model.ts";

/** Which AWS mode a policy file is for. */
export type AwsMode = "ssm" | "s3";

/** A convenience tool: reads one declared parameter, takes no arguments. */
export interface SsmConvenienceTool {
  /** Tool name, `get_<resource>` with `-` as `_` (e.g. `get_forgejo_read_token`). */
  tool: string;
  /** The exact parameter it reads. */
  parameter: string;
}

/** `wrap ward mcp aws ssm { … }`. */
export interface SsmPolicy {
  mode: "ssm";
  file: string;
  /** Server name: the file name without `.kdl` and `.mcp` (as the reference). */
  name: string;
  region: string;
  /** The exact parameter names that may be read, in declaration order. */
  parameters: string[];
  /** Whether `can get parameter` mints `get_parameter(name)`. */
  getParameter: boolean;
  /** The `can get <resource>` tools, sorted by name. */
  convenience: SsmConvenienceTool[];
  /** `surface ...` beside `wrap` (`{}` when absent). */
  surface: SurfaceSettings;
}

/** The three S3 grants, by tool name. */
export type S3Tool = "put_object" | "list_objects" | "get_object_url";

/** `wrap ward mcp aws s3 { … }`. */
export interface S3Policy {
  mode: "s3";
  file: string;
  /** Server name: the file name without `.kdl` and `.mcp` (as the reference). */
  name: string;
  region: string;
  bucket: string;
  /** Public root of the published objects, without a trailing `/`. */
  baseUrl: string;
  /** Key prefix with a trailing `/`, or `""`. */
  prefix: string;
  /** Largest object accepted, in decoded bytes. */
  maxBytes: number;
  /** Allowed media types, lower-case, in declaration order. */
  contentTypes: string[];
  /** The granted tools, sorted. */
  tools: S3Tool[];
  /** `surface ...` beside `wrap` (`{}` when absent). */
  surface: SurfaceSettings;
}

/** Either AWS policy. */
export type AwsPolicy = SsmPolicy | S3Policy;

/** The outcome of loading an AWS policy: the model when there is no error, and every diagnostic. */
export interface AwsLoadResult {
  mode: AwsMode;
  policy?: AwsPolicy;
  diagnostics: Diagnostic[];
}
