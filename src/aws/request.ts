/**
 * One SigV4-signed AWS request (AWS Signature Version 4, "Signing AWS API
 * requests" in the IAM User Guide), signed by `npm:aws4fetch`, with a
 * deadline, a cap on the answer's size, no retries and no redirects followed:
 * a 3xx answer is refused as `upstream_redirect` naming its status and the
 * origin it pointed at, and a request that is not safe (S3 PUT, SSM's POST)
 * goes on a fresh connection, which `fetch` never re-sends
 * (src/outbound/once.ts).
 *
 * The payload is always signed: the canonical request carries the SHA-256 of
 * the body, and for S3 the `X-Amz-Content-Sha256` header carries it too (of
 * the empty string when there is no body), never `UNSIGNED-PAYLOAD`.
 *
 * @module
 */
import { clientFor, redirectRefusal, redirectTarget } from "../outbound/once.ts";
import { AwsClient } from "aws4fetch";
import { readAtMost, sha256Hex } from "../transport/bytes.ts";
import { Deadline } from "../outbound/deadline.ts";
import { connectFailureWords } from "../outbound/connect_failure.ts";
import { fetchHeadTooLarge, MAX_HEAD_BYTES } from "../outbound/fetch_head.ts";
import { clipText } from "../mcp/text.ts";
import { Redactor } from "../guard/secrets.ts";
import type { AwsCredentials, EnvReader } from "./config.ts";
import { upstreamTracing } from "../ops/trace_hooks.ts";
import { type ErrorKind, WeirError } from "../errors/kinds.ts";

/** What to send. */
export interface AwsRequest {
  /** SigV4 service name (`ssm`, `s3`). */
  service: string;
  region: string;
  /** The AWS action, for messages (`GetParameter`, `PutObject`, …). */
  action: string;
  method: "GET" | "HEAD" | "PUT" | "POST";
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /**
   * Whether the request changes something at AWS (`PutObject`): a timeout
   * after it was sent then says it may have taken effect. Reads (`GetParameter`,
   * `ListObjectsV2`, `HeadObject`) leave it unset.
   */
  writes?: boolean;
}

/** Limits of one request. */
export interface AwsLimits {
  /**
   * The call's deadline in milliseconds, counted from the start of the call
   * (see {@link sendAws}'s `started`); 0: none.
   */
  timeoutMs: number;
  /** Refuse answers larger than this many bytes. */
  maxResponseBytes: number;
}

/** An AWS answer, read whole. */
export interface AwsAnswer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/** The kinds an AWS call fails with (src/errors/kinds.ts). */
export type AwsCallKind = Extract<
  ErrorKind,
  | "aws_error"
  | "aws_timeout"
  | "aws_unreachable"
  | "aws_unexpected"
  | "aws_answer_too_large"
  | "upstream_redirect"
  | "cancelled"
>;

/**
 * A failed AWS call, as the caller may see it: the action, the status and the
 * AWS error code, with every credential redacted. Its kind gives the tool API
 * status (502: AWS refused or failed; 504: deadline; 499: cancelled).
 */
export class AwsCallError extends WeirError<AwsCallKind> {
  /**
   * Make the error.
   * @param kind what failed
   * @param detail the action and what happened, credentials already redacted
   */
  constructor(kind: AwsCallKind, detail: string, options: { location?: string } = {}) {
    super(kind, detail, options);
    this.name = "AwsCallError";
  }
}

/**
 * A redactor of the AWS secrets as the environment holds them now (the secret
 * access key and session token; not the key id, which is no secret): no
 * argument may hold one (src/guard/secret_arguments.ts). Unset ones are
 * skipped; the call then fails for want of credentials.
 */
export function awsSecrets(env: EnvReader): Redactor {
  const redactor = new Redactor();
  for (const name of ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]) {
    const value = env(name);
    if (value) redactor.add(value);
  }
  return redactor;
}

