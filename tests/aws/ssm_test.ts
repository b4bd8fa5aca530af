/**
 * `weir serve-ssm` end to end, as a user runs it: the shipped CLI with the
 * example policy, the official clients (v1 over stdio, v2 over HTTP pinned to
 * 2026-07-28) and the HTTP tool API, against a local SSM endpoint that checks
 * every request's SigV4 signature with the AWS SDK's signer and serves
 * `GetParameter` only when the request is shaped as AWS expects.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { adaptSdkClient, type ClientAdapter } from "../e2e/scenario.ts";
import { callApi, ROOT, runCli, serveHttp, tempGuardfile, weirCommand } from "../support/cli.ts";
import { awsEnv, CREDENTIALS, startSsmEndpoint, type TestServer } from "../support/aws.ts";

const POLICY = "guardfiles/ssm-forgejo-token.mcp.kdl";
const DECLARED = "/forgejo/coilyco-ops/read-token";
const VALUE = "fj-read-token-VALUE-7f3a9c1e5b";
const UNDECLARED = "/forgejo/coilyco-ops/admin-token";
const UNDECLARED_VALUE = "fj-admin-token-VALUE-0d2e4f";

function endpoint(): TestServer {
  return startSsmEndpoint({
    [DECLARED]: { type: "SecureString", value: VALUE, version: 3 },
    [UNDECLARED]: { type: "SecureString", value: UNDECLARED_VALUE },
  });
}

const SECRETS = [
  CREDENTIALS.secretAccessKey,
  CREDENTIALS.sessionToken,
  VALUE,
  UNDECLARED_VALUE,
];

function assertNoSecrets(text: string, where: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} carries a secret`);
}

/** The behaviour every client must see; `ssm` is the endpoint the server uses. */
async function readsOnlyTheDeclared(
  t: Deno.TestContext,
  client: ClientAdapter,
  ssm: TestServer,
): Promise<void> {
  await t.step("lists the getter and the convenience tool", async () => {
    const tools = await client.list();
    assert.deepEqual(tools.map((x) => x.name).sort(), ["get_forgejo_read_token", "get_parameter"]);
    const getter = tools.find((x) => x.name === "get_parameter")!;
    assert.deepEqual(getter.inputSchema.required, ["name"]);
    assert.equal(getter.inputSchema.additionalProperties, false);
  });

  await t.step("reads the declared parameter, decrypted", async () => {
    const before = ssm.requests.length;
    const out = await client.call("get_parameter", { name: DECLARED });
    assert.equal(out.isError, false, out.text);
    assert.deepEqual(out.structured, {
      name: DECLARED,
      type: "SecureString",
      value: VALUE,
      version: 3,
    });
    assert.deepEqual(JSON.parse(out.text), out.structured);
    const sent = ssm.requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].refused, undefined, "the signature verified");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(sent[0].body)), {
      Name: DECLARED,
      WithDecryption: true,
    });
  });

  await t.step("the convenience tool reads the same parameter without arguments", async () => {
    const out = await client.call("get_forgejo_read_token", {});
    assert.equal(out.isError, false, out.text);
    assert.equal((out.structured as { value: string }).value, VALUE);
  });

  await t.step("refuses any other name before AWS sees a request", async () => {
    const before = ssm.requests.length;
    for (const name of [UNDECLARED, `${DECLARED}:1`, `${DECLARED}/`, DECLARED.toUpperCase(), ""]) {
      const out = await client.call("get_parameter", { name });
      assert.equal(out.isError, true, name);
      assert.match(out.text, /policy_denied: .*outside this policy.*nothing was sent to AWS/);
      assertNoSecrets(out.text, "the refusal");
    }
    assert.equal(ssm.requests.length, before, "the endpoint saw no request");
  });
}

Deno.test("serve-ssm over stdio with the v1 client", async (t) => {
  const ssm = endpoint();
  const { command, args } = weirCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "serve-ssm", POLICY, "--stdio"],
    cwd: ROOT,
    env: awsEnv({ AWS_ENDPOINT_URL_SSM: ssm.url }),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new ClientV1({ name: "ssm-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await readsOnlyTheDeclared(t, adaptSdkClient(client), ssm);
  } finally {
    await client.close();
    await ssm.close();
  }
  await t.step("audit lines name tool, parameter and outcome; no secret in the log", () => {
    const lines = stderr.trim().split("\n").map((l) => JSON.parse(l));
    const calls = lines.filter((l) => l.event === "tool_call");
    assert.ok(
      calls.some((l) =>
        l.tool === "get_parameter" && l.outcome === "ok" && l.parameter === DECLARED
      ),
    );
    assert.ok(
      lines.some((l) =>
        l.event === "refused" && l.rule === "undeclared_parameter" && l.status === 403
      ),
    );
    assert.ok(lines.some((l) => l.event === "serving" && l.mode === "aws-ssm"));
    assertNoSecrets(stderr, "stderr");
  });
});

