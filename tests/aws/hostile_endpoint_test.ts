/**
 * `weir serve` on AWS policies (SSM and S3) against a hostile endpoint, through
 * the shipped CLI: a raw TCP server that writes exactly the bytes a test
 * plans, in the pieces it plans, late when it plans.
 *
 * - Limits (issue 22, kind 9): the answer body cap (`--max-response-bytes`)
 *   and the 64 KiB answer head cap hold at boundary-1, boundary and
 *   boundary+1, under Content-Length, chunked, close-delimited and gzip
 *   framing, whether the answer arrives in one write, byte by byte around
 *   the boundary, or cut at generated points.
 * - Deadlines (kind 19): `--upstream-timeout` counts from the start of the
 *   call; a call whose deadline passed before its request could be sent
 *   sends nothing (the endpoint sees nothing) and says so; a request that was
 *   sent and got no answer says whether it may have taken effect.
 * - Text (kind 1): an endpoint's ill-formed text (a lone surrogate in a JSON
 *   answer, an emoji cut by a clip) reaches the caller well-formed, with the
 *   text content and `structuredContent` saying the same.
 * - Secrets (kind 16): a credential an endpoint echoes in a header or a list
 *   that weir passes into a result is redacted in every encoding.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { callApi, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { awsEnv, CREDENTIALS } from "../support/aws.ts";
import { base64Holds, hexHolds, secretEchoes } from "../support/secret_echoes.ts";

const enc = new TextEncoder();
const PARAM = "/p/one";
const CAP = 5000;
const HEAD = 64 * 1024;

/** What the endpoint does with the next request. */
interface Plan {
  /** The whole answer, status line to the last byte. */
  bytes: Uint8Array;
  /** Where to cut it into writes (a short pause between writes). */
  cuts?: number[];
  /** Wait this long before answering. */
  delayMs?: number;
}

/** One request as the endpoint received it. */
interface Received {
  method: string;
  path: string;
  bodyBytes: number;
}

