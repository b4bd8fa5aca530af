/**
 * `extract "<tool>" as="pdf-text"|"feed-entries"` through the real CLI,
 * against a local upstream serving PDFs made here (with npm:pdf-lib) and RSS
 * and Atom feeds written here: text and entries with their coverage, bounds,
 * malformed documents and non-feeds as tool errors, the size gate and the
 * parse deadline.
 */
import assert from "node:assert/strict";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";

async function makePdf(pages: number): Promise<Uint8Array<ArrayBuffer>> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    doc.addPage([300, 200]).drawText(`Page ${i} of the report`, { x: 20, y: 100, size: 12, font });
  }
  return new Uint8Array(await doc.save());
}

const RSS = `<?xml version="1.0"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
  <title>Status notes</title>
  <item><title>First</title><link>https://n.example/1</link><guid>n-1</guid>
    <pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate><category>ops</category><category>db</category>
    <description>&lt;p&gt;a long html body&lt;/p&gt;</description><dc:creator>ana</dc:creator></item>
  <item><title>Second</title><link>https://n.example/2</link></item>
  <item><title>Third</title></item>
</channel></rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Releases</title>
  <entry><title>v2</title><link rel="alternate" href="https://r.example/v2"/><id>tag:r,2:v2</id>
    <updated>2026-11-02T00:00:00Z</updated><published>2026-11-01T00:00:00Z</published>
    <author><name>Bo</name></author><category term="release"/><content>big body</content></entry>
  <entry><title>v1</title><id>tag:r,2:v1</id></entry>
</feed>`;

