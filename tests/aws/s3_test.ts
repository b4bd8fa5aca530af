/**
 * `weir serve-s3` end to end, as a user runs it: the shipped CLI, the
 * official clients (v1 over stdio and HTTP, v2 over HTTP pinned to
 * 2026-07-28) and the HTTP tool API, against `npm:s3rver` behind a hop that
 * checks every request's SigV4 signature with the AWS SDK's signer. What
 * lands is read back from s3rver directly, not through weir.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { adaptSdkClient, type ClientAdapter } from "../e2e/scenario.ts";
import { callApi, ROOT, serveHttp, tempGuardfile, weirCommand } from "../support/cli.ts";
import { awsEnv, CREDENTIALS, startS3, type TestS3 } from "../support/aws.ts";

const BUCKET = "weir-assets";
const OTHER = "weir-private";
const MAX = 1024 * 1024;
const POLICY = `wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "${BUCKET}"
    base-url "https://files.example.com/"
    prefix "/charts/"
    max-bytes ${MAX}
    content-type "image/png"
    content-type "application/json"
    can put object
    can list objects
    can get object-url
}`;

/** Bytes that start like a PNG, `size` long, different per `seed`. */
function png(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < size; i++) bytes[i] = (i * 31 + seed * 7) & 0xff;
  return bytes;
}

const b64 = (bytes: Uint8Array) => bytes.toBase64();

