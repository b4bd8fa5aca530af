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
import fc from "../support/property.ts";
import { callApi, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { awsEnv, CREDENTIALS } from "../support/aws.ts";
import { base64Holds, hexHolds, secretEchoes } from "../support/secret_echoes.ts";
import {
  cutsOf,
  framed,
  FRAMINGS,
  headOfSize,
  type Plan,
  rawEndpoint,
} from "../support/raw_endpoint.ts";

const enc = new TextEncoder();
const PARAM = "/p/one";
const CAP = 5000;
const HEAD = 64 * 1024;

/** A GetParameter answer of exactly `size` bytes. */
function parameterAnswer(size: number, value?: string): Uint8Array {
  const start = `{"Parameter":{"Name":"${PARAM}","Type":"String","Value":"`;
  const end = `","Version":1}}`;
  const text = value !== undefined
    ? `${start}${value}${end}`
    : `${start}${"v".repeat(size - start.length - end.length)}${end}`;
  return enc.encode(text);
}

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
    for (const framing of FRAMINGS) {
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
      const bytes = headOfSize(HEAD + delta, parameterAnswer(0, "v"));
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
    await framed(enc.encode(""), "length").then(({ bytes }) => ({ bytes, delayMs: 600_000 }));
  // 5000 ms: room for a busy machine to send the request before its deadline (the answer
  // comes 10 minutes after it, or never: the endpoint's close() ends the wait).
  const served = await serveAws(S3_POLICY, endpoint.url, ["--upstream-timeout", "5000"]);
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
    assert.match(r.text, /^aws_timeout: PutObject got no answer within 5000 ms/);
    assert.match(r.text, /was sent and may have taken effect/);
    assert.equal(endpoint.received.length, before + 1);
    // A read says it changed nothing.
    plan = await late();
    r = await callApi(served.url, "list_objects", {});
    assert.equal(r.status, 504, r.text);
    assert.match(r.text, /^aws_timeout: ListObjectsV2 got no answer within 5000 ms/);
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
        { status: "400 Bad Request" },
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