Deno.test("extract pdf-text and feed-entries through weir serve", async (t) => {
  const pdf3 = await makePdf(3);
  const pdf30 = await makePdf(30);
  const bodies: Record<string, [string, BodyInit]> = {
    "/r/three.pdf": ["application/pdf", pdf3],
    "/r/thirty.pdf": ["application/pdf", pdf30],
    "/r/broken.pdf": ["application/pdf", "%PDF-1.7\nthis is not really a pdf"],
    "/f/rss": ["application/rss+xml", RSS],
    "/f/atom": ["application/atom+xml", ATOM],
    "/f/empty": ["application/rss+xml", `<rss><channel><title>Quiet</title></channel></rss>`],
    "/f/rdf": [
      "application/rdf+xml",
      `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
        <channel><title>Old style</title></channel>
        <item><title>One</title><link>https://o.example/1</link></item>
        <item><title>Two</title></item>
      </rdf:RDF>`,
    ],
    "/f/controls": [
      "application/rss+xml",
      `<rss version="2.0"><channel><title>Ctl</title><item><title><![CDATA[\u001b[31mred\u001b[0m \u0007bell]]></title>` +
      `<link>https://c.example/\u009b2J</link></item><item><title>tail\u009b</title></item></channel></rss>`,
    ],
    "/f/bare": ["application/rss+xml", `<rss version="2.0"><channel/></rss>`],
    "/f/bare-atom": ["application/atom+xml", `<feed xmlns="http://www.w3.org/2005/Atom"></feed>`],
    "/f/html": ["text/html", "<html><body>not a feed</body></html>"],
    "/f/junk": ["text/plain", "<<<< not xml at all"],
  };
  const upstream = await startRecorder((req) => {
    const hit = bodies[req.path];
    return hit
      ? new Response(hit[1], { headers: { "content-type": hit[0] } })
      : new Response("missing", { status: 404 });
  });
  const file = await tempGuardfile(`extract "get_report" as="pdf-text"
extract "get_long" as="pdf-text" max-pages="5"
extract "get_feed" as="feed-entries" max-items="2"
wrap ward mcp docs {
    base-url "${upstream.url}"
    auth none
    can get report { path "/r/{name}"; raw-response }
    can get long { path "/r/thirty.pdf"; raw-response }
    can get feed { path "/f/{name}"; raw-response }
}
`);
  const server = await serveHttp(file);
  type Env = {
    coverage: {
      pages?: { shown: number; total: number };
      entries?: { shown: number; total: number };
      truncated: boolean;
    };
    result: Record<string, unknown>;
  };
  const ok = async (tool: string, args: Record<string, unknown>) => {
    const r = await callApi(server.url, tool, args);
    assert.equal(r.status, 200, r.text);
    return r.body.structuredContent as Env;
  };
  try {
    await t.step("a PDF becomes text per page, with pages shown of total", async () => {
      const env = await ok("get_report", { name: "three.pdf" });
      assert.deepEqual(env.result.pages, [
        { page: 1, text: "Page 1 of the report" },
        { page: 2, text: "Page 2 of the report" },
        { page: 3, text: "Page 3 of the report" },
      ]);
      assert.deepEqual(env.coverage.pages, { shown: 3, total: 3 });
      const long = await ok("get_long", {});
      assert.deepEqual(long.coverage.pages, { shown: 5, total: 30 });
      assert.equal((long.result.pages as unknown[]).length, 5);
    });

    await t.step("a broken PDF is a tool error, and the server keeps serving", async () => {
      const r = await callApi(server.url, "get_report", { name: "broken.pdf" });
      assert.equal(r.status, 502);
      assert.equal(r.body.isError, true);
      assert.match(r.text, /^extract_failed: get_report answered a PDF weir cannot read/);
      assert.equal((await callApi(server.url, "get_report", { name: "three.pdf" })).status, 200);
    });

    await t.step("RSS becomes entries; the body is dropped; max-items bounds them", async () => {
      const env = await ok("get_feed", { name: "rss" });
      assert.equal(env.result.title, "Status notes");
      assert.deepEqual(env.result.entries, [
        {
          title: "First",
          link: "https://n.example/1",
          author: "ana",
          id: "n-1",
          published: "Mon, 30 Nov 2026 10:00:00 GMT",
          categories: ["ops", "db"],
        },
        { title: "Second", link: "https://n.example/2" },
      ]);
      assert.deepEqual(env.coverage.entries, { shown: 2, total: 3 });
      assert.doesNotMatch(JSON.stringify(env), /long html body/);
    });

    await t.step("RSS 1.0 (RDF) lands in the same shape", async () => {
      const env = await ok("get_feed", { name: "rdf" });
      assert.deepEqual(env.result, {
        title: "Old style",
        entries: [{ title: "One", link: "https://o.example/1" }, { title: "Two" }],
      });
      assert.deepEqual(env.coverage.entries, { shown: 2, total: 2 });
    });

    await t.step("Atom lands in the same shape", async () => {
      const env = await ok("get_feed", { name: "atom" });
      assert.deepEqual(env.result, {
        title: "Releases",
        entries: [
          {
            title: "v2",
            link: "https://r.example/v2",
            author: "Bo",
            id: "tag:r,2:v2",
            published: "2026-11-01T00:00:00Z",
            updated: "2026-11-02T00:00:00Z",
            categories: ["release"],
          },
          { title: "v1", id: "tag:r,2:v1" },
        ],
      });
      assert.deepEqual(env.coverage.entries, { shown: 2, total: 2 });
    });

    await t.step("control characters in a feed are cleaned in the text block too", async () => {
      const r = await callApi(server.url, "get_feed", { name: "controls" });
      assert.equal(r.status, 200, r.text);
      // The text block is the JSON of structuredContent, not of the uncleaned entries (whose
      // text, cleaned afterwards, lost `","` to a C1 CSI ending a title: not JSON at all).
      assert.equal(r.text, JSON.stringify(r.body.structuredContent));
      assert.deepEqual((r.body.structuredContent as Env).result.entries, [
        { title: "red \ufffdbell", link: "https://c.example/" },
        { title: "tail" },
      ]);
      assert.doesNotMatch(r.text, /\\u00(1b|07|9b)/);
    });

    await t.step("an empty feed is 0 of 0; a non-feed is a tool error", async () => {
      const empty = await ok("get_feed", { name: "empty" });
      assert.deepEqual(empty.result.entries, []);
      assert.deepEqual(empty.coverage.entries, { shown: 0, total: 0 });
      for (const name of ["bare", "bare-atom"]) {
        const bare = await ok("get_feed", { name });
        assert.deepEqual(bare.result, { entries: [] });
        assert.deepEqual(bare.coverage.entries, { shown: 0, total: 0 });
      }
      for (const name of ["html", "junk"]) {
        const r = await callApi(server.url, "get_feed", { name });
        assert.equal(r.status, 502, r.text);
        assert.match(
          r.text,
          /^extract_failed: get_feed answered a feed weir cannot read: not a feed/,
        );
      }
    });
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("extract: a parse past the deadline is stopped; an oversized feed is refused unparsed", async () => {
  const pdf = await makePdf(30);
  const big = `<rss><channel>${"<item><title>x</title></item>".repeat(400_000)}</channel></rss>`;
  const upstream = await startRecorder((req) =>
    req.path === "/big"
      ? new Response(big, { headers: { "content-type": "application/rss+xml" } })
      : new Response(pdf, { headers: { "content-type": "application/pdf" } })
  );
  const file = await tempGuardfile(`extract "get_doc" as="pdf-text" max-pages="200"
extract "get_big" as="feed-entries"
wrap ward mcp docs {
    base-url "${upstream.url}"
    auth none
    can get doc { path "/doc"; raw-response }
    can get big { path "/big"; raw-response }
}
`);
  const hurried = await serveHttp(file, { extra: ["--upstream-timeout", "100"] });
  const roomy = await serveHttp(file, {
    extra: ["--max-response-bytes", String(16 * 1024 * 1024)],
  });
  try {
    const late = await callApi(hurried.url, "get_doc", {});
    assert.equal(late.status, 504, late.text);
    assert.match(
      late.text,
      // The deadline as set (100 ms), never what was left of it. On a busy machine the
      // deadline may pass before the answer even arrives; every phase names the setting.
      /^(?:extract_timeout: parsing the PDF from get_doc passed the 100 ms deadline and was stopped|upstream_timeout: GET \/doc did not (?:answer|finish) within 100 ms)/,
    );
    const big = await callApi(roomy.url, "get_big", {});
    assert.equal(big.status, 502, big.text);
    assert.match(
      big.text,
      /^extract_too_large: get_big answered a feed of \d+ bytes, over the 8388608-byte gate/,
    );
  } finally {
    await hurried.stop();
    await roomy.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("lint: extract needs raw-response on its grant", async () => {
  const file = await tempGuardfile(
    `extract "get_json" as="pdf-text"\nwrap ward mcp d {\n  base-url "https://d.example"\n  auth none\n  can get json { path "/j" }\n}\n`,
  );
  try {
    const r = await runCli(["lint", file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /:1:1: .*extract "get_json" needs the grant to declare raw-response/);
  } finally {
    await Deno.remove(file);
  }
});
