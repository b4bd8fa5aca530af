/**
 * docs/aws.md "Trying it locally", as a new user follows it: s3rver with
 * `--allow-mismatched-signatures` and the bucket configured (here in-process,
 * the same options), the docs' own serve-s3 example served by the CLI with
 * `AWS_ACCESS_KEY_ID=S3RVER`, a longer secret and `AWS_ENDPOINT_URL_S3`; the
 * object lands where the docs say, and the listing and URL tools find it. s3rver's
 * own seven-character secret is refused, saying what to set.
 */
import assert from "node:assert/strict";
import S3rver from "s3rver";
import { callApi, ROOT, serveHttp, tempGuardfile } from "../support/cli.ts";
import { freePort } from "../support/port.ts";

/** The serve-s3 example of docs/aws.md, as written there. */
async function docsExample(): Promise<string> {
  const doc = await Deno.readTextFile(`${ROOT}docs/aws.md`);
  const block = [...doc.matchAll(/```kdl\n([\s\S]*?)```/g)].map((m) => m[1])
    .find((b) => b.startsWith("wrap ward mcp aws s3"));
  assert.ok(block, "docs/aws.md has the serve-s3 example");
  return block;
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

Deno.test("docs/aws.md Trying it locally: serve-s3 against s3rver as written", async () => {
  const directory = await Deno.makeTempDir({ prefix: "weir-s3rver-local-" });
  const s3 = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: "example-public-assets" }],
  });
  const { port } = await s3.run() as { port: number };
  const file = await tempGuardfile(await docsExample());
  const endpoint = { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` };
  const served = await serveHttp(file, {
    env: { ...endpoint, AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER-local-only" },
  });
  const short = await serveHttp(file, {
    env: { ...endpoint, AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" },
  });
  try {
    const content_base64 = btoa(String.fromCharCode(...PNG));
    const put = await callApi(served.url, "put_object", {
      key: "q3/latency.png",
      content_base64,
      content_type: "image/png",
    });
    assert.equal(put.status, 200, put.text);
    const stored = await Deno.readFile(
      `${directory}/example-public-assets/charts/q3/latency.png._S3rver_object`,
    );
    assert.deepEqual(stored, PNG);
    const listed = await callApi(served.url, "list_objects", {});
    assert.equal(listed.status, 200, listed.text);
    assert.match(listed.text, /"key":"q3\/latency\.png"/);
    const url = await callApi(served.url, "get_object_url", { key: "q3/latency.png" });
    assert.match(url.text, /https:\/\/files\.example\.com\/charts\/q3\/latency\.png/);

    const refused = await callApi(short.url, "put_object", {
      key: "q3/other.png",
      content_base64,
      content_type: "image/png",
    });
    assert.equal(refused.status, 500, refused.text);
    assert.match(refused.text, /AWS_SECRET_ACCESS_KEY is shorter than 8 characters/);
    assert.match(refused.text, /docs\/aws\.md#trying-it-locally/);
  } finally {
    await served.stop();
    await short.stop();
    await s3.close();
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("an S3 endpoint that does not resolve or where nothing listens: said in fixed words, with what to check", async () => {
  const file = await tempGuardfile(await docsExample());
  const credentials = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER-local-only" };
  const cases: [string, RegExp][] = [
    ["http://weir-test-no-such-host.invalid:4568", /\(the host name does not resolve \(DNS\)\)/],
    [`http://127.0.0.1:${freePort()}`, /\(connection refused: nothing is listening there\)/],
  ];
  for (const [endpoint, why] of cases) {
    const served = await serveHttp(file, {
      env: { ...credentials, AWS_ENDPOINT_URL_S3: endpoint },
    });
    try {
      const r = await callApi(served.url, "list_objects", {});
      assert.equal(r.status, 502, r.text);
      assert.match(r.text, /^aws_unreachable: ListObjectsV2: the s3 endpoint could not be reached/);
      assert.match(r.text, why);
      assert.match(r.text, /check AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL when one is set/);
      assert.doesNotMatch(r.text, /weir-test-no-such-host|127\.0\.0\.1/, "no endpoint URL");
    } finally {
      await served.stop();
    }
  }
});
