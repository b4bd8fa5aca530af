/** `--upstream-header` templates: parsing, refusals, per-request resolution, no value in errors. */
import assert from "node:assert/strict";
import {
  HeaderError,
  parseHeaderTemplates,
  RESERVED_UPSTREAM_HEADERS,
  resolveHeaders,
  type SecretSource,
} from "../../src/mcp_upstream/headers.ts";
import { RESERVED_HEADERS } from "../../src/guardfile/mcp_wrap_server.ts";

function source(env: Record<string, string>, files: Record<string, string> = {}): SecretSource {
  return {
    env: (name) => env[name],
    readFile: (path) => {
      if (!(path in files)) throw new Deno.errors.NotFound(path);
      return files[path];
    },
  };
}

Deno.test("header templates: spans with literal text around them, canonical names", () => {
  const [a, b] = parseHeaderTemplates([
    "authorization=Bearer {env:TOKEN}",
    "x-api-key={file:/run/key}{literal:-v2}",
  ]);
  assert.equal(a.name, "Authorization");
  assert.equal(b.name, "X-Api-Key");
  const resolved = resolveHeaders([a, b], source({ TOKEN: "tok-123456" }, { "/run/key": "k\n" }));
  assert.deepEqual(resolved.headers, { Authorization: "Bearer tok-123456", "X-Api-Key": "k-v2" });
  assert.deepEqual(resolved.secrets, ["tok-123456", "k"], "literals are not secrets");
});

Deno.test("header templates: refusals name the header and the fix", () => {
  for (
    const [spec, message] of [
      ["NoEquals", /Name=template/],
      ["Bad Name={env:X}", /token/],
      ["X:Y={env:X}", /token/],
      ["Mcp-Session-Id={env:X}", /sets this header itself/],
      ["Host={env:X}", /sets this header itself/],
      ["X-Key=plain text secret", /no \{env:VAR\}/],
      ["X-Key={vault:path}", /unknown provider/],
      ["X-Key={env:}", /names nothing/],
      ["X-Key=a\n{env:X}", /newline/],
    ] as const
  ) assert.throws(() => parseHeaderTemplates([spec]), message, spec);
  assert.throws(() => parseHeaderTemplates(["x-a={env:A}", "X-A={env:B}"]), /given twice/);
});

Deno.test("header values are resolved per call and never appear in an error", () => {
  const templates = parseHeaderTemplates(["X-Key={env:KEY}"]);
  const env: Record<string, string> = { KEY: "first-value" };
  const src = source(env);
  assert.equal(resolveHeaders(templates, src).headers["X-Key"], "first-value");
  env.KEY = "second-value";
  assert.equal(resolveHeaders(templates, src).headers["X-Key"], "second-value");
  env.KEY = "bad\nsecret-value";
  assert.throws(
    () => resolveHeaders(templates, src),
    (e: Error) =>
      e instanceof HeaderError && /newline/.test(e.message) && !e.message.includes("secret-value"),
  );
  delete env.KEY;
  assert.throws(() => resolveHeaders(templates, src), /KEY is not set/);
  assert.throws(
    () => resolveHeaders(parseHeaderTemplates(["X-Key={file:/nope}"]), src),
    /file \/nope: no such file/,
  );
});

Deno.test("reserved headers: the flag and the guardfile form refuse the same names, each one", () => {
  assert.deepEqual([...RESERVED_UPSTREAM_HEADERS].sort(), [...RESERVED_HEADERS].sort());
  for (const name of RESERVED_UPSTREAM_HEADERS) {
    const spelled = name.replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase());
    assert.throws(
      () => parseHeaderTemplates([`${spelled}={literal:x}`]),
      (e) => e instanceof HeaderError && e.message.includes("sets this header itself"),
      name,
    );
  }
});
