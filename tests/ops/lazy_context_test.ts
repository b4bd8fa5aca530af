/**
 * A module weir loads by URL during a call (src/ops/lazy.ts) must not hand
 * that call's async context to the calls after it. Deno 2.9.6 lets the
 * context in which a module's first dynamic `import()` completes leak into
 * later `Deno.serve` handlers; weir's HTTP/1.1 client loads at the first call,
 * so with telemetry on every later call's span took the first call's span as
 * its parent (tests/ops/otel_trace_context_test.ts caught it).
 */
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { contextsMadeHere, importModule, lazy, outsideContexts } from "../../src/ops/lazy.ts";

// As the modules that make contexts do when they load (telemetry, the upstream request scope).
contextsMadeHere(AsyncLocalStorage.snapshot());

/** What a `Deno.serve` handler sees of `store` for each request made by `during`. */
async function storeSeenByLaterRequests(
  store: AsyncLocalStorage<string>,
  during: (get: () => Promise<string>) => Promise<void>,
): Promise<void> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(String(store.getStore())),
  );
  try {
    const get = () => fetch(`http://127.0.0.1:${server.addr.port}/`).then((r) => r.text());
    await during(get);
  } finally {
    await server.shutdown();
  }
}

Deno.test("a module first loaded by URL inside a call leaves no context to the next requests", async () => {
  const store = new AsyncLocalStorage<string>();
  await storeSeenByLaterRequests(store, async (get) => {
    assert.equal(await get(), "undefined");
    await store.run("call 1", async () => {
      // Neither module is in this test's static graph: each is a first load.
      const { compileJmesPath } = await lazy<typeof import("../../src/guardfile/jmespath.ts")>(
        "guardfile_jmespath",
      );
      assert.equal(typeof compileJmesPath, "function");
      await importModule("src/guardfile/sql_reads.ts");
      assert.equal(store.getStore(), "call 1", "the call keeps its own context");
    });
    assert.equal(await get(), "undefined", "a later request runs in no call's context");
  });
});

Deno.test("outsideContexts runs its work in no context and returns what it returns", async () => {
  const store = new AsyncLocalStorage<string>();
  await store.run("call 1", async () => {
    const seen = await outsideContexts(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return store.getStore();
    });
    assert.equal(seen, undefined);
    assert.equal(store.getStore(), "call 1");
  });
});
