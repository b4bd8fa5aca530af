/**
 * The S3 publisher as a host of the MCP core: `put_object`, `list_objects`
 * and `get_object_url` on one bucket, under one key prefix (Amazon S3 API
 * Reference: "PutObject", "ListObjectsV2", "HeadObject"). There is no delete
 * tool and no way to name another bucket or a key outside the prefix.
 *
 * Keys are relative to the policy prefix and use a narrow character set
 * (letters, digits, `- _ . /`), so a key is a public URL path that needs no
 * escaping; `.`/`..`/empty segments and a leading `/` are refused. Every check
 * runs before a request is signed: a refused call writes nothing.
 *
 * The decoded bytes must match the media type (an image type carries that
 * image's signature) and are never markup, whatever their label (`sniff.ts`).
 *
 * `content_base64` is strict base64 (RFC 4648 section 4: standard alphabet,
 * padded, no whitespace or line breaks, zero padding bits); `max-bytes` is
 * measured on the decoded bytes, computed from the encoded length before
 * decoding.
 *
 * @module
 */
import { XMLParser } from "fast-xml-parser";
import type { JsonObject } from "../mcp/jsonrpc.ts";
import { cleanDeep, clipText } from "../mcp/text.ts";
import { type CallContext, type ServerOptions, stderrLogger, ToolError } from "../mcp/server.ts";
import type { CallToolResult, ToolSpec } from "../mcp/types.ts";
import { structuredResult } from "../mcp/results.ts";
import {
  type KeyFault,
  keyFault,
  S3_MAX_KEY_BYTES,
  type S3Policy,
  type S3Tool,
} from "../guardfile/aws.ts";
import { contentProblem } from "./sniff.ts";
import { READ_ONLY_REASON } from "../guardfile/surface.ts";
import { withheldStub } from "../guard/tools.ts";
import { AwsCallError, type AwsRequest, awsSecrets } from "./request.ts";
import { refuseSecretArguments, refuseSecretBytes } from "../guard/secret_arguments.ts";
import {
  auditFinished,
  awsHost,
  type AwsHostOptions,
  DEFAULT_AWS_LIMITS,
  sendAwsChecked,
  toToolError,
} from "./host.ts";
import { type KindRule, WeirError } from "../errors/kinds.ts";

/** Most keys one `list_objects` call returns (the reference's). */
export const LIST_MAX_KEYS = 200;

const OBJECT_PROPS: JsonObject = {
  key: {
    type: "string",
    description: "The key relative to the policy prefix: what key inputs take, as is",
  },
  object_key: {
    type: "string",
    description: "The full object key in the bucket (prefix included)",
  },
  url: { type: "string", description: "The public URL" },
  bytes: { type: "integer", description: "Size in bytes" },
};

const OBJECT_SCHEMA: JsonObject = {
  type: "object",
  properties: { ...OBJECT_PROPS, content_type: { type: "string" } },
  required: ["key", "object_key", "url", "bytes", "content_type"],
  additionalProperties: false,
};

/**
 * What each S3 tool answers (`structuredContent`), by tool; the OpenAPI
 * export's response schemas. Not listed per tool: the descriptions say the
 * shape in a few words (the lean surface of src/guard/tools.ts).
 */
export const S3_OUTPUT_SCHEMAS: Record<S3Tool, JsonObject> = {
  put_object: OBJECT_SCHEMA,
  get_object_url: OBJECT_SCHEMA,
  list_objects: {
    type: "object",
    properties: {
      objects: {
        type: "array",
        items: {
          type: "object",
          properties: OBJECT_PROPS,
          required: ["key", "object_key", "url", "bytes"],
          additionalProperties: false,
        },
      },
      truncated: { type: "boolean" },
      unlisted: {
        type: "integer",
        description: "Objects left out: their keys break the key rules, so no tool can name them",
      },
    },
    required: ["objects", "truncated"],
    additionalProperties: false,
  },
};

