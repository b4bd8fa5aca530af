/**
 * The two AWS policy grammars: a reference (mcp-beaver) policy loads
 * unchanged, weir's additions load, and each malformed form is refused with
 * a message naming the line and what to change. The CLI cases run the
 * shipped `weir lint` / `weir describe`.
 */
import assert from "node:assert/strict";
import { parseAwsPolicy, type S3Policy, type SsmPolicy } from "../../src/guardfile/aws.ts";
import { resolveEndpoint } from "../../src/aws/config.ts";
import { strictBase64Length } from "../../src/aws/s3.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

const REFERENCE_SSM = `wrap ward mcp aws ssm {
    region "us-east-1"
    parameter "/forgejo/coilyco-ops/read-token"
    can get parameter
    can get forgejo-read-token
}`;

const REFERENCE_S3 = `wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "coilysiren-public-assets"
    base-url "https://files.coilysiren.me"
    prefix "dowel"
    max-bytes 1048576
    content-type "image/png"
    content-type "application/json"
    can put object
    can list objects
    can get object-url
}`;

function load(text: string, file = "policy.mcp.kdl") {
  const result = parseAwsPolicy(text, file);
  assert.ok(result, "recognised as an AWS policy");
  return result;
}

function refuses(text: string, message: RegExp, line?: number): void {
  const result = load(text);
  assert.equal(result.policy, undefined, "refused");
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  const hit = errors.find((d) => message.test(d.message));
  assert.ok(hit, `expected ${message}, got:\n${errors.map((d) => d.message).join("\n")}`);
  if (line !== undefined) assert.equal(hit.position?.line, line);
}

Deno.test("a reference SSM policy loads unchanged", () => {
  const { policy } = load(REFERENCE_SSM, "dir/forgejo-token.mcp.kdl");
  assert.deepEqual(policy as SsmPolicy, {
    mode: "ssm",
    file: "dir/forgejo-token.mcp.kdl",
    name: "forgejo-token",
    region: "us-east-1",
    parameters: ["/forgejo/coilyco-ops/read-token"],
    getParameter: true,
    convenience: [{ tool: "get_forgejo_read_token", parameter: "/forgejo/coilyco-ops/read-token" }],
    surface: {},
  });
});

Deno.test("SSM: region defaults to us-east-1; several parameters, each tool bound by tool=", () => {
  const { policy } = load(`wrap ward mcp aws ssm {
    parameter "/a/one" tool="one"
    parameter "/a/two" tool="two-x"
    parameter "/a/three"
    can get one
    can get two-x
}`);
  const ssm = policy as SsmPolicy;
  assert.equal(ssm.region, "us-east-1");
  assert.equal(ssm.getParameter, false);
  assert.deepEqual(ssm.convenience, [
    { tool: "get_one", parameter: "/a/one" },
    { tool: "get_two_x", parameter: "/a/two" },
  ]);
});

