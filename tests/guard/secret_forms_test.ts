/**
 * A secret echoed by an upstream in any plausible encoding is redacted:
 * generated secrets in every encoding (raw, percent-encoded in four ways,
 * JSON-escaped three ways, HTML-escaped, base64/base64url padded or not,
 * inside longer base64 such as Basic credentials at every alignment, hex),
 * through the Redactor every mode shares; then through the shipped CLI in
 * spec mode (a JSON result, a raw-response text, an error excerpt) and in
 * serve-upstream (a tool result echoing the header it was sent).
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { McpServer } from "../../mod.ts";
import { createHttpHandler } from "../../mod.ts";
import { Redactor } from "../../src/guard/secrets.ts";
import { base64Holds, hexHolds, secretEchoes } from "../support/secret_echoes.ts";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { startWrapper, textOf, v2Http } from "../support/upstream_cli.ts";

const secrets = fc.oneof(
  fc.string({
    minLength: 8,
    maxLength: 48,
    unit: fc.constantFrom(..."abcXYZ0189+/=_-.~:@ &<>\"'%!"),
  }),
  fc.string({ minLength: 8, maxLength: 24, unit: "grapheme" }),
  fc.base64String({ minLength: 12, maxLength: 44 }),
);

function assertClean(text: string, secret: string, where: string): void {
  const echoes = secretEchoes(secret);
  for (const [how, echo] of Object.entries(echoes)) {
    assert.ok(!text.includes(echo.replace(/^Basic /, "")), `${where}: ${how} survives in ${text}`);
  }
  assert.ok(
    !base64Holds(text, secret),
    `${where}: a base64 run still decodes to the secret: ${text}`,
  );
  assert.ok(!hexHolds(text, secret), `${where}: hex survives: ${text}`);
}

Deno.test("Redactor: a generated secret is redacted in every echo, standing alone or amid text", () => {
  fc.assert(
    fc.property(secrets, fc.string({ maxLength: 6 }), (secret, around) => {
      fc.pre([...secret].length >= 8);
      const r = new Redactor();
      r.add(secret);
      for (const [how, echo] of Object.entries(secretEchoes(secret))) {
        const out = r.text(`${around}${echo}${around}`);
        assertClean(out, secret, how);
      }
    }),
    { numRuns: 150 },
  );
});

Deno.test("Redactor: the secret's own base64 or hex is replaced whole, leaving no character that carries its bits", () => {
  // issue 34 item 10 (mutation secret-11): without the unpadded base64url form,
  // its echo became "[redacted]" plus the last character (up to 4 bits of the
  // secret), matched only through the alignment cores. (Character-by-character
  // spellings may leave the tail of an escape whose character was matched
  // as itself: "%25" as "%" then "25"; no bit of the secret is left.)
  const whole = new Set(["base64", "base64 unpadded", "base64url", "hex", "hex upper"]);
  fc.assert(
    fc.property(secrets, (secret) => {
      fc.pre([...secret].length >= 8);
      const r = new Redactor();
      r.add(secret);
      for (const [how, echo] of Object.entries(secretEchoes(secret))) {
        if (whole.has(how)) assert.equal(r.text(echo), "[redacted]", `${how}: ${echo}`);
      }
    }),
    { numRuns: 150 },
  );
});

Deno.test("Redactor: a secret that is percent-encoded text is redacted decoded too (a password in a DSN)", () => {
  // issue 34 item 10 (mutation secret-15): an upstream that decodes what it was
  // sent echoes the text, not the encoding.
  for (
    const [secret, decoded] of [
      ["p%40ssw0rd%2Fadm%21n", "p@ssw0rd/adm!n"],
      ["s3cr3t+with%20spaces", "s3cr3t with spaces"],
      ["%E2%82%ACuro-k3y-9f8e", "\u20acuro-k3y-9f8e"],
    ]
  ) {
    const r = new Redactor();
    r.add(secret);
    assert.equal(r.text(`login failed for ${decoded}.`), "login failed for [redacted].", secret);
    assert.equal(r.text(`sent ${secret}`), "sent [redacted]", secret);
  }
});

Deno.test("Redactor: a secret that is itself base64 of text is redacted decoded too (a Basic credential's value)", () => {
  const credential = btoa("deploy-bot:hunter2hunter2");
  const r = new Redactor();
  r.add(credential);
  assert.equal(r.text("user deploy-bot:hunter2hunter2 logged in"), "user [redacted] logged in");
  assert.equal(r.text(`Basic ${credential}`), "Basic [redacted]");
});

Deno.test("Redactor: HTML numeric character references (&#60;, &#x3C;) of any character are redacted", () => {
  const secret = "tk<9f8e>'7d\"6c&\u{1f600}";
  const r = new Redactor();
  r.add(secret);
  const spelled = (ref: (code: number) => string) =>
    [...secret].map((c) => ref(c.codePointAt(0)!)).join("");
  for (
    const echo of [
      "tk&#60;9f8e&#62;&#39;7d&#34;6c&#38;\u{1f600}",
      "tk&#x3C;9f8e&#x3E;&#x27;7d&#x22;6c&#x26;\u{1f600}",
      "tk&#x3c;9f8e&#X3e;&#0039;7d&#x0022;6c&amp;&#128512;",
      spelled((n) => `&#${n};`),
      spelled((n) => `&#x${n.toString(16)};`),
      spelled((n) => `&#X${n.toString(16).toUpperCase()};`),
      spelled((n) => `&#000${n};`),
    ]
  ) {
    assert.equal(r.text(`before ${echo} after`), "before [redacted] after", echo);
  }
  // A reference that is not the secret's character stays as it is.
  assert.equal(r.text("tk&#61;9f8e"), "tk&#61;9f8e");
});

Deno.test("Redactor: HTML 5 named references of ASCII characters (&lowbar;, &sol;, any of a character's names) are redacted", () => {
  // PHP 8.2, htmlentities("sk_live.A/b:c+d=e!f(g)|{h}[i]\\j", ENT_QUOTES | ENT_HTML5):
  const php = "sk&lowbar;live&period;A&sol;b&colon;c&plus;d&equals;e&excl;f&lpar;g&rpar;&vert;" +
    "&lbrace;h&rcub;&lbrack;i&rsqb;&bsol;j";
  const secret = "sk_live.A/b:c+d=e!f(g)|{h}[i]\\j";
  const r = new Redactor();
  r.add(secret);
  for (
    const echo of [
      php,
      // The other names HTML 5 gives the same characters, and a mix with numeric ones.
      "sk&UnderBar;live.A/b:c+d=e!f(g)&VerticalLine;&lcub;h&rbrace;&lsqb;i&rbrack;\\j",
      "sk&#95;live&period;A&#x2F;b&colon;c+d=e!f(g)&verbar;{h}[i]&bsol;j",
    ]
  ) {
    assert.equal(r.text(`<p>${echo}</p>`), "<p>[redacted]</p>", echo);
  }
  const quoted = new Redactor();
  quoted.add(`a"b&c<d>e'f*g\tz`);
  assert.equal(quoted.text("a&QUOT;b&AMP;c&LT;d&GT;e&apos;f&midast;g&Tab;z"), "[redacted]");
  // A name of another character stays as it is.
  assert.equal(r.text("sk&lowbar;live&comma;A"), "sk&lowbar;live&comma;A");
});

Deno.test("Redactor: string-literal escapes (\\', \\xHH) of a secret are redacted, as PHP, Go and Python write them", () => {
  const secret = `tk+9f8e/7d6c==secret&<key>'"\\x`;
  const r = new Redactor();
  r.add(secret);
  for (
    const echo of [
      // PHP 8.2 addslashes and var_export, Go 1.x text/template JSEscapeString, Python 3 repr:
      `tk+9f8e/7d6c==secret&<key>\\'\\"\\\\x`,
      `'tk+9f8e/7d6c==secret&<key>\\'"\\\\x'`,
      `tk+9f8e/7d6c\\u003D\\u003Dsecret\\u0026\\u003Ckey\\u003E\\'\\"\\\\x`,
      // Every character but a letter or digit as \xHH (ESAPI), in either case:
      `tk\\x2B9f8e\\x2F7d6c\\x3d\\x3Dsecret\\x26\\x3Ckey\\x3e\\x27\\x22\\x5cx`,
    ]
  ) {
    assert.equal(r.text(`echo: ${echo};`).includes("tk"), false, echo);
  }
  // A \x escape of another character stays as it is.
  assert.equal(r.text(`tk\\x2A9f8e`), `tk\\x2A9f8e`);
});

const TOKEN = "tk+9f8e/7d6c==secret&<key>";

Deno.test("weir serve: an upstream echoing the credential in every encoding shows none of them", async () => {
  const upstream = await startRecorder((req) => {
    const echoes = secretEchoes(req.headers.get("x-key") ?? "");
    if (req.path.startsWith("/fail")) {
      return new Response(`denied: ${Object.values(echoes).join(" ")}`, { status: 401 });
    }
    if (req.path.startsWith("/text")) return new Response(Object.values(echoes).join("\n"));
    return Response.json({
      echoes,
      keys: Object.fromEntries(Object.values(echoes).map((e) => [e, 1])),
    });
  });
  const file = await tempGuardfile(`wrap ward mcp leaky {
    base-url "${upstream.url}"
    auth header-token { header "X-Key"; value env "LEAKY_KEY"; }
    can get json { path "/json"; }
    can get text { path "/text"; raw-response; }
    can get fail { path "/fail"; }
}
`);
  const server = await serveHttp(file, {
    env: { LEAKY_KEY: TOKEN, PATH: Deno.env.get("PATH") ?? "" },
  });
  try {
    for (const tool of ["get_json", "get_text", "get_fail"]) {
      const r = await fetch(`${server.url}/api/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      const text = await r.text();
      assert.equal(
        upstream.requests.at(-1)!.headers.get("x-key"),
        TOKEN,
        "the credential was sent",
      );
      // The answer as JSON text (escapes and all), and as the caller decodes it.
      assertClean(text, TOKEN, tool);
      assertClean(JSON.stringify(JSON.parse(text)), TOKEN, `${tool} decoded`);
      assert.match(text, /\[redacted\]/);
    }
    assert.ok(!server.stderr().includes(TOKEN));
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("weir serve-upstream: a tool result echoing the header secret in every encoding shows none of them", async () => {
  let lastKey = "";
  const mcp = new McpServer({
    name: "leaky-upstream",
    log: () => {},
    catalog: {
      tools: [{ name: "leak", inputSchema: { type: "object", properties: {} } }],
      resources: [],
      prompts: [],
    },
    dispatch: () => ({
      content: [{ type: "text", text: Object.values(secretEchoes(lastKey)).join("\n") }],
    }),
  });
  const handler = createHttpHandler(mcp, { authorize: () => true, allowedOrigins: [] });
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    lastKey = req.headers.get("x-api-key") ?? "";
    return handler(req);
  });
  const weir = await startWrapper([
    "--tool",
    "leak",
    "--upstream-header",
    "x-api-key={env:LEAKY_UP_KEY}",
    "--upstream",
    `http://127.0.0.1:${upstream.addr.port}/mcp`,
  ], { env: { LEAKY_UP_KEY: TOKEN } });
  const client = await v2Http(weir.url);
  try {
    const r = await client.callTool({ name: "leak", arguments: {} });
    assert.equal(lastKey, TOKEN, "the header was sent");
    assertClean(JSON.stringify(r), TOKEN, "serve-upstream result");
    assertClean(textOf(r), TOKEN, "serve-upstream text");
    assert.match(textOf(r), /\[redacted\]/);
  } finally {
    await client.close();
    await weir.stop();
    await upstream.shutdown();
  }
});
