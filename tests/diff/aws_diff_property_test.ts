/**
 * `weir diff` of S3 policies held to what serving them shows: for generated
 * pairs of policies (bucket, key prefix, content types, max-bytes), a
 * `put_object` call for every object key of a set (as each policy's prefix
 * makes it relative), content type and size is served by each policy's own host
 * (src/aws/s3.ts, SigV4-signed to a recording endpoint on 127.0.0.1), and a
 * request NEW sends that OLD never sends (another object path, content type
 * or size) is a widening `weir diff` must report. Pairs whose diff reports no
 * widening must show no such request. Both directions of every pair. The same
 * for SSM policies (region, parameters), each `get_parameter` name probed.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { parseAwsPolicy, type S3Policy, type SsmPolicy } from "../../src/guardfile/aws.ts";
import { createS3Host } from "../../src/aws/s3.ts";
import { createSsmHost } from "../../src/aws/ssm.ts";
import { describeAws } from "../../src/modes/serve_aws.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";
import type { CallContext } from "../../src/mcp/options.ts";
import { awsEnv } from "../support/aws.ts";

const PREFIXES = ["", "p", "p/q", "p/q/r", "p2"];
const TYPES = ["application/json", "text/plain", "text/csv"];
/** Object keys as S3 stores them: each policy is asked for every one under its prefix. */
const TARGETS = ["a.json", "p/a.json", "p/q/a.json", "p/q/r/a.json", "p2/a.json", "x/a.json"];
/** Keys that try to leave the prefix: the host refuses them whatever it is. */
const ESCAPES = ["../x/a.json", "/x/a.json", "q/../../a.json"];
const BODIES = ["1", "12345", "1234567890"];

const policyArb = fc.record({
  bucket: fc.constantFrom("bucket-one", "bucket-one", "bucket-one", "bucket-two"),
  prefix: fc.constantFrom(...PREFIXES),
  types: fc.subarray(TYPES, { minLength: 1 }),
  maxBytes: fc.constantFrom(4, 8, 16),
});
type Generated = typeof policyArb extends fc.Arbitrary<infer T> ? T : never;

function policyText(p: Generated): string {
  return `wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "${p.bucket}"
    base-url "https://files.example.com"
${p.prefix ? `    prefix "${p.prefix}"\n` : ""}    max-bytes ${p.maxBytes}
${p.types.map((t) => `    content-type "${t}"`).join("\n")}
    can put object
}
`;
}

function load(p: Generated): S3Policy {
  const loaded = parseAwsPolicy(policyText(p), "gen.mcp.kdl");
  assert.ok(loaded?.policy?.mode === "s3", JSON.stringify(loaded?.diagnostics));
  return loaded.policy;
}

