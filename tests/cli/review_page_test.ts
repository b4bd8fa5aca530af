/**
 * The review pages through the shipped CLI, rendered by headless Chromium:
 * `weir describe FILE --format html` for every example guardfile (spec mode,
 * the AWS policies, and a file wrapping a real MCP server) shows every tool
 * the JSON surface names, with each withheld operation's reason, and loads
 * nothing beyond itself; `weir diff OLD NEW --format html` shows every change
 * `--format json` reports, widenings first; text taken from a guardfile stays
 * text (no element, no request, no hidden reordering); a screenshot is not
 * blank.
 *
 * The README's screenshot, docs/review-page.png, is this test's page of
 * guardfiles/github-issues.mcp.kdl (`WEIR_REVIEW_SCREENSHOT=docs/review-page.png`
 * writes it again).
 */
import assert from "node:assert/strict";
import * as upngModule from "@pdf-lib/upng";
import fc from "../support/property.ts";
import { ROOT, runCli, tempGuardfile } from "../support/cli.ts";
import { CHROMIUM, dumpDom, screenshot, servePages } from "../support/chromium.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { htmlText } from "../../src/modes/describe_html.ts";

if (!CHROMIUM) {
  console.error(
    "review_page_test: skipping the browser tests: no chromium (apt-get install chromium)",
  );
}

interface Tool {
  name: string;
  kind: string;
  withheld?: { reason: string };
}

/** Every tool name the dumped DOM holds a section for, in order. */
function sections(dom: string): { tool: string; kind: string }[] {
  return [
    ...dom.matchAll(
      /<section class="tool [^"]*" id="[^"]*" data-tool="([^"]*)" data-kind="([^"]*)"/g,
    ),
  ]
    .map((m) => ({ tool: unescape(m[1]), kind: m[2] }));
}