/** A redactor that knows the credentials of one call. */
export function credentialRedactor(credentials: AwsCredentials): Redactor {
  const redactor = new Redactor();
  redactor.add(credentials.secretAccessKey);
  if (credentials.sessionToken) redactor.add(credentials.sessionToken);
  redactor.add(credentials.accessKeyId);
  return redactor;
}

/**
 * Sign and send one request; read the answer up to `limits.maxResponseBytes`
 * (and its head up to 64 KiB, src/outbound/fetch_head.ts).
 *
 * The deadline is the call's: `limits.timeoutMs` from `started`, so the time
 * spent before the request (checks, decoding, hashing the payload) counts. A
 * request whose deadline passed before it could be sent is never sent, and
 * its timeout says so; a timeout after it was sent says whether it may have
 * taken effect ({@link AwsRequest.writes}).
 *
 * @param signal aborts the request (the caller went away)
 * @param started `performance.now()` at the start of the call (default: now)
 * @returns the answer, whatever its status
 * @throws {AwsCallError} when the endpoint cannot be reached, the deadline
 *   passes, or the answer is too large (messages carry no credential)
 */
export async function sendAws(
  request: AwsRequest,
  credentials: AwsCredentials,
  limits: AwsLimits,
  signal: AbortSignal,
  started: number = performance.now(),
): Promise<AwsAnswer> {
  // Nothing is signed or hashed for a call already out of time or cancelled.
  if (signal.aborted) throw new AwsCallError("cancelled", `${request.action} was cancelled`);
  if (limits.timeoutMs > 0 && performance.now() - started >= limits.timeoutMs) {
    throw notStarted(request, limits);
  }
  const client = new AwsClient({
    ...credentials,
    service: request.service,
    region: request.region,
    retries: 0,
  });
  const body = request.body ?? new Uint8Array();
  const headers = new Headers(request.headers);
  if (request.service === "s3") headers.set("x-amz-content-sha256", await sha256Hex(body));
  // With telemetry on, a CLIENT span whose traceparent is signed and sent with
  // the request (src/ops/trace_hooks.ts); no span or closure when off.
  const tracing = upstreamTracing();
  if (!tracing) {
    return await exchange(client, credentials, request, headers, body, limits, signal, started);
  }
  return await tracing.http(
    {
      method: request.method,
      host: new URL(request.url).host,
      aws: {
        service: request.service.toUpperCase(),
        action: request.action,
        region: request.region,
      },
    },
    headers,
    () => exchange(client, credentials, request, headers, body, limits, signal, started),
  );
}

/** What a failed write adds when its request may have reached AWS. */
const MAY_HAVE_TAKEN_EFFECT = "; the request may have been sent and may have taken effect";

/** The timeout of a call whose deadline passed before its request was sent. */
function notStarted(request: AwsRequest, limits: AwsLimits): AwsCallError {
  return new AwsCallError(
    "aws_timeout",
    `${request.action} did not start within ${limits.timeoutMs} ms (the call's deadline ` +
      `passed before its request could be sent); nothing was sent, and nothing will be`,
  );
}

