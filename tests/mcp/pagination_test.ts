/**
 * Pagination of every list: an opaque cursor keyed on the last item shown (not
 * an offset), so a list that changes between pages never skips an item that
 * was there before; a cursor from another list, another server or tampered
 * with is refused naming the list; the page size is configurable, default 50.
 */
import assert from "node:assert/strict";
import type { Catalog, McpServer, PromptSpec, ResourceSpec, ToolSpec } from "../../mod.ts";
import { ask, makeServer, MODERN, modern, modernRequest, REVISIONS } from "../support/mcp.ts";
import { StateKeys } from "../../src/mcp/signed_state.ts";
import type { Revision } from "../support/schemas.ts";

const LISTS = [
  { method: "tools/list", field: "tools", key: "name" },
  { method: "resources/list", field: "resources", key: "uri" },
  { method: "resources/templates/list", field: "resourceTemplates", key: "uriTemplate" },
  { method: "prompts/list", field: "prompts", key: "name" },
] as const;

const pad = (i: number) => String(i).padStart(3, "0");

function catalogOf(ids: string[]): Catalog {
  return {
    tools: ids.map((id): ToolSpec => ({ name: `tool_${id}` })),
    resources: [
      ...ids.map((id): ResourceSpec => ({ uri: `demo://item/${id}`, name: id })),
      ...ids.map((id) => ({ uriTemplate: `demo://t/${id}/{x}`, name: id })),
    ],
    prompts: ids.map((id): PromptSpec => ({ name: `prompt_${id}` })),
  };
}

function listServer(catalog: Catalog | (() => Catalog), pageSize?: number) {
  return makeServer({
    catalog,
    pageSize,
    dispatch: () => ({ content: [] }),
    readResource: () => [],
    getPrompt: () => ({ messages: [] }),
  }).server;
}

type Page = { nextCursor?: string } & Record<string, { [k: string]: string }[]>;

/** Page through a list; `between` runs after each page (to change the catalog). */
async function pageThrough(
  server: McpServer,
  revision: Revision,
  list: (typeof LISTS)[number],
  between: (pageIndex: number) => void = () => {},
): Promise<{ keys: string[]; sizes: number[]; cursors: string[] }> {
  const keys: string[] = [];
  const sizes: number[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const reply = await ask<Page>(server, revision, list.method, cursor ? { cursor } : {});
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const items = reply.result![list.field];
    keys.push(...items.map((item) => item[list.key]));
    sizes.push(items.length);
    cursor = reply.result!.nextCursor;
    if (cursor === undefined) return { keys, sizes, cursors };
    cursors.push(cursor);
    between(page);
  }
  throw new Error("more than 100 pages");
}

const ids = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => pad(from + i));

Deno.test("every list pages 50 at a time by default, in order, and the last page has no cursor", async () => {
  const server = listServer(catalogOf(ids(0, 120)));
  for (const revision of REVISIONS) {
    for (const list of LISTS) {
      const { keys, sizes } = await pageThrough(server, revision, list);
      assert.deepEqual(sizes, [50, 50, 20], list.method);
      assert.equal(keys.length, 120);
      assert.deepEqual(keys, [...keys].sort(), `${list.method} is sorted`);
      assert.equal(new Set(keys).size, 120);
    }
  }
});

Deno.test("the page size is configurable and must be a positive integer", async () => {
  const server = listServer(catalogOf(ids(0, 20)), 7);
  for (const list of LISTS) {
    const { sizes } = await pageThrough(server, MODERN, list);
    assert.deepEqual(sizes, [7, 7, 6]);
  }
  for (const pageSize of [0, -1, 2.5, NaN]) {
    assert.throws(() => listServer(catalogOf([]), pageSize), RangeError);
  }
  const exact = listServer(catalogOf(ids(0, 50)));
  const { sizes } = await pageThrough(exact, MODERN, LISTS[0]);
  assert.deepEqual(sizes, [50], "a full last page ends the list");
});

Deno.test("a list that changes between pages never skips an item that was there before", async () => {
  for (const revision of REVISIONS) {
    for (const list of LISTS) {
      let current = ids(0, 120);
      let catalog = catalogOf(current);
      const server = listServer(() => catalog);
      const removed = new Set<string>();
      const original = [...current];
      const change = (remove: string[], add: string[]) => {
        for (const id of remove) removed.add(id);
        current = [...current.filter((id) => !remove.includes(id)), ...add];
        catalog = catalogOf(current);
      };
      const { keys } = await pageThrough(server, revision, list, (page) => {
        if (page === 0) {
          // Remove items already shown (an offset would now skip ahead), the
          // very item the cursor names, and one not yet shown; add some.
          change(["003", "010", "020", "049", "060"], ["004a", "070a", "200"]);
        } else if (page === 1) {
          // Insert before the cursor (an offset would repeat items) and remove more.
          change(["100"], ["000a", "000b", "000c", "001a", "050a"]);
        }
      });
      const seen = keys.map((key) => key.match(/(\d{3}[a-z]?)/)![1]);
      for (const id of original) {
        if (!removed.has(id)) assert.ok(seen.includes(id), `${list.method} skipped ${id}`);
      }
      assert.equal(new Set(seen).size, seen.length, `${list.method} repeated an item`);
      assert.ok(seen.includes("200"), "an item added after the cursor is shown");
    }
  }
});

Deno.test("a cursor from another list is refused naming both lists", async () => {
  const server = listServer(catalogOf(ids(0, 60)));
  const first = await modern<Page>(server, "tools/list");
  const cursor = first.result!.nextCursor!;
  for (const revision of REVISIONS) {
    const reply = await ask(server, revision, "prompts/list", { cursor });
    assert.equal(reply.error?.code, -32602);
    assert.equal(
      reply.error?.message,
      "Invalid cursor for prompts/list: it was issued for tools/list",
    );
    assert.deepEqual(reply.error?.data, { cursor });
  }
});

