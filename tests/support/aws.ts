/**
 * Real AWS-protocol servers for tests, each checking every request's SigV4
 * signature with an implementation independent of weir's (`aws4fetch`): the
 * AWS SDK's own signer, `@smithy/signature-v4`, recomputes the signature from
 * the request as received, and a request whose signature, scope, credential,
 * date, session token or payload hash does not match is refused (403), as AWS
 * refuses it.
 *
 * - {@link startSsmEndpoint}: serves `GetParameter` (JSON 1.1 protocol,
 *   `X-Amz-Target: AmazonSSM.GetParameter`) from a table of parameters.
 * - {@link startS3}: `npm:s3rver` (a real S3-protocol server, which does not
 *   check signatures itself) behind a verifying hop; only verified requests
 *   reach it.
 *
 * Both bind 127.0.0.1 on a port chosen at run time and record every request
 * they receive, verified or not.
 */
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import S3rver from "s3rver";

/** The credentials the servers accept. */
export interface TestCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Credentials for tests: long and distinctive, so a leak is easy to find. */
export const CREDENTIALS: Required<TestCredentials> = {
  accessKeyId: "AKIAWEIRTEST00000001",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYWEIRTESTKEY",
  sessionToken: "IQoJb3JpZ2luX2VjEWEIRSESSIONTOKEN0123456789abcdef",
};

/** The environment a weir process needs to reach `endpoint` with {@link CREDENTIALS}. */
export function awsEnv(
  vars: Record<string, string>,
  credentials: TestCredentials = CREDENTIALS,
): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    ...(credentials.sessionToken ? { AWS_SESSION_TOKEN: credentials.sessionToken } : {}),
    ...vars,
  };
}

/** One request as a test server saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  body: Uint8Array;
  /** Why the signature check refused it, or `undefined` when it passed. */
  refused?: string;
}

async function hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Check one request's SigV4 signature (header form) with `@smithy/signature-v4`.
 * @returns `undefined` when valid, else the reason
 */
export async function verifySigV4(
  request: { method: string; url: URL; headers: Headers; body: Uint8Array },
  expect: { credentials: TestCredentials; region: string; service: string },
): Promise<string | undefined> {
  const auth = request.headers.get("authorization") ?? "";
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/
      .exec(auth);
  if (!m) return "no AWS4-HMAC-SHA256 Authorization header";
  const [, keyId, day, region, service, signedList, signature] = m;
  if (keyId !== expect.credentials.accessKeyId) return "unknown access key id";
  if (region !== expect.region) return `scope region ${region}, expected ${expect.region}`;
  if (service !== expect.service) return `scope service ${service}, expected ${expect.service}`;
  const amzDate = request.headers.get("x-amz-date") ?? "";
  const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!d || amzDate.slice(0, 8) !== day) return "missing or inconsistent X-Amz-Date";
  const signingDate = new Date(Date.UTC(+d[1], +d[2] - 1, +d[3], +d[4], +d[5], +d[6]));
  if (Math.abs(Date.now() - signingDate.getTime()) > 15 * 60_000) return "request time too skewed";
  const signed = signedList.split(";");
  for (const need of ["host", "x-amz-date"]) {
    if (!signed.includes(need)) return `${need} is not signed`;
  }
  const token = request.headers.get("x-amz-security-token");
  if ((token ?? undefined) !== expect.credentials.sessionToken) return "wrong session token";
  if (token && !signed.includes("x-amz-security-token")) return "session token not signed";
  const payloadHeader = request.headers.get("x-amz-content-sha256");
  if (expect.service === "s3") {
    if (!payloadHeader || !signed.includes("x-amz-content-sha256")) {
      return "x-amz-content-sha256 is missing or unsigned";
    }
    if (payloadHeader !== await hex(request.body)) return "payload hash does not match the body";
  }
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = request.headers.get(name);
    if (value === null) return `signed header ${name} is absent`;
    headers[name] = value;
  }
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of request.url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: expect.credentials.accessKeyId,
      secretAccessKey: expect.credentials.secretAccessKey,
      ...(expect.credentials.sessionToken ? { sessionToken: expect.credentials.sessionToken } : {}),
    },
    region: expect.region,
    service: expect.service,
    sha256: Sha256,
    uriEscapePath: expect.service !== "s3",
    applyChecksum: false,
  });
  const recomputed = await signer.sign({
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    port: Number(request.url.port) || undefined,
    path: request.url.pathname,
    query,
    headers,
    body: request.body.length > 0 ? request.body : undefined,
  }, { signingDate, signableHeaders: new Set(signed) });
  const mine = /Signature=([0-9a-f]{64})/.exec(
    String((recomputed.headers as Record<string, string>).authorization ?? ""),
  )?.[1];
  const theirList = /SignedHeaders=([a-z0-9;-]+)/.exec(
    String((recomputed.headers as Record<string, string>).authorization ?? ""),
  )?.[1];
  if (theirList !== signedList) return `signed header list differs (${theirList})`;
  return mine === signature ? undefined : "signature does not match";
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in order. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** An SSM parameter the endpoint serves. */
export interface TestParameter {
  type: "String" | "StringList" | "SecureString";
  value: string;
  version?: number;
}

async function receive(request: Request): Promise<SeenRequest> {
  const url = new URL(request.url);
  return {
    method: request.method,
    path: url.pathname,
    search: url.search,
    headers: request.headers,
    body: new Uint8Array(await request.arrayBuffer()),
  };
}

function listening(server: Deno.HttpServer<Deno.NetAddr>): string {
  return `http://127.0.0.1:${server.addr.port}`;
}