Deno.test("SSM: malformed policies are refused with the line and the fix", () => {
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x"\n  can get parameter\n  can put parameter\n}`,
    /unsupported SSM grant "can put parameter": this reader only reads/,
    4,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  can get parameter\n}`,
    /no "parameter": name the exact SSM parameter/,
  );
  refuses(`wrap ward mcp aws ssm {\n  parameter "/x"\n}`, /nothing to mount/);
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x"\n  parameter "/y"\n  can get token\n}`,
    /"can get token" reads no parameter: with several parameters, bind it with parameter "\/exact\/name" tool="token"/,
    4,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x" tool="a"\n  can get parameter\n}`,
    /tool="a" names no grant: add "can get a"/,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x:3"\n  can get parameter\n}`,
    /not an SSM parameter name.*no version or label selector/,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x"\n  parameter "/x"\n  can get parameter\n}`,
    /declared twice/,
    3,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x"\n  can get a-b\n  can get a_b\n}`,
    /mints "get_a_b" as "can get a-b" does/,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  region "Mars"\n  parameter "/x"\n  can get parameter\n}`,
    /region "Mars" is not an AWS region name/,
  );
  refuses(
    `wrap ward mcp aws ssm {\n  parameter "/x"\n  can get parameter\n  base-url "https://x"\n}`,
    /unknown node "base-url" in an AWS SSM policy; remove it, or use one of region \| parameter \| can/,
  );
  refuses(
    `withhold "x" { reason "y" }\nwrap ward mcp aws ssm {\n  parameter "/x"\n  can get parameter\n}`,
    /unknown top-level node "withhold" in an AWS SSM policy/,
    1,
  );
});

Deno.test("a reference S3 policy loads unchanged", () => {
  const { policy } = load(REFERENCE_S3, "assets.mcp.kdl");
  assert.deepEqual(policy as S3Policy, {
    mode: "s3",
    file: "assets.mcp.kdl",
    name: "assets",
    region: "us-east-1",
    bucket: "coilysiren-public-assets",
    baseUrl: "https://files.coilysiren.me",
    prefix: "dowel/",
    maxBytes: 1048576,
    contentTypes: ["image/png", "application/json"],
    tools: ["get_object_url", "list_objects", "put_object"],
    surface: {},
  });
});

Deno.test("S3: defaults (8 MiB, no prefix), max-bytes as a numeric string, a subset of grants", () => {
  const { policy } = load(`wrap ward mcp aws s3 {
    bucket "b-1.example"
    base-url "https://cdn.example.com/assets/"
    content-type "image/webp"
    can list objects
}`);
  const s3 = policy as S3Policy;
  assert.equal(s3.maxBytes, 8 * 1024 * 1024);
  assert.equal(s3.prefix, "");
  assert.equal(s3.baseUrl, "https://cdn.example.com/assets");
  assert.deepEqual(s3.tools, ["list_objects"]);
  const quoted = load(REFERENCE_S3.replace("max-bytes 1048576", `max-bytes "2048"`));
  assert.equal((quoted.policy as S3Policy).maxBytes, 2048);
});

Deno.test("S3: markup media types are refused at lint time", () => {
  for (
    const type of [
      "text/html",
      "application/xhtml+xml",
      "image/svg+xml",
      "application/xml",
      "text/xml",
      "application/atom+xml",
      "TEXT/HTML",
    ]
  ) {
    refuses(
      REFERENCE_S3.replace(`content-type "application/json"`, `content-type "${type}"`),
      /is markup a browser renders/,
      8,
    );
  }
});

Deno.test("S3: malformed policies are refused with the line and the fix", () => {
  const without = (node: string) =>
    REFERENCE_S3.split("\n").filter((l) => !l.includes(node)).join("\n");
  refuses(without("bucket"), /missing "bucket"/);
  refuses(without("base-url"), /missing "base-url"/);
  refuses(without("content-type"), /no "content-type"/);
  refuses(without("can "), /nothing to mount/);
  refuses(
    REFERENCE_S3.replace("can list objects", "can delete object"),
    /unsupported S3 grant "can delete object".*there is no delete/,
    10,
  );
  refuses(REFERENCE_S3.replace("max-bytes 1048576", "max-bytes 0"), /above 0/);
  refuses(REFERENCE_S3.replace("max-bytes 1048576", `max-bytes "1MB"`), /whole number of bytes/);
  refuses(REFERENCE_S3.replace("max-bytes 1048576", "max-bytes 1073741824"), /over weir's ceiling/);
  refuses(REFERENCE_S3.replace(`prefix "dowel"`, `prefix "a/../b"`), /has a ".." segment/);
  refuses(
    REFERENCE_S3.replace(`"coilysiren-public-assets"`, `"Bad_Bucket"`),
    /not an S3 bucket name/,
  );
  refuses(
    REFERENCE_S3.replace(`"https://files.coilysiren.me"`, `"files.example.com"`),
    /must be an absolute http\(s\) URL/,
  );
  refuses(
    REFERENCE_S3.replace(`content-type "image/png"`, `content-type "png"`),
    /not a media type/,
  );
});

Deno.test("a spec guardfile is not taken for an AWS policy", () => {
  assert.equal(parseAwsPolicy(`wrap ward mcp tickets { base-url "x" }`, "x.mcp.kdl"), undefined);
  assert.equal(parseAwsPolicy(`wrap ward mcp aws sqs { }`, "x.mcp.kdl"), undefined);
});

Deno.test("endpoints: service variable, then AWS_ENDPOINT_URL, then AWS; malformed named, never guessed", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.deepEqual(resolveEndpoint("s3", "eu-west-1", env({}), "assets"), {
    url: "https://assets.s3.eu-west-1.amazonaws.com",
    source: "default",
    pathStyle: false,
  });
  assert.equal(
    resolveEndpoint("ssm", "eu-west-1", env({})).url,
    "https://ssm.eu-west-1.amazonaws.com",
  );
  const both = env({
    AWS_ENDPOINT_URL: "http://127.0.0.1:1/",
    AWS_ENDPOINT_URL_S3: "http://127.0.0.1:2",
  });
  assert.deepEqual(resolveEndpoint("s3", "us-east-1", both, "b"), {
    url: "http://127.0.0.1:2",
    source: "AWS_ENDPOINT_URL_S3",
    pathStyle: true,
  });
  assert.equal(resolveEndpoint("ssm", "us-east-1", both).url, "http://127.0.0.1:1");
  const ignored = env({
    AWS_ENDPOINT_URL: "http://127.0.0.1:1",
    AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: "true",
  });
  assert.equal(resolveEndpoint("ssm", "us-east-1", ignored).source, "default");
  assert.throws(
    () => resolveEndpoint("ssm", "us-east-1", env({ AWS_ENDPOINT_URL_SSM: "localhost:4566" })),
    /AWS_ENDPOINT_URL_SSM must be an absolute http\(s\) URL/,
  );
});

Deno.test("strict base64: padded standard alphabet only; the decoded length without decoding", () => {
  assert.equal(strictBase64Length("aGk="), 2);
  assert.equal(strictBase64Length("aGV5"), 3);
  assert.equal(strictBase64Length(""), 0);
  for (const bad of ["aGk", "aG k=", "aGk=\n", "aGk-", "aG_k", "a===", "aGk=aGk="]) {
    assert.equal(strictBase64Length(bad), undefined, JSON.stringify(bad));
  }
});

Deno.test("weir lint and describe read both policies (the shipped examples)", async () => {
  const ssm = await runCli(["lint", "--methods", "guardfiles/ssm-forgejo-token.mcp.kdl"]);
  assert.equal(ssm.code, 0, ssm.stderr);
  assert.equal(ssm.stdout, "get_forgejo_read_token\tGetParameter\nget_parameter\tGetParameter\n");
  const s3 = await runCli(["lint", "guardfiles/s3-assets.mcp.kdl"]);
  assert.equal(s3.code, 0, s3.stderr);
  assert.equal(s3.stdout, "get_object_url\nlist_objects\nput_object\n");
  const json = await runCli(["describe", "--format", "json", "guardfiles/s3-assets.mcp.kdl"]);
  assert.equal(json.code, 0, json.stderr);
  const surface = JSON.parse(json.stdout);
  assert.equal(surface.aws.policy.bucket, "example-public-assets");
  assert.equal(surface.aws.policy.prefix, "charts/");
  assert.deepEqual(
    surface.tools.map((t: { operation: { action: string } }) => t.operation.action),
    [
      "HeadObject",
      "ListObjectsV2",
      "PutObject",
    ],
  );
  const openapi = await runCli([
    "describe",
    "--format",
    "openapi",
    "guardfiles/ssm-forgejo-token.mcp.kdl",
  ]);
  assert.equal(openapi.code, 0, openapi.stderr);
  const ok = JSON.parse(openapi.stdout).paths["/api/get_parameter"].post.responses["200"];
  assert.deepEqual(
    ok.content["application/json"].schema.properties.structuredContent.required,
    ["name", "type", "value", "version"],
  );
  const text = await runCli(["describe", "guardfiles/ssm-forgejo-token.mcp.kdl"]);
  assert.match(
    text.stdout,
    /get_parameter {2}GetParameter name must be one of "\/forgejo\/coilyco-ops\/read-token"/,
  );
});

Deno.test("weir lint refuses a bad policy with file:line and exit 1", async () => {
  const file = await tempGuardfile(
    REFERENCE_S3.replace(`content-type "image/png"`, `content-type "text/html"`),
  );
  try {
    const out = await runCli(["lint", file]);
    assert.equal(out.code, 1);
    assert.equal(out.stdout, "");
    assert.match(out.stderr, new RegExp(`${file}:7:5: .*"text/html" is markup`));
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("serve-ssm refuses to start on a malformed endpoint variable, naming it", async () => {
  const out = await runCli(["serve-ssm", "guardfiles/ssm-forgejo-token.mcp.kdl", "--stdio"], {
    env: { AWS_ENDPOINT_URL_SSM: "localhost:4566" },
  });
  assert.equal(out.code, 1);
  assert.match(out.stderr, /AWS_ENDPOINT_URL_SSM must be an absolute http\(s\) URL/);
});
