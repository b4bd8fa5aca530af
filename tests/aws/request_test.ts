/**
 * One AWS request (src/aws/request.ts) under its deadline: a local endpoint
 * that is slow to answer, or answers its head at once and then drips the body,
 * gets `aws_timeout` (504) within about the deadline either way; a caller's
 * cancellation is `cancelled` (499).
 */
import assert from "node:assert/strict";
import { AwsCallError, sendAws } from "../../src/aws/request.ts";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};

function endpoint(kind: "slow-head" | "slow-body") {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    if (kind === "slow-head") {
      await new Promise((r) => setTimeout(r, 1500));
      return new Response("{}");
    }
    let n = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const body = new ReadableStream<Uint8Array>({
      pull: (c) =>
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            if (n++ >= 30) c.close();
            else c.enqueue(new TextEncoder().encode(" "));
            resolve();
          }, 100);
        }),
      cancel: () => clearTimeout(timer),
    });
    return new Response(body, { headers: { "content-type": "application/x-amz-json-1.1" } });
  });
}

for (const kind of ["slow-head", "slow-body"] as const) {
  Deno.test(`aws request: a ${kind} answer is aws_timeout at the deadline`, async () => {
    const server = endpoint(kind);
    try {
      const started = performance.now();
      await assert.rejects(
        sendAws(
          {
            service: "ssm",
            region: "us-east-1",
            action: "GetParameter",
            method: "POST",
            url: `http://127.0.0.1:${server.addr.port}/`,
            body: new TextEncoder().encode("{}"),
          },
          CREDENTIALS,
          { timeoutMs: 400, maxResponseBytes: 1 << 20 },
          new AbortController().signal,
        ),
        (error: unknown) => {
          assert.ok(error instanceof AwsCallError, String(error));
          assert.equal(error.status, 504, error.message);
          assert.match(error.message, /^aws_timeout: GetParameter got no answer within 400 ms/);
          return true;
        },
      );
      assert.ok(performance.now() - started < 2500, "stopped near the deadline");
    } finally {
      await server.shutdown();
    }
  });
}

Deno.test("aws request: the caller's cancellation mid-body is cancelled (499)", async () => {
  const server = endpoint("slow-body");
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  try {
    await assert.rejects(
      sendAws(
        {
          service: "ssm",
          region: "us-east-1",
          action: "GetParameter",
          method: "POST",
          url: `http://127.0.0.1:${server.addr.port}/`,
        },
        CREDENTIALS,
        { timeoutMs: 10_000, maxResponseBytes: 1 << 20 },
        controller.signal,
      ),
      (error: unknown) => error instanceof AwsCallError && error.status === 499,
    );
  } finally {
    await server.shutdown();
  }
});