/**
 * An SSM endpoint: `POST /` with `X-Amz-Target: AmazonSSM.GetParameter`,
 * `Content-Type: application/x-amz-json-1.1` and `{"Name", "WithDecryption": true}`.
 * A SecureString asked for without decryption answers its ciphertext stand-in.
 */
export function startSsmEndpoint(
  parameters: Record<string, TestParameter>,
  options: { region?: string; credentials?: TestCredentials } = {},
): TestServer {
  const requests: SeenRequest[] = [];
  const expect = {
    credentials: options.credentials ?? CREDENTIALS,
    region: options.region ?? "us-east-1",
    service: "ssm",
  };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/x-amz-json-1.1" },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const seen = await receive(req);
    requests.push(seen);
    const refused = await verifySigV4(
      { method: req.method, url: new URL(req.url), headers: req.headers, body: seen.body },
      expect,
    );
    if (refused) {
      seen.refused = refused;
      return json(403, { __type: "InvalidSignatureException", message: refused });
    }
    if (req.method !== "POST" || seen.path !== "/") {
      seen.refused = "not POST /";
      return json(400, { __type: "UnknownOperationException" });
    }
    if (req.headers.get("x-amz-target") !== "AmazonSSM.GetParameter") {
      seen.refused = "wrong X-Amz-Target";
      return json(400, { __type: "UnknownOperationException" });
    }
    if (req.headers.get("content-type") !== "application/x-amz-json-1.1") {
      seen.refused = "wrong content type";
      return json(400, { __type: "SerializationException" });
    }
    let input: { Name?: unknown; WithDecryption?: unknown };
    try {
      input = JSON.parse(new TextDecoder().decode(seen.body));
    } catch {
      seen.refused = "body is not JSON";
      return json(400, { __type: "SerializationException" });
    }
    const keys = Object.keys(input).sort().join(",");
    if (typeof input.Name !== "string" || (keys !== "Name" && keys !== "Name,WithDecryption")) {
      seen.refused = `unexpected input ${keys}`;
      return json(400, { __type: "ValidationException", message: "bad input" });
    }
    const p = parameters[input.Name];
    if (!p) return json(400, { __type: "ParameterNotFound", message: "" });
    const decrypted = input.WithDecryption === true || p.type !== "SecureString";
    return json(200, {
      Parameter: {
        Name: input.Name,
        Type: p.type,
        Value: decrypted ? p.value : "AQICAHciphertext",
        Version: p.version ?? 1,
        ARN: `arn:aws:ssm:${expect.region}:123456789012:parameter${input.Name}`,
        DataType: "text",
        LastModifiedDate: 1.7e9,
      },
    });
  });
  return { url: listening(server), requests, close: () => server.shutdown() };
}

/** s3rver behind a verifying hop. */
export interface TestS3 extends TestServer {
  /** Where s3rver keeps its files. */
  directory: string;
  /** Every object key in `bucket`, read from s3rver directly (not through the hop). */
  keys(bucket: string): Promise<string[]>;
  /** Store an object in s3rver directly (behind weir's back). */
  seed(bucket: string, key: string, bytes: Uint8Array): Promise<void>;
  /** An object's bytes and media type, read from s3rver directly, or undefined. */
  object(bucket: string, key: string): Promise<{ bytes: Uint8Array; type: string } | undefined>;
}

/** Start s3rver with `buckets` and a verifying hop in front of it. */
export async function startS3(
  buckets: string[],
  options: { region?: string; credentials?: TestCredentials } = {},
): Promise<TestS3> {
  const directory = await Deno.makeTempDir({ prefix: "weir-s3rver-" });
  const s3 = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const addr = await s3.run() as { port: number };
  const backend = `http://127.0.0.1:${addr.port}`;
  const requests: SeenRequest[] = [];
  const expect = {
    credentials: options.credentials ?? CREDENTIALS,
    region: options.region ?? "us-east-1",
    service: "s3",
  };
  const hop = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const seen = await receive(req);
    requests.push(seen);
    const url = new URL(req.url);
    const refused = await verifySigV4(
      { method: req.method, url, headers: req.headers, body: seen.body },
      expect,
    );
    if (refused) {
      seen.refused = refused;
      return new Response(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>` +
          `<Message>${refused}</Message></Error>`,
        { status: 403, headers: { "content-type": "application/xml" } },
      );
    }
    // Forward what was verified; the signature is not s3rver's business.
    const headers = new Headers();
    for (const name of ["content-type", "content-length"]) {
      const v = req.headers.get(name);
      if (v !== null) headers.set(name, v);
    }
    const answer = await fetch(`${backend}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : seen.body as BodyInit,
    });
    const body = req.method === "HEAD" ? null : await answer.arrayBuffer();
    if (req.method === "HEAD") await answer.body?.cancel();
    return new Response(body, { status: answer.status, headers: answer.headers });
  });
  const direct = async (path: string, method = "GET") =>
    await fetch(`${backend}${path}`, { method });
  return {
    url: listening(hop),
    requests,
    directory,
    keys: async (bucket) => {
      const text = await (await direct(`/${bucket}?list-type=2&max-keys=1000`)).text();
      return [...text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((k) => k[1]).sort();
    },
    seed: async (bucket, key, bytes) => {
      const res = await fetch(`${backend}/${bucket}/${key}`, {
        method: "PUT",
        body: bytes as BodyInit,
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`s3rver refused the seed object: ${res.status}`);
    },
    object: async (bucket, key) => {
      const res = await direct(`/${bucket}/${key}`);
      if (res.status !== 200) {
        await res.body?.cancel();
        return undefined;
      }
      return {
        bytes: new Uint8Array(await res.arrayBuffer()),
        type: res.headers.get("content-type") ?? "",
      };
    },
    close: async () => {
      await hop.shutdown();
      await s3.close();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    },
  };
}