/** What every client must see. `run` tags keys so the clients do not collide. */
async function publishes(
  t: Deno.TestContext,
  client: ClientAdapter,
  s3: TestS3,
  run: string,
): Promise<void> {
  await t.step("lists exactly the three tools; no delete", async () => {
    const tools = await client.list();
    assert.deepEqual(tools.map((x) => x.name).sort(), [
      "get_object_url",
      "list_objects",
      "put_object",
    ]);
    const refused = await client.call("delete_object", { key: "x.png" });
    assert.equal(refused.isError, true);
    // The key's own example is relative: an agent copying it does not write the prefix twice.
    const put = tools.find((x) => x.name === "put_object") as unknown as {
      inputSchema: { properties: { key: { description: string } } };
    };
    const example = /e\.g\. (\S+)/.exec(put.inputSchema.properties.key.description)?.[1];
    assert.ok(
      example && !example.startsWith("charts/"),
      put.inputSchema.properties.key.description,
    );
  });

  const image = png(4096, run.length);
  await t.step("publishes an image under the prefix and returns its public URL", async () => {
    const out = await client.call("put_object", {
      key: `${run}/latency.png`,
      content_base64: b64(image),
      content_type: "image/png",
    });
    assert.equal(out.isError, false, out.text);
    assert.deepEqual(out.structured, {
      key: `${run}/latency.png`,
      object_key: `charts/${run}/latency.png`,
      url: `https://files.example.com/charts/${run}/latency.png`,
      bytes: 4096,
      content_type: "image/png",
    });
    const stored = await s3.object(BUCKET, `charts/${run}/latency.png`);
    assert.ok(stored, "the object is in the bucket, under the prefix");
    assert.deepEqual(stored.bytes, image);
    assert.equal(stored.type, "image/png");
    assert.deepEqual(await s3.keys(OTHER), [], "nothing in the other bucket");
    const keys = await s3.keys(BUCKET);
    assert.ok(keys.every((k) => k.startsWith("charts/") || k === "outside.png"), keys.join());
  });

  await t.step("refuses, with nothing written and nothing sent", async () => {
    const before = { keys: await s3.keys(BUCKET), sent: s3.requests.length };
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        {
          key: `${run}/page.html`,
          content_base64: b64(new TextEncoder().encode("<b>hi</b>")),
          content_type: "text/html",
        },
        /content type "text\/html" is outside this policy \(allowed: image\/png, application\/json\)/,
      ],
      [
        { key: `../escape.png`, content_base64: b64(image), content_type: "image/png" },
        /key "..\/escape.png" has a ".." segment \(no traversal\); it would leave the prefix "charts\/"/,
      ],
      [
        { key: `${run}/../../escape.png`, content_base64: b64(image), content_type: "image/png" },
        /has a ".." segment/,
      ],
      [
        { key: `/elsewhere/x.png`, content_base64: b64(image), content_type: "image/png" },
        /starts with \/ \(keys are relative to the policy prefix\); it would leave the prefix/,
      ],
      [
        { key: `${run}/big.png`, content_base64: b64(png(MAX + 1)), content_type: "image/png" },
        /too_large: the object is 1048577 bytes decoded, over this policy's max-bytes of 1048576/,
      ],
      [
        { key: `${run}/a b.png`, content_base64: b64(image), content_type: "image/png" },
        /may only use letters, digits, dash, underscore, dot and slash/,
      ],
      [
        { key: `${run}//x.png`, content_base64: b64(image), content_type: "image/png" },
        /empty path segment/,
      ],
      [
        { key: `${run}/x.png`, content_base64: "iVBORw0K\nGgo=", content_type: "image/png" },
        /invalid_base64: content_base64 is not strict base64/,
      ],
      [
        { key: `${run}/x.png`, content_base64: "iVBORw0KGgo", content_type: "image/png" },
        /invalid_base64/,
      ],
      [
        { key: `${run}/x.png`, content_base64: "", content_type: "image/png" },
        /refusing to publish an empty object/,
      ],
      [
        {
          key: `${run}/page.png`,
          content_base64: b64(new TextEncoder().encode("<!doctype html><script>x</script>")),
          content_type: "image/png",
        },
        /the bytes are HTML or XML markup, which this publisher never serves/,
      ],
      [
        {
          key: `${run}/data.json`,
          content_base64: b64(new TextEncoder().encode("\n  <svg onload=alert(1)>")),
          content_type: "application/json",
        },
        /HTML or XML markup/,
      ],
      [
        {
          key: `${run}/fake.png`,
          content_base64: b64(new Uint8Array(64).fill(7)),
          content_type: "image/png",
        },
        /the bytes are not a PNG image, as content_type image\/png says/,
      ],
    ];
    for (const [args, message] of cases) {
      const out = await client.call("put_object", args);
      assert.equal(out.isError, true, JSON.stringify(args).slice(0, 80));
      assert.match(out.text, message);
    }
    assert.equal(s3.requests.length, before.sent, "no request reached S3");
    assert.deepEqual(await s3.keys(BUCKET), before.keys, "nothing was written");
  });

  await t.step("lists only under the prefix; a traversing prefix is refused", async () => {
    const out = await client.call("list_objects", { prefix: `${run}/` });
    assert.equal(out.isError, false, out.text);
    assert.deepEqual(out.structured, {
      objects: [{
        key: `${run}/latency.png`,
        object_key: `charts/${run}/latency.png`,
        url: `https://files.example.com/charts/${run}/latency.png`,
        bytes: 4096,
      }],
      truncated: false,
    });
    const all = await client.call("list_objects", {});
    const { objects: listed, unlisted } = all.structured as {
      objects: { key: string; object_key: string }[];
      unlisted?: number;
    };
    assert.equal(unlisted, 2, "the two keys no tool takes are left out and counted");
    assert.ok(listed.some((o) => o.key === `${run}/latency.png`));
    assert.ok(
      !listed.some((o) => o.object_key === "outside.png"),
      "outside the prefix: not listed",
    );
    // Round trip: every key a listing answers is what get_object_url takes, as is.
    for (const o of listed) {
      const back = await client.call("get_object_url", { key: o.key });
      assert.equal(back.isError, false, back.text);
      assert.equal((back.structured as { object_key: string }).object_key, o.object_key);
    }
    const refused = await client.call("list_objects", { prefix: "../" });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /has a ".." segment/);
  });

  await t.step("get_object_url checks the object exists", async () => {
    const out = await client.call("get_object_url", { key: `${run}/latency.png` });
    assert.equal(out.isError, false, out.text);
    assert.deepEqual(out.structured, {
      key: `${run}/latency.png`,
      object_key: `charts/${run}/latency.png`,
      url: `https://files.example.com/charts/${run}/latency.png`,
      bytes: 4096,
      content_type: "image/png",
    });
    const missing = await client.call("get_object_url", { key: `${run}/missing.png` });
    assert.equal(missing.isError, true);
    assert.match(
      missing.text,
      /not_found: no object at key "[^"]*\/missing.png" \(object key "charts\/[^"]*\/missing.png"\)/,
    );
  });
}

async function withS3(body: (s3: TestS3, file: string) => Promise<void>): Promise<void> {
  const s3 = await startS3([BUCKET, OTHER]);
  const file = await tempGuardfile(POLICY);
  // An object outside the prefix, put there behind weir's back, and two under it whose keys
  // break the key rules (no tool could name them back).
  await s3.seed(BUCKET, "outside.png", png(16));
  await s3.seed(BUCKET, "charts/with%20space.png", png(16));
  await s3.seed(BUCKET, "charts/caf%C3%A9.png", png(16));
  try {
    await body(s3, file);
  } finally {
    await s3.close();
    await Deno.remove(file);
  }
}

