/**
 * `weir describe` shows every field of the surface model a reviewer signs off
 * (issue 35 item 3): the fixed headers, the connection to a wrapped server,
 * the `surface` settings, instructions, resources, prompts and icons, a
 * tool's title, hints and answer handling, in text and on the review page;
 * no literal (a pin, a header, a store URL) in any format; and, as a CI job
 * runs it, without the variables only serving reads (an inbound token's, the
 * rate-limit store's), for a spec file and a file that wraps an MCP server.
 */
import assert from "node:assert/strict";
import { FULL_SPEC } from "../surface/fixtures.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";
import { startMcpUpstream } from "../support/mcp_upstream.ts";

const LITERALS = ["PIN-LITERAL-5b1e", "HEADER-LITERAL-77c2", "redis://127.0.0.1:6379"];

const SPEC = FULL_SPEC.replace(
  `pin "get_item" {`,
  `pin "get_file" { query "sig" literal "${LITERALS[0]}" secret=#true; }\npin "get_item" {`,
).replace(
  `header "Accept" "application/json"`,
  `header "Accept" "application/json"\n    header "X-Tenant" "${LITERALS[1]}"`,
);

function wrapFile(url: string): string {
  return `inbound-token ci { value env "WEIR_TEST_UNSET_CI"; tools "echo"; }
rate-limit "10/1m" { store redis env "WEIR_TEST_UNSET_REDIS"; }
pin "echo" { argument "message" literal "${LITERALS[0]}" secret=#true; }
surface schema-profile="gemini" max-tool-tokens=500
instructions { text "Echo only."; }
wrap ward mcp rec {
    mcp-server http "${url}" {
        header "X-Tenant" "${LITERALS[1]}"
        request-timeout "30s"
        max-staleness "1m"
    }
    proxy echo {
        title "Echo it"
        annotations idempotent=#true open-world=#false
    }
}
`;
}

const env = (): Record<string, string> => {
  const out = { ...Deno.env.toObject() };
  delete out.WEIR_TEST_UNSET_CI;
  delete out.WEIR_TEST_UNSET_REDIS;
  return out;
};

async function describeAll(file: string) {
  const out: Record<string, string> = {};
  for (const format of ["text", "json", "html", "openapi"]) {
    const r = await runCli(["describe", "--format", format, file], { env: env() });
    assert.equal(r.code, 0, `${format}: ${r.stderr}`);
    for (const literal of LITERALS) {
      assert.ok(!r.stdout.includes(literal), `${format} shows the literal ${literal}`);
    }
    out[format] = r.stdout;
  }
  return out;
}

Deno.test("describe shows a spec file's headers, settings, texts and answer handling; no literal", async () => {
  const out = await describeAll(await tempGuardfile(SPEC));
  for (
    const words of [
      "header x-tenant: a literal (not shown)",
      "schema profile gemini",
      "max-tokens 4000",
      "max-tool-tokens 400",
      'instructions "Be brief."',
      "resource notes",
      "prompt triage",
      "icon https://x.example/icon.png",
      "fail-when: an answer matching error != null is an error",
      "raw-response: the answer is passed through as text",
    ]
  ) {
    assert.ok(out.text.includes(words), `text: ${words}\n${out.text}`);
    const [label, rest] = words.split(/:? (.*)/s);
    assert.ok(
      out.html.includes(label) && out.html.includes(rest.replaceAll('"', "&quot;")),
      `html: ${words}`,
    );
  }
});

Deno.test("describe of a wrap file needs no inbound token or store variable, and shows its fields", async () => {
  const up = await startMcpUpstream();
  try {
    const out = await describeAll(await tempGuardfile(wrapFile(up.url)));
    for (
      const words of [
        "header x-tenant: a literal (not shown)",
        "connection request-timeout 30000 ms, max-staleness 60000 ms",
        "schema profile gemini",
        "max-tool-tokens 500",
        'instructions "Echo only."',
        "title: Echo it",
        "hints: idempotent yes, open world no",
      ]
    ) {
      assert.ok(out.text.includes(words), `text: ${words}\n${out.text}`);
    }
    assert.match(out.text, /inbound token ci \(read from env WEIR_TEST_UNSET_CI\) may call echo/);
    assert.match(out.html, /title: Echo it/);
    const tool = JSON.parse(out.json).tools.find((t: { name: string }) => t.name === "echo");
    assert.equal(tool.pins[0].secret, true);
  } finally {
    await up.stop();
  }
});

Deno.test("describe of an AWS policy shows the policy's limits and each argument's type as its schema states", async () => {
  const file = await tempGuardfile(`wrap ward mcp aws s3 {
    bucket "assets"
    base-url "https://files.example.com"
    content-type "image/png"
    can put object
    can list objects
}
`);
  const r = await runCli(["describe", "--format", "json", file]);
  assert.equal(r.code, 0, r.stderr);
  const tools = JSON.parse(r.stdout).tools as {
    name: string;
    arguments: { name: string; type: string }[];
  }[];
  const types = Object.fromEntries(
    tools.flatMap((t) => t.arguments.map((a) => [`${t.name}.${a.name}`, a.type])),
  );
  // list_objects' prefix is {type: ["string", "null"]}: it was "any".
  assert.equal(types["list_objects.prefix"], "string|null");
  assert.equal(types["put_object.key"], "string");
  const text = await runCli(["describe", file]);
  assert.match(text.stdout, /argument prefix: string\|null \(optional\)/);
  // The policy's own limits, which no tool schema states, are shown to the reviewer.
  const html = await runCli(["describe", "--format", "html", file]);
  for (const page of [text.stdout, html.stdout]) {
    assert.match(page, /content-types image\/png/);
    assert.match(page, /max-bytes 8388608/);
    assert.match(page, /base-url https:\/\/files\.example\.com/);
  }
});
