/**
 * Resources: what is advertised is what is readable. A URI is read only when
 * `resources/list` names it or a listed template matches it (`{var}` one
 * non-empty segment, `{+var}` across segments); anything else is "not found"
 * before the reader runs, with the code each revision names for it.
 */
import assert from "node:assert/strict";
import { NotFoundError, type ResourceContents } from "../../mod.ts";
import { ask, LEGACY, makeServer, MODERN, REVISIONS } from "../support/mcp.ts";

interface Read {
  uri: string;
  params: Record<string, string>;
}

const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x80, 0x7f]);

function resourceServer(answer?: (uri: string) => ResourceContents[]) {
  const reads: Read[] = [];
  const { server, events } = makeServer({
    catalog: {
      tools: [],
      // Deliberately unsorted: the lists come out sorted.
      resources: [
        { uri: "demo://places", name: "places", mimeType: "text/plain" },
        { uriTemplate: "demo://users/{id}", name: "user" },
        { uri: "demo://logo.png", name: "logo", mimeType: "image/png" },
        { uriTemplate: "demo://files/{+path}", name: "file" },
        { uri: "demo://a-first", name: "first" },
        { uriTemplate: "demo://orgs/{org}/repos/{repo}", name: "repo" },
      ],
      prompts: [],
    },
    readResource: (uri, ctx) => {
      reads.push({ uri, params: ctx.params });
      if (answer) return answer(uri);
      if (uri === "demo://logo.png") return [{ uri, mimeType: "image/png", blob: PNG_BYTES }];
      return [{ uri, mimeType: "text/plain", text: `contents of ${uri}` }];
    },
  });
  return { server, reads, events };
}

type Contents = { contents: { uri: string; text?: string; blob?: string; mimeType?: string }[] };

Deno.test("resources/list and resources/templates/list are sorted by uri and uriTemplate", async () => {
  const { server } = resourceServer();
  for (const revision of REVISIONS) {
    const list = await ask<{ resources: { uri: string }[] }>(server, revision, "resources/list");
    assert.deepEqual(list.result?.resources.map((r) => r.uri), [
      "demo://a-first",
      "demo://logo.png",
      "demo://places",
    ]);
    const templates = await ask<{ resourceTemplates: { uriTemplate: string; name: string }[] }>(
      server,
      revision,
      "resources/templates/list",
    );
    assert.deepEqual(templates.result?.resourceTemplates, [
      { uriTemplate: "demo://files/{+path}", name: "file" },
      { uriTemplate: "demo://orgs/{org}/repos/{repo}", name: "repo" },
      { uriTemplate: "demo://users/{id}", name: "user" },
    ]);
  }
});

Deno.test("a listed URI is read as text", async () => {
  const { server, reads } = resourceServer();
  for (const revision of REVISIONS) {
    const reply = await ask<Contents>(server, revision, "resources/read", { uri: "demo://places" });
    assert.deepEqual(reply.result?.contents, [
      { uri: "demo://places", mimeType: "text/plain", text: "contents of demo://places" },
    ]);
  }
  assert.deepEqual(reads, [
    { uri: "demo://places", params: {} },
    { uri: "demo://places", params: {} },
  ]);
});

Deno.test("blob bytes go out base64-encoded", async () => {
  const { server } = resourceServer();
  for (const revision of REVISIONS) {
    const reply = await ask<Contents>(server, revision, "resources/read", {
      uri: "demo://logo.png",
    });
    const [item] = reply.result!.contents;
    assert.equal(item.text, undefined);
    assert.equal(item.mimeType, "image/png");
    assert.deepEqual(Uint8Array.from(atob(item.blob!), (c) => c.charCodeAt(0)), PNG_BYTES);
  }
});