function assertNoSecrets(text: string): void {
  assert.ok(!text.includes(CREDENTIALS.secretAccessKey), "no secret key");
  assert.ok(!text.includes(CREDENTIALS.sessionToken), "no session token");
}

Deno.test("serve-s3 over HTTP: v2 client (2026-07-28), v1 client and the tool API", async (t) => {
  await withS3(async (s3, file) => {
    const served = await serveHttp(file, {
      command: "serve-s3",
      env: awsEnv({ AWS_ENDPOINT_URL_S3: s3.url }),
    });
    try {
      const v2 = new ClientV2(
        { name: "s3-test", version: "2.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await v2.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
      await publishes(t, adaptSdkClient(v2), s3, "v2");
      await v2.close();
      const v1 = new ClientV1({ name: "s3-test", version: "1.0.0" });
      await v1.connect(new HttpV1(new URL(`${served.url}/mcp`)));
      await publishes(t, adaptSdkClient(v1), s3, "v1");
      await v1.close();

      await t.step(
        "POST /api/put_object takes a 1 MiB image (the body cap follows max-bytes)",
        async () => {
          const image = png(MAX, 9);
          const out = await callApi(served.url, "put_object", {
            key: "api/full.png",
            content_base64: b64(image),
            content_type: "image/png",
          });
          assert.equal(out.status, 200, out.text);
          assert.deepEqual((await s3.object(BUCKET, "charts/api/full.png"))?.bytes, image);
          const big = await callApi(served.url, "put_object", {
            key: "api/big.png",
            content_base64: b64(png(MAX + 1)),
            content_type: "image/png",
          });
          assert.equal(big.status, 413);
          assert.equal(await s3.object(BUCKET, "charts/api/big.png"), undefined);
        },
      );
      await t.step("every request S3 saw was signed correctly", () => {
        assert.ok(s3.requests.length > 0);
        assert.deepEqual(s3.requests.filter((r) => r.refused).map((r) => r.refused), []);
      });
    } finally {
      await served.stop();
    }
    const log = served.stderr();
    assertNoSecrets(log);
    const lines = log.trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(
      lines.some((l) => l.event === "tool_call" && l.tool === "put_object" && l.outcome === "ok"),
    );
    assert.ok(
      lines.some((l) => l.event === "refused" && l.rule === "size" && l.tool === "put_object"),
    );
    // Each refusal names its own rule (a spec-mode restrict glob is "restrict"; none here).
    for (const rule of ["dot_segment", "content", "empty_value"]) {
      assert.ok(lines.some((l) => l.event === "refused" && l.rule === rule), rule);
    }
    assert.ok(!lines.some((l) => l.rule === "restrict"));
  });
});

Deno.test("serve-s3 over stdio with the v1 client; serve recognises the policy", async (t) => {
  await withS3(async (s3, file) => {
    const { command, args } = weirCommand();
    const client = new ClientV1({ name: "s3-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command,
        args: [...args, "serve", file, "--stdio"],
        cwd: ROOT,
        // AWS_ENDPOINT_URL is the fallback when no service-specific variable is set.
        env: awsEnv({ AWS_ENDPOINT_URL: s3.url }),
        stderr: "ignore",
      }),
    );
    try {
      await publishes(t, adaptSdkClient(client), s3, "stdio");
    } finally {
      await client.close();
    }
  });
});

Deno.test("serve-s3: a wrong secret is refused by the verifying hop, nothing lands, no secret echoed", async () => {
  await withS3(async (s3, file) => {
    const wrong = { ...CREDENTIALS, secretAccessKey: "wrong-secret-WEIRTEST-s3-abcdefgh" };
    const served = await serveHttp(file, {
      command: "serve-s3",
      env: awsEnv({ AWS_ENDPOINT_URL_S3: s3.url }, wrong),
    });
    try {
      const out = await callApi(served.url, "put_object", {
        key: "x.png",
        content_base64: b64(png(64)),
        content_type: "image/png",
      });
      assert.equal(out.status, 502);
      assert.match(out.text, /aws_error: PutObject -> 403 SignatureDoesNotMatch/);
      assert.ok(!out.text.includes(wrong.secretAccessKey));
      assert.deepEqual(
        await s3.keys(BUCKET),
        ["charts/café.png", "charts/with space.png", "outside.png"],
        "only the seeded objects",
      );
    } finally {
      await served.stop();
    }
    assert.ok(!served.stderr().includes(wrong.secretAccessKey));
  });
});