/** A raw HTTP/1.1 endpoint answering each request with the plan `next()` gives. */
function rawEndpoint(next: () => Plan) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received: Received[] = [];
  const loop = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(1 << 16);
        let head = "";
        let bytes = 0;
        let headEnd = -1;
        let length = 0;
        while (true) {
          const n = await conn.read(buf);
          if (n === null) return;
          bytes += n;
          if (headEnd < 0) {
            head += new TextDecoder().decode(buf.subarray(0, n));
            headEnd = head.indexOf("\r\n\r\n");
            if (headEnd < 0) continue;
            length = Number(/\r\ncontent-length: *(\d+)/i.exec(head.slice(0, headEnd))?.[1] ?? 0);
          }
          if (bytes >= headEnd + 4 + length) break;
        }
        const [method, path] = head.split(" ");
        received.push({ method, path, bodyBytes: length });
        const plan = next();
        if (plan.delayMs) await new Promise((r) => setTimeout(r, plan.delayMs));
        let from = 0;
        for (const cut of [...(plan.cuts ?? []), plan.bytes.length]) {
          if (cut <= from || cut > plan.bytes.length) continue;
          let off = from;
          while (off < cut) off += await conn.write(plan.bytes.subarray(off, cut));
          from = cut;
          if (cut < plan.bytes.length) await new Promise((r) => setTimeout(r, 2));
        }
      })().catch(() => {}).finally(() => {
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    received,
    async close() {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

type Framing = "length" | "chunked" | "close" | "gzip";

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** An HTTP answer carrying `body` under `framing`; `around` is where the body's end lands. */
async function framed(
  body: Uint8Array,
  framing: Framing,
  status = "200 OK",
  extra = "",
): Promise<{ bytes: Uint8Array; around: number }> {
  const start = `HTTP/1.1 ${status}\r\ncontent-type: application/x-amz-json-1.1\r\n${extra}`;
  let head: string;
  let payload = body;
  if (framing === "length") head = `${start}content-length: ${body.length}\r\n\r\n`;
  else if (framing === "close") head = `${start}connection: close\r\n\r\n`;
  else if (framing === "gzip") {
    payload = await gzip(body);
    head = `${start}content-encoding: gzip\r\ncontent-length: ${payload.length}\r\n\r\n`;
  } else {
    head = `${start}transfer-encoding: chunked\r\n\r\n`;
    const parts: Uint8Array[] = [];
    for (let i = 0; i < body.length; i += 700) {
      const piece = body.subarray(i, i + 700);
      parts.push(enc.encode(`${piece.length.toString(16)}\r\n`), piece, enc.encode("\r\n"));
    }
    parts.push(enc.encode("0\r\n\r\n"));
    payload = new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
  }
  const headBytes = enc.encode(head);
  const bytes = new Uint8Array(headBytes.length + payload.length);
  bytes.set(headBytes);
  bytes.set(payload, headBytes.length);
  return { bytes, around: headBytes.length + Math.min(payload.length, body.length) };
}

/** A GetParameter answer of exactly `size` bytes. */
function parameterAnswer(size: number, value?: string): Uint8Array {
  const start = `{"Parameter":{"Name":"${PARAM}","Type":"String","Value":"`;
  const end = `","Version":1}}`;
  const text = value !== undefined
    ? `${start}${value}${end}`
    : `${start}${"v".repeat(size - start.length - end.length)}${end}`;
  return enc.encode(text);
}

/** Cut points: none, generated, or every byte around `around`. */
const cutsOf = (length: number, around: number) =>
  fc.oneof(
    fc.constant([] as number[]),
    fc.uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: 5 })
      .map((c) => c.sort((a, b) => a - b)),
    fc.constant(
      Array.from({ length: 6 }, (_, i) => around - 3 + i).filter((c) => c > 0 && c < length),
    ),
  );

const SSM_POLICY = `wrap ward mcp aws ssm {
    region "us-east-1"
    parameter "${PARAM}"
    can get parameter
}`;

const S3_POLICY = `wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "weir-assets"
    base-url "https://files.example.com"
    prefix "charts"
    max-bytes 16000000
    content-type "application/json"
    can put object
    can list objects
    can get object-url
}`;

async function serveAws(policy: string, endpoint: string, extra: string[]): Promise<Served> {
  const file = await tempGuardfile(policy);
  return await serveHttp(file, {
    env: awsEnv({
      AWS_ENDPOINT_URL: endpoint,
      PATH: Deno.env.get("PATH") ?? "",
    }),
    extra,
  });
}

Deno.test("AWS answers: the body cap and the head cap hold at their boundaries however the bytes arrive", async () => {
  let plan: Plan = { bytes: new Uint8Array() };
  const endpoint = rawEndpoint(() => plan);
  const served = await serveAws(SSM_POLICY, endpoint.url, ["--max-response-bytes", String(CAP)]);
  try {
    for (const framing of ["length", "chunked", "close", "gzip"] as Framing[]) {
      for (const delta of [-1, 0, 1]) {
        const { bytes, around } = await framed(parameterAnswer(CAP + delta), framing);
        await fc.assert(
          fc.asyncProperty(cutsOf(bytes.length, around), async (cuts) => {
            plan = { bytes, cuts };
            const r = await callApi(served.url, "get_parameter", { name: PARAM });
            if (delta <= 0) {
              assert.equal(r.status, 200, `${framing} ${delta} ${cuts}: ${r.text}`);
              const value = (r.body.structuredContent as { value: string }).value;
              assert.equal(value.length, CAP + delta - parameterAnswer(0, "").length, framing);
            } else {
              assert.equal(r.status, 502, `${framing} ${delta} ${cuts}: ${r.text}`);
              assert.match(
                r.text,
                /^aws_answer_too_large: GetParameter answered more than 5000 bytes/,
              );
            }
          }),
          { numRuns: 6 },
        );
      }
    }
    // The head: the status line through the empty line, at most 64 KiB.
    for (const delta of [-1, 0, 1]) {
      const body = parameterAnswer(0, "v");
      const fixed = `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nx-pad: \r\n\r\n`;
      const head = fixed.replace("x-pad: ", `x-pad: ${"a".repeat(HEAD + delta - fixed.length)}`);
      assert.equal(enc.encode(head).length, HEAD + delta);
      const bytes = new Uint8Array([...enc.encode(head), ...body]);
      await fc.assert(
        fc.asyncProperty(cutsOf(bytes.length, HEAD + delta), async (cuts) => {
          plan = { bytes, cuts };
          const r = await callApi(served.url, "get_parameter", { name: PARAM });
          if (delta <= 0) assert.equal(r.status, 200, `head ${delta}: ${r.text}`);
          else {
            assert.equal(r.status, 502, `head ${delta}: ${r.text}`);
            assert.match(r.text, /answer's head is over 65536 bytes/);
          }
        }),
        { numRuns: 4 },
      );
    }
  } finally {
    await served.stop();
    await endpoint.close();
  }
});

Deno.test("AWS answers: S3 ListObjectsV2 holds the same body cap", async () => {
  let plan: Plan = { bytes: new Uint8Array() };
  const endpoint = rawEndpoint(() => plan);
  const served = await serveAws(S3_POLICY, endpoint.url, ["--max-response-bytes", String(CAP)]);
  try {
    const start = `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>x</Name>`;
    const end = `<IsTruncated>false</IsTruncated></ListBucketResult>`;
    for (const delta of [0, 1]) {
      const text = start + `<!--${"c".repeat(CAP + delta - start.length - end.length - 7)}-->` +
        end;
      const { bytes } = await framed(enc.encode(text), "chunked");
      plan = { bytes };
      const r = await callApi(served.url, "list_objects", {});
      assert.equal(r.status, delta === 0 ? 200 : 502, r.text);
    }
  } finally {
    await served.stop();
    await endpoint.close();
  }
});

Deno.test("AWS deadlines: a request not sent by the deadline never is; one sent says it may have taken effect", async () => {
  let plan: Plan = { bytes: new Uint8Array() };
  const endpoint = rawEndpoint(() => plan);
  const late = async () =>
    await framed(enc.encode(""), "length").then(({ bytes }) => ({ bytes, delayMs: 2500 }));
  const served = await serveAws(S3_POLICY, endpoint.url, ["--upstream-timeout", "700"]);
  try {
    // Sent, no answer in time: PutObject may have written the object.
    plan = await late();
    const before = endpoint.received.length;
    let r = await callApi(served.url, "put_object", {
      key: "a.json",
      content_type: "application/json",
      content_base64: btoa('{"a":1}'),
    });
    assert.equal(r.status, 504, r.text);
    assert.match(r.text, /^aws_timeout: PutObject got no answer within 700 ms/);
    assert.match(r.text, /was sent and may have taken effect/);
    assert.equal(endpoint.received.length, before + 1);
    // A read says it changed nothing.
    plan = await late();
    r = await callApi(served.url, "list_objects", {});
    assert.equal(r.status, 504, r.text);
    assert.match(r.text, /^aws_timeout: ListObjectsV2 got no answer within 700 ms/);
    assert.match(r.text, /changes nothing/);
  } finally {
    await served.stop();
  }
  // The deadline counts from the start of the call: a large object whose checks
  // and signing take longer than a 1 ms deadline is never sent.
  const tight = await serveAws(S3_POLICY, endpoint.url, ["--upstream-timeout", "1"]);
  try {
    plan = await framed(enc.encode(""), "length");
    const object = enc.encode(JSON.stringify({ pad: "p".repeat(6_000_000) })).toBase64();
    let unsent = 0;
    for (let i = 0; i < 3; i++) {
      const before = endpoint.received.length;
      const r = await callApi(tight.url, "put_object", {
        key: `big-${i}.json`,
        content_type: "application/json",
        content_base64: object,
      });
      assert.equal(r.status, 504, r.text);
      const arrived = endpoint.received.length - before;
      if (/nothing was sent, and nothing will be/.test(r.text)) {
        unsent++;
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(endpoint.received.length - before, 0, "told nothing was sent, yet it arrived");
      } else {
        assert.match(r.text, /may have taken effect/, r.text);
        assert.ok(arrived <= 1);
      }
    }
    assert.ok(unsent > 0, "a 1 ms deadline passed before some 6 MB object was sent");
  } finally {
    await tight.stop();
    await endpoint.close();
  }
});

Deno.test("AWS text: an endpoint's ill-formed or clipped text reaches the caller well-formed", async () => {
  let plan: Plan = { bytes: new Uint8Array() };
  const endpoint = rawEndpoint(() => plan);
  const served = await serveAws(SSM_POLICY, endpoint.url, []);
  try {
    for (const value of ["a\\ud800b", "\\udc00", "x\\udbff\\udbffy", "ok\\ud83d\\ude00"]) {
      plan = await framed(parameterAnswer(0, value), "length");
      const r = await callApi(served.url, "get_parameter", { name: PARAM });
      assert.equal(r.status, 200, r.text);
      const structured = (r.body.structuredContent as { value: string }).value;
      const fromText = (JSON.parse(r.text) as { value: string }).value;
      assert.ok(structured.isWellFormed(), JSON.stringify(structured));
      assert.ok(fromText.isWellFormed(), `the text content decodes to ill-formed text: ${r.text}`);
      assert.equal(fromText, structured, "text and structuredContent differ");
    }
    // An AWS error message clipped to 200 characters through an emoji.
    for (let at = 195; at < 202; at++) {
      const message = "m".repeat(at) + "\u{1F600}".repeat(3) + " tail";
      plan = await framed(
        enc.encode(JSON.stringify({ __type: "AccessDeniedException", message })),
        "length",
        "400 Bad Request",
      );
      const r = await callApi(served.url, "get_parameter", { name: PARAM });
      assert.equal(r.status, 502, r.text);
      assert.ok(r.text.isWellFormed() && !r.text.includes("\ufffd"), JSON.stringify(r.text));
    }
  } finally {
    await served.stop();
    await endpoint.close();
  }
});

Deno.test("AWS results: a credential an endpoint echoes into a result is redacted in every encoding", async () => {
  let plan: Plan = { bytes: new Uint8Array() };
  const endpoint = rawEndpoint(() => plan);
  const served = await serveAws(S3_POLICY, endpoint.url, []);
  const secrets = [CREDENTIALS.secretAccessKey, CREDENTIALS.sessionToken];
  try {
    for (const secret of secrets) {
      const forms = Object.values(secretEchoes(secret));
      const assertClean = (r: Awaited<ReturnType<typeof callApi>>, what: string) => {
        assert.equal(r.status, 200, r.text);
        const texts = [r.text, ...strings(r.body.structuredContent)];
        for (const text of texts) {
          for (const form of forms) assert.ok(!text.includes(form), `${what}: ${text}`);
          assert.ok(!base64Holds(text, secret) && !hexHolds(text, secret), `${what}: ${text}`);
        }
      };
      for (const [name, echo] of Object.entries(secretEchoes(secret))) {
        // HeadObject's Content-Type header becomes the result's content_type.
        if (/^[\x21-\x7e]*$/.test(echo)) {
          plan = {
            bytes: enc.encode(
              `HTTP/1.1 200 OK\r\ncontent-type: image/png; x=${echo}\r\ncontent-length: 0\r\n\r\n`,
            ),
          };
          assertClean(
            await callApi(served.url, "get_object_url", { key: "a.json" }),
            `HeadObject echo (${name})`,
          );
        }
        // ListObjectsV2 keys.
        const key = `charts/${echo.replaceAll("&", "&amp;").replaceAll("<", "&lt;")}`;
        const { bytes } = await framed(
          enc.encode(
            `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Contents><Key>${key}</Key>` +
              `<Size>1</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>`,
          ),
          "length",
        );
        plan = { bytes };
        assertClean(await callApi(served.url, "list_objects", {}), `list echo (${name})`);
      }
    }
  } finally {
    await served.stop();
    await endpoint.close();
  }
});

/** Every string in a decoded JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(strings);
}