Deno.test("serve-ssm over HTTP with the v2 client (2026-07-28) and the tool API", async (t) => {
  const ssm = endpoint();
  // AWS_ENDPOINT_URL is the fallback when no service-specific variable is set.
  const served = await serveHttp(POLICY, {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL: ssm.url }),
  });
  const client = new ClientV2(
    { name: "ssm-test", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
    await readsOnlyTheDeclared(t, adaptSdkClient(client), ssm);
    await t.step(
      "POST /api/get_parameter: 200 for the declared name, 403 for another",
      async () => {
        const ok = await callApi(served.url, "get_parameter", { name: DECLARED });
        assert.equal(ok.status, 200);
        assert.equal((ok.body.structuredContent as { value: string }).value, VALUE);
        const before = ssm.requests.length;
        const denied = await callApi(served.url, "get_parameter", { name: UNDECLARED });
        assert.equal(denied.status, 403);
        assert.equal(ssm.requests.length, before);
      },
    );
  } finally {
    await client.close();
    await served.stop();
    await ssm.close();
  }
  assertNoSecrets(served.stderr(), "stderr");
});

Deno.test("serve-ssm: a wrong secret is refused by the endpoint, and the error carries no secret", async () => {
  const ssm = endpoint();
  const wrong = { ...CREDENTIALS, secretAccessKey: "wrong-secret-WEIRTEST-abcdefghijkl" };
  const served = await serveHttp(POLICY, {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL_SSM: ssm.url }, wrong),
  });
  try {
    const out = await callApi(served.url, "get_parameter", { name: DECLARED });
    assert.equal(out.status, 502);
    assert.match(out.text, /aws_error: GetParameter -> 403 InvalidSignatureException/);
    assert.ok(!out.text.includes(wrong.secretAccessKey));
    assert.ok(!out.text.includes(VALUE));
    assert.equal(ssm.requests.at(-1)?.refused, "signature does not match");
  } finally {
    await served.stop();
    await ssm.close();
  }
  assert.ok(!served.stderr().includes(wrong.secretAccessKey));
});

Deno.test("serve-ssm: without credentials a call is refused and nothing is sent", async () => {
  const ssm = endpoint();
  const served = await serveHttp(POLICY, {
    command: "serve-ssm",
    env: { AWS_ENDPOINT_URL_SSM: ssm.url, AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "" },
  });
  try {
    const out = await callApi(served.url, "get_forgejo_read_token", {});
    assert.equal(out.status, 500);
    assert.match(
      out.text,
      /aws_credentials_missing: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
    assert.equal(ssm.requests.length, 0);
  } finally {
    await served.stop();
    await ssm.close();
  }
});

Deno.test("serve-ssm: a secret too short to redact is refused, saying what to set, and nothing is sent", async () => {
  const ssm = endpoint();
  const served = await serveHttp(POLICY, {
    command: "serve-ssm",
    // s3rver's fixed pair is S3RVER/S3RVER: seven characters.
    env: {
      AWS_ENDPOINT_URL_SSM: ssm.url,
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
    },
  });
  try {
    const out = await callApi(served.url, "get_forgejo_read_token", {});
    assert.equal(out.status, 500);
    assert.match(out.text, /aws_credentials_invalid: AWS_SECRET_ACCESS_KEY is shorter than 8/);
    assert.match(out.text, /set the credential's whole secret .*docs\/aws\.md#trying-it-locally/);
    assert.equal(ssm.requests.length, 0);
  } finally {
    await served.stop();
    await ssm.close();
  }
});

Deno.test("serve recognises an SSM policy; several parameters bind their own tools", async () => {
  const ssm = startSsmEndpoint({
    "/ci/deploy-key": { type: "SecureString", value: "deploy-key-VALUE-123456" },
    "/ci/region": { type: "String", value: "eu-west-1", version: 7 },
  }, { region: "eu-west-1" });
  const file = await tempGuardfile(`wrap ward mcp aws ssm {
    region "eu-west-1"
    parameter "/ci/deploy-key" tool="deploy-key"
    parameter "/ci/region"
    can get parameter
    can get deploy-key
}`);
  const served = await serveHttp(file, { env: awsEnv({ AWS_ENDPOINT_URL_SSM: ssm.url }) });
  try {
    const key = await callApi(served.url, "get_deploy_key", {});
    assert.equal(key.status, 200, key.text);
    assert.equal(
      (key.body.structuredContent as { value: string }).value,
      "deploy-key-VALUE-123456",
    );
    const region = await callApi(served.url, "get_parameter", { name: "/ci/region" });
    assert.deepEqual(region.body.structuredContent, {
      name: "/ci/region",
      type: "String",
      value: "eu-west-1",
      version: 7,
    });
    assert.ok(
      ssm.requests.every((r) => r.refused === undefined),
      "every request verified (eu-west-1 scope)",
    );
  } finally {
    await served.stop();
    await ssm.close();
    await Deno.remove(file);
  }
});

Deno.test("serve-ssm refuses a file that is not an SSM policy", async () => {
  const out = await runCli(["serve-ssm", "guardfiles/s3-assets.mcp.kdl", "--stdio"]);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /is not an AWS SSM policy: it must read wrap ward mcp aws ssm/);
  const spec = await runCli(["serve-s3", "guardfiles/demo.mcp.kdl", "--stdio"]);
  assert.equal(spec.code, 1);
  assert.match(spec.stderr, /is not an AWS S3 policy/);
});

Deno.test("serve-ssm honours --inbound-token-env: no token, no request to AWS", async () => {
  const ssm = endpoint();
  const token = "inbound-token-for-ssm-test-0123456789";
  const served = await serveHttp(POLICY, {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL_SSM: ssm.url, WEIR_TEST_INBOUND: token }),
    extra: ["--inbound-token-env", "WEIR_TEST_INBOUND"],
  });
  try {
    const call = (headers: Record<string, string>) =>
      fetch(`${served.url}/api/get_forgejo_read_token`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const refused = await call({});
    const body = await refused.json();
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), 'Bearer realm="weir"');
    assert.equal(body.isError, true);
    assert.equal(body.error.code, "auth");
    assert.equal(ssm.requests.length, 0);
    const ok = await call({ authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).structuredContent.value, VALUE);
    assert.equal(ssm.requests.length, 1);
  } finally {
    await served.stop();
    await ssm.close();
  }
});