/** Sign, send and read one request (see {@link sendAws}). */
async function exchange(
  client: AwsClient,
  credentials: AwsCredentials,
  request: AwsRequest,
  headers: Headers,
  body: Uint8Array,
  limits: AwsLimits,
  signal: AbortSignal,
  started: number,
): Promise<AwsAnswer> {
  // The call's deadline, for sending and for the answer's head and body
  // (src/outbound/deadline.ts): what is left of it after the work before.
  const left = limits.timeoutMs > 0
    ? Math.max(1, Math.ceil(started + limits.timeoutMs - performance.now()))
    : 0;
  const deadline = new Deadline(signal, left);
  let sent = false;
  const stopped = () => {
    const reason = deadline.signal.reason;
    if (reason instanceof DOMException && reason.name === "TimeoutError") {
      if (!sent) return notStarted(request, limits);
      return new AwsCallError(
        "aws_timeout",
        `${request.action} got no answer within ${limits.timeoutMs} ms; ` +
          (request.writes
            ? "the request was sent and may have taken effect"
            : "it changes nothing, so calling again is safe"),
      );
    }
    return new AwsCallError("cancelled", `${request.action} was cancelled`);
  };
  let response: Response;
  let bytes: Uint8Array | null;
  try {
    try {
      const signed = await client.sign(request.url, {
        method: request.method,
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : body as BodyInit,
      });
      // Work not started when the deadline passes never starts.
      deadline.signal.throwIfAborted();
      sent = true;
      // No redirect followed; a request that is not safe on a fresh connection,
      // which fetch never re-sends (src/outbound/once.ts).
      response = await fetch(signed, {
        signal: deadline.signal,
        redirect: "manual",
        ...clientFor(request.method),
      });
    } catch (error) {
      if (deadline.signal.aborted) throw stopped();
      // Fixed words only: fetch's own messages hold the URL.
      const why = connectFailureWords(error) ?? (error as Error).name;
      const variable = `AWS_ENDPOINT_URL_${request.service.toUpperCase()}`;
      throw new AwsCallError(
        "aws_unreachable",
        `${request.action}: the ${request.service} endpoint could not be reached (${why}); ` +
          `check ${variable} or AWS_ENDPOINT_URL when one is set (else the region), and that ` +
          `this host reaches it` + (request.writes ? MAY_HAVE_TAKEN_EFFECT : ""),
      );
    }
    if (await fetchHeadTooLarge(response)) {
      throw new AwsCallError(
        "aws_answer_too_large",
        `${request.action}: the answer's head is over ${MAX_HEAD_BYTES} bytes` +
          (request.writes ? " (the request was sent and may have taken effect)" : ""),
      );
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      // The caller hears the status; the target is for the audit line (query values and
      // the credentials redacted: an endpoint may echo the session token into it).
      throw new AwsCallError(
        "upstream_redirect",
        `${request.action} ${redirectRefusal(response.status)}`,
        {
          location: redirectTarget(
            response.headers.get("location"),
            request.url,
            credentialRedactor(credentials),
          ),
        },
      );
    }
    bytes = response.body
      ? await readAtMost(response.body, limits.maxResponseBytes, deadline.signal).catch(() => {
        if (deadline.signal.aborted) throw stopped();
        throw new AwsCallError(
          "aws_unreachable",
          `${request.action}: the answer was cut off` +
            (request.writes ? MAY_HAVE_TAKEN_EFFECT : ""),
        );
      })
      : new Uint8Array();
  } finally {
    deadline.clear();
  }
  if (bytes === null) {
    throw new AwsCallError(
      "aws_answer_too_large",
      `${request.action} answered more than ${limits.maxResponseBytes} bytes`,
    );
  }
  return { status: response.status, headers: response.headers, body: bytes };
}

/**
 * The error of a non-2xx answer: `aws_error: <Action> -> <status> <Code>: <Message>`,
 * the code and message taken from a JSON (`__type`, `message`) or XML
 * (`<Code>`, `<Message>`) error body, credentials redacted, at most 200 characters of message.
 */
export function answerError(
  request: Pick<AwsRequest, "action">,
  answer: AwsAnswer,
  redactor: Redactor,
): AwsCallError {
  const text = new TextDecoder().decode(answer.body);
  let code = "";
  let message = "";
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    code = String(json.__type ?? json.code ?? "").split("#").pop() ?? "";
    message = String(json.message ?? json.Message ?? "");
  } catch {
    code = /<Code>([^<]{0,100})<\/Code>/.exec(text)?.[1] ?? "";
    message = /<Message>([^<]{0,400})<\/Message>/.exec(text)?.[1] ?? "";
  }
  code = code || answer.headers.get("x-amzn-errortype")?.split(":")[0] || "";
  const detail = clipText(redactor.text(message).replace(/\s+/g, " ").trim(), 200);
  return new AwsCallError(
    "aws_error",
    `${request.action} -> ${answer.status}${code ? ` ${redactor.text(code)}` : ""}` +
      (detail ? `: ${detail}` : ""),
  );
}