Deno.test({
  name:
    "diff of S3 policies says widen whenever NEW sends a request OLD did not, on generated pairs",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const seen: string[] = [];
    const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const url = new URL(req.url);
      seen.push(`${req.method} ${url.pathname} ${req.headers.get("content-type")}`);
      return new Response(null, { status: 200, headers: { etag: '"x"' } });
    });
    const env = awsEnv({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${upstream.addr.port}` });
    const endpoint = { url: env.AWS_ENDPOINT_URL_S3, source: "test", pathStyle: true };
    const ctx = {
      signal: new AbortController().signal,
      era: "legacy",
      protocolVersion: "2025-11-25",
    } as unknown as CallContext;

    /** The requests a policy's host sends for every probe. */
    const served = async (policy: S3Policy): Promise<Set<string>> => {
      const host = createS3Host(policy, { env: (k) => env[k], endpoint, log: () => {} });
      const sent = new Set<string>();
      const keys = [
        ...TARGETS.filter((t) => t.startsWith(policy.prefix)).map((t) =>
          t.slice(policy.prefix.length)
        ),
        ...ESCAPES,
      ];
      for (const key of keys) {
        for (const type of TYPES) {
          for (const body of BODIES) {
            seen.length = 0;
            await Promise.resolve().then(() =>
              host.dispatch!("put_object", {
                key,
                content_type: type,
                content_base64: btoa(body),
              }, ctx)
            ).catch(() => {});
            for (const s of seen) sent.add(`${s} ${body.length}`);
          }
        }
      }
      return sent;
    };

    let witnessed = 0;
    try {
      await fc.assert(
        fc.asyncProperty(policyArb, policyArb, async (a, b) => {
          const [oldSent, newSent] = [await served(load(a)), await served(load(b))];
          for (
            const [o, n, os, ns] of [[a, b, oldSent, newSent], [b, a, newSent, oldSent]] as const
          ) {
            const witness = [...ns].find((r) => !os.has(r));
            const changes = diffSurfaces(describeAws(load(o)), describeAws(load(n)));
            const widens = changes.some((c) => c.effect === "widen");
            if (witness) witnessed++;
            assert.ok(
              !witness || widens,
              `NEW sends ${witness}, which OLD never does, and diff reports no widening:\n` +
                `${policyText(o)}\n->\n${policyText(n)}\n${JSON.stringify(changes, null, 1)}`,
            );
          }
        }),
        { numRuns: 60 },
      );
      assert.ok(
        witnessed > 10,
        `only ${witnessed} pairs sent a new request: the generator lost them`,
      );
    } finally {
      await upstream.shutdown();
    }
  },
});

const PARAMETERS = ["/a/one", "/a/two", "/b/three"];

const ssmArb = fc.record({
  region: fc.constantFrom("us-east-1", "us-east-1", "us-east-1", "eu-west-1"),
  parameters: fc.subarray(PARAMETERS, { minLength: 1 }),
});
type SsmGenerated = typeof ssmArb extends fc.Arbitrary<infer T> ? T : never;

function ssmText(p: SsmGenerated): string {
  return `wrap ward mcp aws ssm {
    region "${p.region}"
${p.parameters.map((n) => `    parameter "${n}"`).join("\n")}
    can get parameter
}
`;
}

function loadSsm(p: SsmGenerated): SsmPolicy {
  const loaded = parseAwsPolicy(ssmText(p), "gen.mcp.kdl");
  assert.ok(loaded?.policy?.mode === "ssm", JSON.stringify(loaded?.diagnostics));
  return loaded.policy;
}

Deno.test({
  name:
    "diff of SSM policies says widen whenever NEW reads a parameter OLD did not, on generated pairs",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const seen: string[] = [];
    const upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        // The region the request was signed for (SigV4 credential scope) and the name asked.
        const scope = /Credential=[^/]+\/\d+\/([^/]+)\//.exec(
          req.headers.get("authorization") ?? "",
        )?.[1];
        seen.push(`${scope} ${JSON.parse(await req.text()).Name}`);
        return Response.json({ Parameter: { Name: "x", Type: "String", Value: "v" } });
      },
    );
    const env = awsEnv({ AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${upstream.addr.port}` });
    const endpoint = { url: env.AWS_ENDPOINT_URL_SSM, source: "test", pathStyle: false };
    const ctx = {
      signal: new AbortController().signal,
      era: "legacy",
      protocolVersion: "2025-11-25",
    } as unknown as CallContext;
    const served = async (policy: SsmPolicy): Promise<Set<string>> => {
      const host = createSsmHost(policy, { env: (k) => env[k], endpoint, log: () => {} });
      seen.length = 0;
      for (const name of [...PARAMETERS, "/c/other"]) {
        await Promise.resolve().then(() => host.dispatch!("get_parameter", { name }, ctx))
          .catch(() => {});
      }
      return new Set(seen);
    };
    let witnessed = 0;
    try {
      await fc.assert(
        fc.asyncProperty(ssmArb, ssmArb, async (a, b) => {
          const [aSent, bSent] = [await served(loadSsm(a)), await served(loadSsm(b))];
          for (const [o, n, os, ns] of [[a, b, aSent, bSent], [b, a, bSent, aSent]] as const) {
            const witness = [...ns].find((r) => !os.has(r));
            const changes = diffSurfaces(describeAws(loadSsm(o)), describeAws(loadSsm(n)));
            if (witness) witnessed++;
            assert.ok(
              !witness || changes.some((c) => c.effect === "widen"),
              `NEW reads ${witness}, which OLD never does, and diff reports no widening:\n` +
                `${ssmText(o)}\n->\n${ssmText(n)}\n${JSON.stringify(changes, null, 1)}`,
            );
          }
        }),
        { numRuns: 60 },
      );
      assert.ok(witnessed > 10, `only ${witnessed} pairs read a new parameter`);
    } finally {
      await upstream.shutdown();
    }
  },
});