/** The tools an S3 policy serves, in the policy's order. */
export function s3Tools(policy: S3Policy): ToolSpec[] {
  const under = policy.prefix ? ` under the prefix "${policy.prefix}" (added for you)` : "";
  const specs: Record<S3Tool, ToolSpec> = {
    put_object: {
      name: "put_object",
      title: "Publish an asset",
      description:
        `Publish a file at a public URL: bucket ${policy.bucket}${under}. Send the bytes ` +
        `base64-encoded (standard alphabet, padded, no line breaks) in content_base64, at most ` +
        `${policy.maxBytes} bytes decoded. ` +
        `Overwrites an existing key; nothing can be deleted. Returns {key, object_key, url, bytes, ` +
        `content_type}.`,
      inputSchema: {
        type: "object",
        properties: {
          key: {
            type: "string",
            description: policy.prefix
              ? `Relative to the prefix "${policy.prefix}", which is added for you: e.g. ` +
                `reports/latency.png (not ${policy.prefix}reports/latency.png). Letters, digits, - _ . /`
              : "e.g. reports/latency.png: letters, digits, - _ . /",
          },
          content_base64: { type: "string" },
          content_type: {
            type: "string",
            description: `One of: ${policy.contentTypes.join(", ")}.`,
          },
        },
        required: ["key", "content_base64", "content_type"],
        additionalProperties: false,
      },
      annotations: { destructiveHint: false },
    },
    list_objects: {
      name: "list_objects",
      title: "List published assets",
      description: `List published objects${under}, optionally under a further prefix; at most ` +
        `${LIST_MAX_KEYS}. Returns {objects: [{key, object_key, url, bytes}], truncated}; each ` +
        `key is what get_object_url takes, as is (objects whose keys no tool can take are left ` +
        `out and counted in unlisted).`,
      inputSchema: {
        type: "object",
        // Optional, so it also takes null ("not given"), as spec mode's optional inputs do.
        properties: { prefix: { type: ["string", "null"] } },
        additionalProperties: false,
      },
      annotations: READ,
    },
    get_object_url: {
      name: "get_object_url",
      title: "Get an asset's public URL",
      description: `The public URL of a published object${under}; checks that it exists first. ` +
        `Returns {key, object_key, url, bytes, content_type}.`,
      inputSchema: {
        type: "object",
        properties: { key: { type: "string" } },
        required: ["key"],
        additionalProperties: false,
      },
      annotations: READ,
    },
  };
  // Read-only (surface read-only=#true or --read-only): put_object is listed as
  // a withheld stub saying so; the reads stay.
  return policy.tools.map((t) =>
    t === "put_object" && policy.surface.readOnly ? withheldStub(t, READ_ONLY_REASON) : specs[t]
  );
}

/** The audit rule of each way a key or prefix breaks the key rules. */
const KEY_RULES: Record<KeyFault, KindRule> = {
  empty: "empty_value",
  characters: "key_characters",
  separator: "separator",
  dot_segment: "dot_segment",
};

/** What the audit line of each refusal (nothing sent) adds to its rule. */
const REASONS: Partial<Record<KindRule, string>> = {
  empty_value: "an empty key, key segment or object",
  key_characters: "a key or prefix outside letters, digits, - _ . /",
  separator: "a key starting or ending with /",
  dot_segment: "a . or .. key segment",
  value_too_long: "a key over 1024 bytes with the prefix",
  media_type: "a content_type the policy does not list",
  content: "bytes that are markup or not what their type says",
  schema: "content_base64 is not strict base64",
  withheld: "read-only mode",
  size: "object over max-bytes",
};

/** Only what differs from the MCP defaults (see `leanAnnotations` in src/guard/tools.ts). */
const READ = { readOnlyHint: true };
/**
 * The decoded length of strict base64 text, or `undefined` when it is not
 * strict base64 (see the module doc). Linear and regex-light: a 1 MiB object
 * is checked in about a millisecond (a whole-text pattern took about 20 ms).
 */
export function strictBase64Length(text: string): number | undefined {
  if (text.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(text)) return undefined;
  const eq = text.indexOf("=");
  if (eq !== -1 && (eq < text.length - 2 || text.charCodeAt(text.length - 1) !== 61)) {
    return undefined;
  }
  const pad = eq === -1 ? 0 : text.length - eq;
  return (text.length / 4) * 3 - pad;
}

/**
 * Build the core's host contract for an S3 policy.
 *
 * @returns the server options (name, instructions, catalog, dispatch, cache hints)
 */
