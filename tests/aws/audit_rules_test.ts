/**
 * One audit line per decision in the AWS modes, each naming its own rule
 * (issue 22, kind 13), through the shipped CLI against a raw endpoint: an S3
 * key refused for a dot segment, a separator, its characters, its length or
 * emptiness, a media type the policy does not list, markup bytes, an empty
 * object, an object over max-bytes, and an SSM parameter the policy does not
 * declare were all `rule: "restrict"` (which now means a spec-mode glob), most
 * with one reason for all. The lines come in the order of the decisions,
 * exactly one each.
 */
import assert from "node:assert/strict";
import { callApi, type Served, serveHttp, tempGuardfile } from "../support/cli.ts";
import { awsEnv } from "../support/aws.ts";
import { rawEndpoint } from "../support/raw_endpoint.ts";

const AUDIT_EVENTS = new Set(["tool_call", "refused"]);
const enc = new TextEncoder();

/** The (event, rule or outcome) pairs of the audit lines `served` wrote. */
function auditOf(served: Served): [string, string][] {
  return served.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l) as { event: string; rule?: string; outcome?: string }
  ).filter((l) => AUDIT_EVENTS.has(l.event)).map((l) => [l.event, l.rule ?? l.outcome ?? ""]);
}

Deno.test("AWS modes: each decision writes one audit line naming its own rule", async () => {
  const endpoint = rawEndpoint((request) => {
    if (request.method === "HEAD") {
      return { bytes: enc.encode("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n") };
    }
    const body = request.path === "/" // SSM's POST /
      ? `{"Parameter":{"Name":"/app/token","Type":"String","Value":"v","Version":1}}`
      : "";
    return {
      bytes: enc.encode(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`),
    };
  });
  const env = awsEnv({ AWS_ENDPOINT_URL: endpoint.url, PATH: Deno.env.get("PATH") ?? "" });
  const s3 = await serveHttp(
    await tempGuardfile(`wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "weir-assets"
    base-url "https://files.example.com"
    prefix "charts"
    max-bytes 100
    content-type "application/json"
    can put object
    can list objects
    can get object-url
}`),
    { env },
  );
  const ssm = await serveHttp(
    await tempGuardfile(`wrap ward mcp aws ssm {
    region "us-east-1"
    parameter "/app/token"
    can get parameter
}`),
    { env },
  );
  const put = (key: unknown, type = "application/json", bytes = '{"a":1}') => ({
    key,
    content_type: type,
    content_base64: btoa(bytes),
  });
  try {
    const expected: [string, string][] = [];
    const decide = async (
      event: string,
      rule: string,
      tool: string,
      args: unknown,
      status: number,
    ) => {
      const r = await callApi(s3.url, tool, args);
      assert.equal(r.status, status, `${tool} ${JSON.stringify(args)}: ${r.text}`);
      expected.push([event, rule]);
    };
    await decide("tool_call", "ok", "put_object", put("a.json"), 200);
    await decide("refused", "dot_segment", "put_object", put("x/../a.json"), 400);
    await decide("refused", "separator", "put_object", put("/a.json"), 400);
    await decide("refused", "separator", "put_object", put("a/"), 400);
    await decide("refused", "empty_value", "put_object", put(""), 400);
    await decide("refused", "empty_value", "put_object", put("a//b.json"), 400);
    await decide("refused", "key_characters", "put_object", put("a b.json"), 400);
    await decide("refused", "value_too_long", "put_object", put("k".repeat(1020)), 400);
    await decide("refused", "media_type", "put_object", put("a.json", "text/plain"), 400);
    await decide("refused", "content", "put_object", put("a.json", undefined, "<html>"), 400);
    await decide("refused", "empty_value", "put_object", put("a.json", undefined, ""), 400);
    await decide("refused", "size", "put_object", put("a.json", undefined, "x".repeat(101)), 413);
    await decide(
      "refused",
      "schema",
      "put_object",
      { key: "a.json", content_type: "application/json", content_base64: "a b" },
      400,
    );
    await decide("refused", "schema", "put_object", { key: 7 }, 400);
    await decide("refused", "ill_formed_text", "put_object", put("a\ud800"), 400);
    await decide("refused", "unknown_tool", "delete_object", { key: "a.json" }, 404);
    await decide("tool_call", "ok", "list_objects", {}, 502); // the endpoint's empty body is no XML
    expected.pop();
    expected.push(["tool_call", "aws_unexpected"]);
    await decide("refused", "dot_segment", "list_objects", { prefix: "../" }, 400);
    await decide("refused", "key_characters", "list_objects", { prefix: "a*" }, 400);
    await decide("tool_call", "not_found", "get_object_url", { key: "none.json" }, 404);
    await decide("refused", "separator", "get_object_url", { key: "/etc" }, 400);
    await s3.stop(); // every line written
    assert.deepEqual(auditOf(s3), expected, s3.stderr());

    const ssmExpected: [string, string][] = [];
    const read = async (event: string, rule: string, args: unknown, status: number) => {
      const r = await callApi(ssm.url, "get_parameter", args);
      assert.equal(r.status, status, `${JSON.stringify(args)}: ${r.text}`);
      ssmExpected.push([event, rule]);
    };
    await read("tool_call", "ok", { name: "/app/token" }, 200);
    await read("refused", "undeclared_parameter", { name: "/app/other" }, 403);
    await read("refused", "undeclared_parameter", { name: "/APP/token" }, 403);
    await read("refused", "schema", { name: 7 }, 400);
    await ssm.stop();
    assert.deepEqual(auditOf(ssm), ssmExpected, ssm.stderr());
  } finally {
    await s3.stop();
    await ssm.stop();
    await endpoint.close();
  }
});