function unescape(text: string): string {
  return text.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

/** Text as Chromium serialises a text node (only &, < and > escaped). */
function domText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Describe FILE as JSON and as HTML with the real CLI. */
async function describeBoth(file: string): Promise<{ tools: Tool[]; html: string }> {
  const json = await runCli(["describe", "--format", "json", file]);
  assert.equal(json.code, 0, json.stderr);
  const html = await runCli(["describe", "--format", "html", file]);
  assert.equal(html.code, 0, html.stderr);
  return { tools: JSON.parse(json.stdout).tools, html: html.stdout };
}

const EXAMPLES = [...Deno.readDirSync(`${ROOT}guardfiles`)].map((e) => e.name)
  // These two start (or reach) a real MCP server: the wrap case below uses a local one.
  .filter((n) => n !== "everything.mcp.kdl" && n !== "github-mcp.mcp.kdl").sort();

Deno.test({
  name:
    "describe --format html: every example's page renders every tool and withheld reason, loading nothing else",
  ignore: !CHROMIUM,
  fn: async () => {
    assert.ok(EXAMPLES.length >= 9, EXAMPLES.join(" "));
    const upstream = await startSdkUpstream({
      revision: "2026-07-28",
      framing: "json",
      tools: [
        {
          name: "search_issues",
          description: "Searches issues.",
          inputSchema: {
            type: "object",
            properties: { org: { type: "string" }, limit: { type: "integer" } },
            required: ["org"],
          },
          annotations: { readOnlyHint: true },
        },
        { name: "delete_issue", inputSchema: { type: "object", properties: {} } },
      ],
    });
    const wrap = await tempGuardfile(`withhold "delete_issue" { reason "Issues are kept."; }
confirm "find" message="Search now?"
wrap ward mcp issues {
    mcp-server http "${upstream.url}"
    proxy find {
        upstream "search_issues"
        argument "org" { restrict "acme"; }
        argument "limit" maximum=50
    }
}
`);
    const files = [...EXAMPLES.map((n) => `guardfiles/${n}`), wrap];
    const described = await Promise.all(files.map(describeBoth));
    const pages = Object.fromEntries(described.map((d, i) => [`/${i}.html`, d.html]));
    const site = servePages(pages);
    try {
      for (const [i, d] of described.entries()) {
        const dom = await dumpDom(`${site.url}/${i}.html`);
        const shown = sections(dom);
        assert.deepEqual(
          shown.map((s) => s.tool).sort(),
          d.tools.map((t) => t.name).sort(),
          `${files[i]}: one section per tool`,
        );
        for (const t of d.tools) {
          assert.equal(shown.find((s) => s.tool === t.name)!.kind, t.kind, `${files[i]} ${t.name}`);
          if (t.kind === "withheld") {
            assert.ok(dom.includes(domText(t.withheld!.reason)), t.withheld!.reason);
          }
        }
        assert.match(dom, /<h1>/, `${files[i]} rendered`);
        assert.doesNotMatch(dom, /<script|<img|<iframe|<link rel="stylesheet"/i);
      }
      const wrapDom = await dumpDom(`${site.url}/${described.length - 1}.html`);
      assert.match(wrapDom, /MCP tool search_issues/);
      assert.match(wrapDom, /a person confirms each call first<\/b>: “Search now\?”/);
      assert.match(wrapDom, /<code>org<\/code>.*matches "acme"/s);
      // Only the pages themselves were asked for: no style sheet, font, icon or image.
      assert.deepEqual(
        [...new Set(site.requested)].sort(),
        Object.keys(pages).sort(),
        "nothing but the pages was requested",
      );
    } finally {
      await site.stop();
      await upstream.stop();
    }
  },
});

Deno.test({
  name:
    "describe --format html: a guardfile's own text stays text (no element, no request, bidi shown)",
  ignore: !CHROMIUM,
  fn: async () => {
    const site = servePages({});
    const file = await tempGuardfile(`withhold "drop_thing" {
    reason "<img src=\\"${site.url}/leak.png\\"> is not for agents"
}
wrap ward mcp t {
    base-url "https://api.example.com"
    auth none
    can get thing {
        path "/things/{id}"
        describe "<script>fetch('${site.url}/leak')</script> reads \\u{202e}evil\\u{202c} a thing"
    }
}
`);
    try {
      const { html } = await describeBoth(file);
      site.requested.length = 0;
      const pages = servePages({ "/p.html": html });
      try {
        const dom = await dumpDom(`${pages.url}/p.html`);
        assert.doesNotMatch(dom, /<script|<img/i);
        assert.match(dom, /&lt;script&gt;fetch\(/);
        assert.match(dom, /\\u202eevil\\u202c/, "a bidi override is shown, not obeyed");
        assert.deepEqual(site.requested, [], "the page's text made no request");
      } finally {
        await pages.stop();
      }
    } finally {
      await site.stop();
    }
  },
});

const OLD_DEMO = Deno.readTextFileSync(`${ROOT}guardfiles/demo.mcp.kdl`);
/** The demo with one thing of each kind changed. */
const NEW_DEMO = OLD_DEMO
  // widen: delete no longer withheld but granted; restrict loosened
  .replace(/withhold "delete_ticket" \{[^}]*\}\n/, "")
  .replace(`restrict board matches "demo-*"`, `restrict board matches "demo-*" "ops-*"`)
  .replace(
    `    can close ticket {`,
    `    can delete ticket {\n        path "/boards/{board}/tickets/{id}"\n    }\n    can close ticket {`,
  )
  // narrow: get ticket removed, a rate limit added
  .replace(/ {4}can get ticket \{[^}]*\}\n/, "")
  .replace(`instructions {`, `rate-limit "10/1m"\ninstructions {`)
  // other: the instructions changed
  .replace("Only boards whose name starts with demo- are reachable.", "Boards demo-* and ops-*.");

Deno.test({
  name: "diff --format html: every change --format json reports, widenings first, then narrowings",
  ignore: !CHROMIUM,
  fn: async () => {
    const oldFile = await tempGuardfile(OLD_DEMO);
    const newFile = await tempGuardfile(NEW_DEMO);
    const json = await runCli(["diff", "--format", "json", oldFile, newFile]);
    assert.equal(json.code, 0, json.stderr);
    const changes: { tool: string; effect: string; what: string }[] = JSON.parse(json.stdout)
      .changes;
    for (const effect of ["widen", "narrow", "change"]) {
      assert.ok(changes.some((c) => c.effect === effect), `the fixture has a ${effect}`);
    }
    const html = await runCli(["diff", "--format", "html", oldFile, newFile]);
    assert.equal(html.code, 0, html.stderr);
    const site = servePages({ "/diff.html": html.stdout });
    try {
      const dom = await dumpDom(`${site.url}/diff.html`);
      const rows = [
        ...dom.matchAll(
          /<tr class="(\w+)" data-effect="\w+" data-tool="([^"]*)"><td>.*?<\/td><td>.*?<\/td><td>(.*?)<\/td><\/tr>/g,
        ),
      ].map((m) => ({ effect: m[1], tool: unescape(m[2]), what: unescape(m[3]) }));
      const rank = { widen: 0, narrow: 1, change: 2 } as Record<string, number>;
      assert.deepEqual(
        rows.map((r) => rank[r.effect]),
        rows.map((r) => rank[r.effect]).sort(),
        "widenings first, then narrowings, then the rest",
      );
      assert.deepEqual(
        rows.map((r) => `${r.effect} ${r.tool} ${r.what}`).sort(),
        changes.map((c) => `${c.effect} ${c.tool} ${c.what}`).sort(),
        "every change, exactly as JSON reports it",
      );
      assert.match(dom, /lets an agent do more/);
      assert.deepEqual(site.requested, ["/diff.html"]);
    } finally {
      await site.stop();
    }
    // No change: the page says so.
    const same = await runCli(["diff", "--format", "html", oldFile, oldFile]);
    assert.equal(same.code, 0);
    assert.match(same.stdout, /No change in what an agent can do\./);
    assert.doesNotMatch(same.stdout, /data-effect=/);
  },
});