Deno.test("a tampered, foreign or malformed cursor is refused naming the list", async () => {
  const server = listServer(catalogOf(ids(0, 60)));
  const cursor = (await modern<Page>(server, "resources/list")).result!.nextCursor!;
  assert.doesNotMatch(cursor, /^\d+$/, "a cursor is not an offset");
  const [payload, mac] = cursor.split(".");
  const forged = btoa(JSON.stringify(["resources/list", "demo://item/100"]))
    .replaceAll("=", "");
  const other = listServer(catalogOf(ids(0, 60)));
  const foreign = (await modern<Page>(other, "resources/list")).result!.nextCursor!;
  const flip = (s: string) => (s.startsWith("A") ? "B" : "A") + s.slice(1);
  // The last character of a 16-byte MAC carries 2 bits; its other spellings
  // decode to the same bytes and must still be refused.
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const respell = (s: string) => s.slice(0, -1) + ALPHABET[ALPHABET.indexOf(s.at(-1)!) ^ 1];
  const bad: unknown[] = [
    `${flip(payload)}.${mac}`,
    `${payload}.${flip(mac)}`,
    `${payload}.${respell(mac)}`,
    `${forged}.${mac}`,
    foreign,
    payload,
    "",
    "42",
    "not a cursor at all",
    null,
    7,
    { after: "x" },
  ];
  for (const revision of REVISIONS) {
    for (const value of bad) {
      const reply = await ask(server, revision, "resources/list", { cursor: value });
      assert.equal(reply.error?.code, -32602, JSON.stringify(value));
      assert.match(reply.error!.message, /^Invalid cursor for resources\/list: /);
    }
  }
});

Deno.test("replicas sharing a cursorKey accept each other's cursors", async () => {
  const cursorKey = new Uint8Array(32).fill(7);
  const [a, b] = [0, 1].map(() =>
    makeServer({
      catalog: catalogOf(ids(0, 60)),
      dispatch: () => ({ content: [] }),
      readResource: () => [],
      getPrompt: () => ({ messages: [] }),
      cursorKey,
    }).server
  );
  const cursor = (await modern<Page>(a, "tools/list")).result!.nextCursor!;
  const next = await modern<Page>(b, "tools/list", { cursor });
  assert.equal(next.result?.tools[0].name, "tool_050");
});

Deno.test("replicas sharing stateKeys page on each other across a key rotation", async () => {
  const k1 = new Uint8Array(32).fill(1);
  const k2 = new Uint8Array(32).fill(2);
  const serverWith = (keys: Uint8Array[]) =>
    makeServer({
      catalog: catalogOf(ids(0, 120)),
      dispatch: () => ({ content: [] }),
      readResource: () => [],
      getPrompt: () => ({ messages: [] }),
      stateKeys: new StateKeys({ keys }),
    }).server;
  const old = serverWith([k1]);
  const rotating = serverWith([k2, k1]);
  const rotated = serverWith([k2]);
  // A client pages on an old replica, then on one mid-rotation, then on a new one.
  const first = (await modern<Page>(old, "prompts/list")).result!;
  const second = (await modern<Page>(rotating, "prompts/list", { cursor: first.nextCursor }))
    .result!;
  const third = (await modern<Page>(rotated, "prompts/list", { cursor: second.nextCursor }))
    .result!;
  const names = [first, second, third].flatMap((p) => p.prompts.map((x) => x.name));
  assert.deepEqual(names, ids(0, 120).map((id) => `prompt_${id}`), "no loss, no repeat");
  assert.equal(third.nextCursor, undefined);
  // A cursor signed only with the retired key is refused, saying what to do.
  const stale = await modern<Page>(rotated, "prompts/list", { cursor: first.nextCursor });
  assert.equal(stale.error?.code, -32602);
  assert.match(stale.error!.message, /key no longer configured\); list again without a cursor/);
});

Deno.test("a cursor is bound to the caller it was issued to", async () => {
  const { server } = makeServer({
    catalog: catalogOf(ids(0, 120)),
    dispatch: () => ({ content: [] }),
    readResource: () => [],
    getPrompt: () => ({ messages: [] }),
  });
  const as = async (caller: string | undefined, params: Record<string, unknown> = {}) => {
    const reply = await server.handle(modernRequest("tools/list", params), {
      auth: caller === undefined ? undefined : { caller },
    });
    return JSON.parse(reply.body!) as { result?: Page; error?: { code: number; message: string } };
  };
  const alice = (await as("oauth:alice")).result!.nextCursor!;
  const bob = (await as("oauth:bob")).result!.nextCursor!;
  assert.notEqual(alice, bob, "the same page carries a different cursor per caller");
  assert.equal((await as("oauth:alice", { cursor: alice })).result?.tools[0].name, "tool_050");
  for (const [caller, cursor] of [["oauth:bob", alice], [undefined, alice], ["oauth:alice", bob]]) {
    const reply = await as(caller, { cursor });
    assert.equal(reply.error?.code, -32602, `${caller} with another's cursor`);
    assert.match(reply.error!.message, /not a cursor this server issued to this caller/);
  }
  // Pages are shared across callers; only the cursor differs (the second page, twice).
  const again = await as("oauth:bob", { cursor: bob });
  assert.equal(again.result?.tools[0].name, "tool_050");
  assert.notEqual(
    again.result?.nextCursor,
    (await as("oauth:alice", { cursor: alice })).result
      ?.nextCursor,
  );
});
