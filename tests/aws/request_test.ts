/**
 * One AWS request (src/aws/request.ts) under its deadline: a local endpoint
 * that is slow to answer, or answers its head at once and then drips the body,
 * gets `aws_timeout` (504) naming the deadline either way; a caller's
 * cancellation is `cancelled` (499). No redirect is followed, and a request
 * that is not safe goes on a fresh connection (never re-sent by fetch).
 */
import assert from "node:assert/strict";
import { AwsCallError, sendAws } from "../../src/aws/request.ts";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};

/**
 * An endpoint that answers only after 20 s (slow-head) or drips its body for
 * 20 s (slow-body): far past any deadline here, so a request that is not
 * stopped at its deadline resolves and fails the test without a clock being
 * read, on however busy a machine.
 */
function endpoint(kind: "slow-head" | "slow-body") {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (kind === "slow-head") {
      await new Promise((r) => {
        const timer = setTimeout(r, 20_000);
        request.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          r(undefined);
        });
      });
      return new Response("{}");
    }
    let n = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const body = new ReadableStream<Uint8Array>({
      pull: (c) =>
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            if (n++ >= 200) c.close();
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
          // The deadline as set; on a busy machine it may pass before the request is sent.
          assert.match(
            error.message,
            /^aws_timeout: GetParameter (?:got no answer|did not start) within 400 ms/,
          );
          return true;
        },
      );
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

Deno.test("aws request: no redirect is followed, any status; nothing reaches the target", async () => {
  const elsewhere: string[] = [];
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    elsewhere.push(req.method);
    return new Response("{}");
  });
  let status = 301;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(null, {
        status,
        headers: { location: `http://127.0.0.1:${other.addr.port}/` },
      }),
  );
  try {
    for (status of [301, 302, 303, 307, 308]) {
      for (const [service, method] of [["ssm", "POST"], ["s3", "GET"]] as const) {
        await assert.rejects(
          sendAws(
            {
              service,
              region: "us-east-1",
              action: "Act",
              method,
              url: `http://127.0.0.1:${server.addr.port}/`,
              body: method === "POST" ? new TextEncoder().encode("{}") : undefined,
            },
            CREDENTIALS,
            { timeoutMs: 5000, maxResponseBytes: 1 << 20 },
            new AbortController().signal,
          ),
          (error: unknown) => {
            assert.ok(error instanceof AwsCallError, String(error));
            assert.equal(error.status, 502);
            // The caller's words name the status; the target is for the audit line.
            assert.equal(
              error.message,
              `upstream_redirect: Act answered ${status}, a redirect; weir follows no redirect, ` +
                `so nothing was sent there (the operator's log names its target)`,
            );
            assert.equal(error.location, `http://127.0.0.1:${other.addr.port}/`);
            return true;
          },
        );
      }
    }
    assert.deepEqual(elsewhere, []);
  } finally {
    await server.shutdown();
    await other.shutdown();
  }
});

Deno.test("aws request: each POST on a fresh connection, so a closed kept-alive one never re-sends it", async () => {
  // Answers each connection's first request; reads the second whole, then closes.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let received = 0;
  const serve = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(65536);
    let text = "";
    let served = 0;
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) return;
        text += new TextDecoder().decode(buf.subarray(0, n));
        const end = text.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? "0");
        if (end < 0 || text.length < end + 4 + length) continue;
        text = text.slice(end + 4 + length);
        received++;
        if (served++ > 0) return;
        await conn.write(
          new TextEncoder().encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"),
        );
      }
    } finally {
      conn.close();
    }
  };
  (async () => {
    for await (const conn of listener) serve(conn).catch(() => {});
  })().catch(() => {});
  const send = () =>
    sendAws(
      {
        service: "ssm",
        region: "us-east-1",
        action: "GetParameter",
        method: "POST",
        url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`,
        body: new TextEncoder().encode("{}"),
      },
      CREDENTIALS,
      { timeoutMs: 5000, maxResponseBytes: 1 << 20 },
      new AbortController().signal,
    );
  try {
    // Each POST goes on a fresh connection, answered; none is ever sent twice.
    const first = await send();
    assert.equal(first.status, 200);
    const second = await send();
    assert.equal(second.status, 200);
    assert.equal(received, 2);
  } finally {
    listener.close();
  }
});