Deno.test("{var} matches one non-empty segment and hands the value to the reader", async () => {
  const { server, reads } = resourceServer();
  const ok = await ask<Contents>(server, MODERN, "resources/read", { uri: "demo://users/42" });
  assert.equal(ok.result?.contents[0].uri, "demo://users/42");
  const two = await ask(server, MODERN, "resources/read", {
    uri: "demo://orgs/acme/repos/rocket%20ship",
  });
  assert.equal(two.error, undefined);
  assert.deepEqual(reads, [
    { uri: "demo://users/42", params: { id: "42" } },
    {
      uri: "demo://orgs/acme/repos/rocket%20ship",
      params: { org: "acme", repo: "rocket%20ship" },
    },
  ]);
});

Deno.test("{+var} matches across segments", async () => {
  const { server, reads } = resourceServer();
  const reply = await ask<Contents>(server, LEGACY, "resources/read", {
    uri: "demo://files/docs/2026/notes.txt",
  });
  assert.equal(reply.result?.contents[0].text, "contents of demo://files/docs/2026/notes.txt");
  assert.deepEqual(reads[0].params, { path: "docs/2026/notes.txt" });
});

Deno.test("an unlisted, unmatched URI is not found before the reader runs", async () => {
  const { server, reads } = resourceServer();
  const unreadable = [
    "demo://nowhere",
    "demo://places/",
    "demo://PLACES",
    "demo://users/", // {var} is non-empty
    "demo://users/4/2", // {var} is one segment
    "demo://users/42?x=1",
    "demo://users/42#top",
    "demo://users/..",
    "demo://users/%2e%2e",
    "demo://files/", // {+var} is non-empty
    "demo://files/docs/../../secret", // no dot segments
    "other://places",
  ];
  for (const uri of unreadable) {
    const legacy = await ask(server, LEGACY, "resources/read", { uri });
    assert.equal(legacy.error?.code, -32002, uri);
    assert.deepEqual(legacy.error?.data, { uri });
    const current = await ask(server, MODERN, "resources/read", { uri });
    assert.equal(current.error?.code, -32602, uri);
    assert.deepEqual(current.error?.data, { uri });
  }
  assert.deepEqual(reads, []);
});

Deno.test("a reader's NotFoundError or empty answer is the same not-found, with the reason", async () => {
  const { server } = resourceServer((uri) => {
    if (uri === "demo://users/gone") throw new NotFoundError("user was deleted");
    return [];
  });
  for (const revision of REVISIONS) {
    const code = revision === LEGACY ? -32002 : -32602;
    const gone = await ask(server, revision, "resources/read", { uri: "demo://users/gone" });
    assert.equal(gone.error?.code, code);
    assert.deepEqual(gone.error?.data, { uri: "demo://users/gone", reason: "user was deleted" });
    const empty = await ask(server, revision, "resources/read", { uri: "demo://places" });
    assert.equal(empty.error?.code, code);
    assert.deepEqual(empty.error?.data, { uri: "demo://places" });
  }
});

Deno.test("a reader item with both text and blob, or neither, is an internal error", async () => {
  const { server, events } = resourceServer((uri) =>
    uri === "demo://places"
      ? [{ uri, text: "t", blob: new Uint8Array([1]) } as unknown as ResourceContents]
      : [{ uri, blob: "already-base64" } as unknown as ResourceContents]
  );
  for (const uri of ["demo://places", "demo://logo.png"]) {
    for (const revision of REVISIONS) {
      const reply = await ask(server, revision, "resources/read", { uri });
      assert.equal(reply.error?.code, -32603);
      assert.equal(reply.error?.message, "Internal error");
    }
  }
  assert.match(JSON.stringify(events), /both text and blob/);
  assert.match(JSON.stringify(events), /neither text nor blob bytes/);
});

Deno.test("resources/read without a uri is -32602", async () => {
  const { server } = resourceServer();
  for (const revision of REVISIONS) {
    const reply = await ask(server, revision, "resources/read", {});
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error!.message, /needs params\.uri/);
  }
});