export function createS3Host(
  policy: S3Policy,
  options: AwsHostOptions,
): Pick<ServerOptions, "name" | "version" | "instructions" | "catalog" | "dispatch" | "cache"> {
  const limits = { ...DEFAULT_AWS_LIMITS, ...options.limits };
  const log = options.log ?? stderrLogger;
  const tools = s3Tools(policy);
  const granted = new Set<string>(policy.tools);
  const endpoint = options.endpoint;
  const bucketUrl = endpoint.pathStyle ? `${endpoint.url}/${policy.bucket}` : endpoint.url;
  const publicUrl = (key: string) => `${policy.baseUrl}/${key}`;
  /** An object as every tool answers it: `key` is what key inputs take (a round trip). */
  const entry = (objectKey: string, bytes: number) => ({
    key: objectKey.slice(policy.prefix.length),
    object_key: objectKey,
    url: publicUrl(objectKey),
    bytes,
  });

  /** The full key for a caller's key, or a refusal naming the rule broken. */
  const resolveKey = (raw: unknown): string => {
    const key = typeof raw === "string" ? raw : "";
    const problem = keyFault(key);
    if (problem) {
      const outside = key.startsWith("/") || key.split("/").includes("..");
      throw new WeirError(
        "policy_denied",
        `key ${JSON.stringify(clipText(key, 200))} ${problem.text}` +
          (outside && policy.prefix
            ? `; it would leave the prefix "${policy.prefix}", the only place this server writes`
            : "") +
          " (nothing was sent); send a key relative to the prefix, of letters, digits and " +
          '- _ . /, such as "img/logo.png"',
        { status: 400, rule: KEY_RULES[problem.fault] },
      );
    }
    const full = policy.prefix + key;
    const size = new TextEncoder().encode(full).length;
    if (size > S3_MAX_KEY_BYTES) {
      throw new WeirError(
        "policy_denied",
        `the key is ${size} bytes with its prefix, over S3's ${S3_MAX_KEY_BYTES} (nothing was sent)`,
        { status: 400, rule: "value_too_long" },
      );
    }
    return full;
  };

  /** One signed request under the call's deadline (counted from `started`). */
  const call = (
    request: AwsRequest,
    signal: AbortSignal,
    started: number,
    ok?: (status: number) => boolean,
  ) => sendAwsChecked(request, options.env, limits, signal, ok, started);
  const base = { service: "s3", region: policy.region };

  const put = async (
    args: Record<string, unknown>,
    signal: AbortSignal,
    started: number,
  ): Promise<JsonObject> => {
    const key = resolveKey(args.key);
    const type = String(args.content_type ?? "").trim().toLowerCase();
    if (!policy.contentTypes.includes(type)) {
      throw new WeirError(
        "policy_denied",
        `content type ${JSON.stringify(clipText(String(args.content_type), 100))} ` +
          `is outside this policy (allowed: ${
            policy.contentTypes.join(", ")
          }); nothing was written`,
        { status: 400, rule: "media_type" },
      );
    }
    const text = typeof args.content_base64 === "string" ? args.content_base64 : "";
    const length = strictBase64Length(text);
    if (length === undefined) {
      throw new WeirError(
        "invalid_base64",
        `content_base64 is not strict base64 (standard alphabet A-Z a-z 0-9 + /, ` +
          `padded with =, no whitespace or line breaks); nothing was written`,
        { status: 400 },
      );
    }
    if (length === 0) {
      throw new WeirError(
        "policy_denied",
        `refusing to publish an empty object; send at least one byte`,
        { status: 400, rule: "empty_value" },
      );
    }
    if (length > policy.maxBytes) {
      throw new WeirError(
        "too_large",
        `the object is ${length} bytes decoded, over this policy's max-bytes of ` +
          `${policy.maxBytes}; nothing was written`,
        { status: 413 },
      );
    }
    let body: Uint8Array;
    try {
      body = Uint8Array.fromBase64(text, { lastChunkHandling: "strict" });
    } catch {
      throw new WeirError(
        "invalid_base64",
        `content_base64 has non-zero padding bits (not canonical base64); nothing was written`,
        { status: 400 },
      );
    }
    // The bytes as published: no AWS secret written into the object either.
    refuseSecretBytes("put_object", awsSecrets(options.env), 'argument "content_base64"', body);
    const problem = contentProblem(type, body);
    if (problem) {
      throw new WeirError("policy_denied", `${problem}; nothing was written`, {
        status: 400,
        rule: "content",
      });
    }
    await call(
      {
        ...base,
        action: "PutObject",
        method: "PUT",
        url: `${bucketUrl}/${key}`,
        headers: { "content-type": type },
        body,
        writes: true,
      },
      signal,
      started,
    );
    return { ...entry(key, body.length), content_type: type };
  };

  const list = async (
    args: Record<string, unknown>,
    signal: AbortSignal,
    started: number,
  ): Promise<JsonObject> => {
    const sub = typeof args.prefix === "string" ? args.prefix : "";
    const problem = keyFault(sub, { listing: true });
    if (problem) {
      throw new WeirError(
        "policy_denied",
        `prefix ${JSON.stringify(clipText(sub, 200))} ${problem.text} (nothing was sent); ` +
          `send a relative prefix of letters, digits and - _ . /, or none`,
        { status: 400, rule: KEY_RULES[problem.fault] },
      );
    }
    const prefix = policy.prefix + sub;
    const query = new URLSearchParams({
      "list-type": "2",
      "max-keys": String(LIST_MAX_KEYS),
      prefix,
    });
    const answer = await call(
      { ...base, action: "ListObjectsV2", method: "GET", url: `${bucketUrl}?${query}` },
      signal,
      started,
    );
    const xml = new XMLParser({ parseTagValue: false, isArray: (name) => name === "Contents" })
      .parse(new TextDecoder().decode(answer.body)) as {
        ListBucketResult?: {
          Contents?: { Key?: unknown; Size?: unknown }[];
          IsTruncated?: unknown;
        };
      };
    const result = xml?.ListBucketResult;
    if (!result) {
      throw new AwsCallError("aws_unexpected", `ListObjectsV2 did not answer a ListBucketResult`);
    }
    const under = (result.Contents ?? [])
      .filter((c) => typeof c.Key === "string" && c.Key.startsWith(prefix))
      .slice(0, LIST_MAX_KEYS);
    // A key written behind weir's back may break the key rules (a space, "a//b", a folder
    // marker "dir/"): no tool takes it back, and its URL would not be one; left out, counted.
    const named = under.filter((c) => !keyFault((c.Key as string).slice(policy.prefix.length)));
    const objects = named.map((c) => entry(c.Key as string, Number(c.Size) || 0));
    const unlisted = under.length - named.length;
    // What the endpoint wrote goes into the result: a credential it echoes is redacted.
    return answer.redactor.deep({
      objects,
      truncated: String(result.IsTruncated) === "true",
      ...(unlisted > 0 ? { unlisted } : {}),
    }) as JsonObject;
  };

  const head = async (
    args: Record<string, unknown>,
    signal: AbortSignal,
    started: number,
  ): Promise<JsonObject> => {
    const key = resolveKey(args.key);
    const answer = await call(
      { ...base, action: "HeadObject", method: "HEAD", url: `${bucketUrl}/${key}` },
      signal,
      started,
      (s) => (s >= 200 && s < 300) || s === 404,
    );
    if (answer.status === 404) {
      throw new WeirError(
        "not_found",
        `no object at key ${JSON.stringify(key.slice(policy.prefix.length))}` +
          (policy.prefix ? ` (object key ${JSON.stringify(key)})` : ""),
        { status: 404 },
      );
    }
    return {
      ...entry(key, Number(answer.headers.get("content-length")) || 0),
      // A header the endpoint wrote: a credential it echoes is redacted.
      content_type: answer.redactor.text(answer.headers.get("content-type") ?? ""),
    };
  };

  const handlers: Record<S3Tool, typeof put> = {
    put_object: put,
    list_objects: list,
    get_object_url: head,
  };

  const dispatch = async (
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<CallToolResult> => {
    const started = performance.now();
    try {
      if (!granted.has(tool)) throw new ToolError(`unknown tool "${tool}"`, { status: 404 });
      refuseSecretArguments(tool, awsSecrets(options.env), args);
      if (tool === "put_object" && policy.surface.readOnly) {
        throw new WeirError(
          "verb_withheld",
          `"${tool}" is withheld and reaches nothing: ${READ_ONLY_REASON}`,
          {
            status: 403,
            structuredContent: { error: "verb_withheld", tool, reason: READ_ONLY_REASON },
          },
        );
      }
      // Clean text (src/mcp/text.ts) before the text content is written, so it
      // says what structuredContent says (the core cleans only the latter's strings).
      const out = cleanDeep(await handlers[tool as S3Tool](args, ctx.signal, started));
      const objectLog: typeof log = typeof out.key === "string"
        ? (event) => log({ ...event, key: out.key, bytes: out.bytes })
        : log;
      auditFinished(objectLog, tool, ctx, started);
      return structuredResult(out);
    } catch (error) {
      const refused = toToolError(error);
      auditFinished(log, tool, ctx, started, refused, REASONS);
      throw refused;
    }
  };

  return awsHost(
    policy.name,
    `This server publishes files to one S3 bucket (${policy.bucket}), at public ` +
      `URLs under ${policy.baseUrl}/${policy.prefix}. Only these media types: ` +
      `${policy.contentTypes.join(", ")}. Nothing it publishes can be deleted through it.`,
    tools,
    dispatch,
  );
}