Deno.test("serve-ssm reloads its policy: a new parameter after a clean reload, the old surface after a broken one", async () => {
  const ssm = startSsmEndpoint({
    "/a/one": { type: "String", value: "one" },
    "/a/two": { type: "String", value: "two" },
  });
  const admin = "admin-token-for-ssm-reload-0123";
  const policy = (names: string[], extra = "") =>
    `wrap ward mcp aws ssm {\n${
      names.map((n) => `  parameter "${n}"\n`).join("")
    }  can get parameter\n${extra}}\n`;
  const file = await tempGuardfile(policy(["/a/one"]));
  const served = await serveHttp(file, {
    command: "serve-ssm",
    env: awsEnv({ AWS_ENDPOINT_URL_SSM: ssm.url, WEIR_TEST_ADMIN: admin }),
    extra: ["--admin-token-env", "WEIR_TEST_ADMIN"],
  });
  const reload = () =>
    fetch(`${served.url}/admin/reload`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}` },
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  try {
    assert.equal((await callApi(served.url, "get_parameter", { name: "/a/two" })).status, 403);
    await Deno.writeTextFile(file, policy(["/a/one", "/a/two"]));
    assert.equal((await reload()).status, 200);
    const two = await callApi(served.url, "get_parameter", { name: "/a/two" });
    assert.equal(two.status, 200, two.text);
    assert.equal((two.body.structuredContent as { value: string }).value, "two");
    await Deno.writeTextFile(file, policy(["/a/one"], "  can put parameter\n"));
    const bad = await reload();
    assert.equal(bad.status, 422);
    assert.match(bad.body.errors.join("\n"), /:4:3: .*unsupported SSM grant "can put parameter"/);
    assert.equal((await callApi(served.url, "get_parameter", { name: "/a/two" })).status, 200);
    await Deno.writeTextFile(file, REFERENCE_S3_FOR_RELOAD);
    const other = await reload();
    assert.equal(other.status, 422);
    assert.match(other.body.errors.join("\n"), /no longer an AWS SSM policy/);
  } finally {
    await served.stop();
    await ssm.close();
    await Deno.remove(file);
  }
});

const REFERENCE_S3_FOR_RELOAD = `wrap ward mcp aws s3 {
  bucket "assets"
  base-url "https://files.example.com"
  content-type "image/png"
  can put object
}
`;

Deno.test("a spec server asked to reload a file that became an AWS policy says why it refuses", async () => {
  const admin = "admin-token-for-spec-reload-0123";
  const file = await tempGuardfile(
    await Deno.readTextFile(`${ROOT}tests/fixtures/tickets.mcp.kdl`),
  );
  const served = await serveHttp(file, {
    env: { WEIR_TEST_ADMIN: admin },
    extra: ["--admin-token-env", "WEIR_TEST_ADMIN"],
  });
  try {
    await Deno.writeTextFile(file, await Deno.readTextFile(`${ROOT}${POLICY}`));
    const r = await fetch(`${served.url}/admin/reload`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}` },
    });
    const body = await r.json();
    assert.equal(r.status, 422);
    assert.match(body.errors.join("\n"), /is now an AWS SSM policy; restart weir to serve it/);
  } finally {
    await served.stop();
    await Deno.remove(file);
  }
});
