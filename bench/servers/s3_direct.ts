/**
 * The baseline of `bench/s3_put.ts`: the same uploads without weir. A plain
 * Deno process signs each `PUT` with `aws4fetch` (as weir does) and sends the
 * raw bytes straight to the S3 endpoint: no MCP, no JSON, no base64.
 *
 * Usage: `deno run -A bench/servers/s3_direct.ts ENDPOINT BUCKET BYTES COUNT`.
 * Prints one JSON line `{"seconds": …}` for the timed uploads, then waits for
 * stdin to close so the bench can read its peak RSS from /proc first.
 *
 * @module
 */
import { AwsClient } from "aws4fetch";

const [endpoint, bucket, bytesText, countText] = Deno.args;
const bytes = new Uint8Array(Number(bytesText)).map((_, i) => (i * 31) & 0xff);
bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const client = new AwsClient({
  accessKeyId: Deno.env.get("AWS_ACCESS_KEY_ID")!,
  secretAccessKey: Deno.env.get("AWS_SECRET_ACCESS_KEY")!,
  service: "s3",
  region: "us-east-1",
  retries: 0,
});
const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const hash = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
async function put(i: number): Promise<void> {
  const res = await client.fetch(`${endpoint}/${bucket}/direct/${i}.png`, {
    method: "PUT",
    headers: { "content-type": "image/png", "x-amz-content-sha256": hash },
    body: bytes,
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`PUT answered ${res.status}`);
}
for (let i = 0; i < 3; i++) await put(i);
const started = performance.now();
for (let i = 0; i < Number(countText); i++) await put(i);
console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000 }));
for await (const _ of Deno.stdin.readable) { /* wait for the bench to close stdin */ }