/** RGBA pixels of a PNG file. */
function pixels(png: Uint8Array): { width: number; height: number; rgba: Uint8Array } {
  // The package is CommonJS: its API sits on the default export's default.
  // deno-lint-ignore no-explicit-any
  const mod = upngModule as any;
  const UPNG = mod.default?.decode ? mod.default : mod.default.default;
  const image = UPNG.decode(png.slice().buffer);
  return {
    width: image.width,
    height: image.height,
    rgba: new Uint8Array(UPNG.toRGBA8(image)[0]),
  };
}

Deno.test({
  name: "describe --format html: a screenshot of the page is not blank",
  ignore: !CHROMIUM,
  fn: async () => {
    const { html } = await describeBoth("guardfiles/github-issues.mcp.kdl");
    const site = servePages({ "/review.html": html });
    const dir = await Deno.makeTempDir({ prefix: "weir-review-" });
    try {
      const file = `${dir}/review.png`;
      await screenshot(`${site.url}/review.html`, file);
      const png = Deno.readFileSync(file);
      const keep = Deno.env.get("WEIR_REVIEW_SCREENSHOT");
      if (keep) Deno.writeFileSync(`${ROOT}${keep}`, png);
      const { width, height, rgba } = pixels(png);
      assert.equal(width, 1280);
      const background = rgba.slice(0, 4).join(",");
      let differing = 0;
      const colours = new Set<string>();
      for (let i = 0; i < rgba.length; i += 4) {
        const colour = `${rgba[i]},${rgba[i + 1]},${rgba[i + 2]},${rgba[i + 3]}`;
        if (colour !== background) differing++;
        if (colours.size < 1000) colours.add(colour);
      }
      const share = differing / (width * height);
      assert.ok(share > 0.02, `ink covers ${(share * 100).toFixed(2)}% of the page`);
      assert.ok(colours.size > 16, `${colours.size} colours`);
    } finally {
      await site.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("htmlText(): no markup, quote or invisible reordering survives; the rest reads back as written", () => {
  const invisible =
    /[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]/;
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.constantFrom("<", ">", "&", '"', "'", "&amp;", "\u202e", "\n", "\u200b", "\ufeff"),
          fc.string({ unit: "binary", maxLength: 4 }),
        ),
      ).map((parts) => parts.join("")),
      (text) => {
        const out = htmlText(text);
        assert.doesNotMatch(out, /[<>"']/);
        assert.doesNotMatch(out, invisible);
        if (!invisible.test(text) && !text.includes("\\u")) assert.equal(unescape(out), text);
      },
    ),
  );
});

Deno.test("describe --format html names the callers' OAuth profile and audience and the token exchange, as the text does", async () => {
  const file = await tempGuardfile(`oauth issuer="https://example.okta.com/oauth2/default" \\
    resource="https://mcp.example.com/mcp" profile="okta" audience="api://default"
wrap ward mcp tickets {
    base-url "https://tickets.example.com/api"
    auth token-exchange {
        audience "api://tickets"
        client-id "0oa1weirexample"
        client-secret { value env "OKTA_WEIR_SECRET"; }
    }
    can get ticket { path "/tickets/{id}"; scope "tickets:read"; }
}
`);
  const text = await runCli(["describe", file]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /\(profile okta, audience api:\/\/default\)/);
  const { html } = await describeBoth(file);
  // Before, the page named the issuer and resource only: a reviewer saw no profile or audience.
  assert.match(html, /<\/code> \(profile okta, audience api:\/\/default\)/);
  assert.match(html, /exchanged per caller \(RFC 8693\) for audience api:\/\/tickets/);
});
