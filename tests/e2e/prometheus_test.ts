/**
 * guardfiles/prometheus.mcp.kdl, exactly as shipped, served by the real CLI in
 * front of a REAL Prometheus (Debian's package) started by this test with the
 * TSDB admin API enabled. PromQL that the metacharacter gate would refuse runs
 * through the one opted-out field and gets real answers; then every tool,
 * argument and encoding trick aimed at the admin API is refused, and
 * Prometheus's own request counters show that no request reached
 * `/api/v1/admin/*` (a direct admin request at the end proves the counter
 * counts).
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { callApi, serveHttp } from "../support/cli.ts";
import { findPrometheus, startPrometheus } from "../support/prometheus.ts";

const found = await findPrometheus();
if ("missing" in found) {
  console.log(`prometheus_test SKIPPED: ${found.missing}`);
}

interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

Deno.test({
  name: "prometheus: real PromQL through one opted-out field; nothing reaches the admin API",
  ignore: "missing" in found,
  fn: async (t) => {
    const prom = await startPrometheus((found as { bin: string }).bin);
    const server = await serveHttp("guardfiles/prometheus.mcp.kdl", {
      env: { PROMETHEUS_URL: prom.url },
    });
    const result = async (tool: string, args: Record<string, unknown>) => {
      const r = await callApi(server.url, tool, args);
      assert.equal(r.status, 200, `${tool} ${JSON.stringify(args)}: ${r.text}`);
      const env = r.body.structuredContent as { result: { status: string; data: unknown } };
      assert.equal(env.result.status, "success");
      return env.result.data;
    };
    const vector = async (promql: string) =>
      (await result("get_query", { promql }) as { result: Sample[] }).result;
    const refused = async (tool: string, args: unknown, status: number, pattern: RegExp) => {
      const r = await callApi(server.url, tool, args);
      assert.equal(r.status, status, `${tool} ${JSON.stringify(args)}: ${r.text}`);
      assert.match(r.text || JSON.stringify(r.body), pattern, `${tool} ${JSON.stringify(args)}`);
    };
    try {
      const queriesBefore = await prom.requestCount("/api/v1/query");
      assert.equal(await prom.requestCount("/api/v1/admin"), 0, "a fresh server");

      await t.step("PromQL with ( ) { } [ ] > | reaches Prometheus and answers", async () => {
        const rate = await vector("rate(prometheus_http_requests_total[5m])");
        assert.ok(rate.length > 0, "rate() over Prometheus's own counter has series");
        assert.ok(rate.every((s) => s.metric.__name__ === undefined && s.metric.handler));

        const byJob = await vector("sum by (job) (up)");
        assert.deepEqual(byJob.map((s) => [s.metric, s.value![1]]), [[{ job: "prometheus" }, "1"]]);

        const up = await vector('up{job="prometheus"}');
        assert.equal(up.length, 1);
        assert.equal(up[0].metric.job, "prometheus");
        assert.equal(up[0].value![1], "1");

        assert.equal((await vector('up{job=~"prom.*"}')).length, 1);
        assert.equal((await vector("up > 0")).length, 1);

        const after = await prom.requestCount("/api/v1/query");
        assert.ok(after >= queriesBefore + 5, "the queries were answered by Prometheus itself");
      });

      await t.step("range query, labels, label values, series, targets", async () => {
        const now = Math.floor(Date.now() / 1000);
        const range = await result("get_query_range", {
          promql: 'sum by (job) (up{job="prometheus"})',
          start: String(now - 30),
          end: String(now),
          step: "5s",
        }) as { resultType: string; result: Sample[] };
        assert.equal(range.resultType, "matrix");
        assert.ok(range.result[0].values!.length > 0);

        const labels = await result("list_labels", {}) as string[];
        assert.ok(labels.includes("job") && labels.includes("__name__"), labels.join(","));
        const jobs = await result("list_label_values", { label: "job" }) as string[];
        assert.deepEqual(jobs, ["prometheus"]);
        const matched = await result("list_label_values", {
          label: "instance",
          match: ['up{job="prometheus"}'],
        }) as string[];
        assert.equal(matched.length, 1);
        const series = await result("list_series", { match: ['up{job="prometheus"}'] }) as Record<
          string,
          string
        >[];
        assert.deepEqual(series.map((s) => s.__name__), ["up"]);
        const targets = await result("list_targets", { state: "active" }) as {
          activeTargets: { health: string }[];
        };
        assert.equal(targets.activeTargets.length, 1);
        await refused("list_targets", { state: "everything" }, 400, /argument "state"/);
      });

      await t.step("the neighbours of the opted-out field stay guarded", async () => {
        await refused("get_query", { promql: "up", time: "1;reboot" }, 400, /argument "time"/);
        await refused("get_query", { promql: "up\nPOST /api/v1/admin" }, 403, /control character/);
        await refused("get_query", { promql: "" }, 400, /argument "promql"/);
        await refused("get_query", { promql: "x".repeat(4001) }, 400, /argument "promql"/);
        await refused("get_query", {}, 400, /missing required argument "promql"/);
      });

      await t.step("no tool, argument or encoding reaches /api/v1/admin/*", async () => {
        for (
          const label of [
            "../admin/tsdb/delete_series",
            "..%2Fadmin%2Ftsdb%2Fdelete_series",
            "..%2fadmin%2ftsdb%2fsnapshot",
            "..\\admin\\tsdb\\snapshot",
            "%2e%2e",
            "..",
            "admin/tsdb/snapshot",
          ]
        ) {
          const r = await callApi(server.url, "list_label_values", { label });
          assert.ok(r.status === 400 || r.status === 403, `${label}: ${r.status} ${r.text}`);
        }
        for (
          const tool of ["delete_series", "clean_tombstones", "create_snapshot", "reload_config"]
        ) {
          await refused(tool, { match: ["up"] }, 403, /verb_withheld/);
          await refused(tool, {}, 403, /withheld by policy and reaches nothing/);
        }
        await refused("create_admin", {}, 404, /unknown tool|not found/i);
        await refused(
          "get_query",
          { promql: "up", path: "/api/v1/admin/tsdb/snapshot" },
          400,
          /unexpected argument "path"/,
        );
        await refused(
          "list_series",
          { match: ["up"], "match[]": ["x"] },
          400,
          /unexpected argument "match\[\]"/,
        );
        // PromQL naming the admin path is only a query string value: Prometheus
        // answers a parse error from /api/v1/query.
        const text = await callApi(server.url, "get_query", {
          promql: "/api/v1/admin/tsdb/snapshot",
        });
        assert.equal(text.status, 502, text.text);
        assert.match(text.text, /upstream_error: GET \/api\/v1\/query -> 400/);
        for (const path of ["/api/../api/v1/admin/tsdb/snapshot", "/api/v1/admin/tsdb/snapshot"]) {
          const res = await fetch(`${server.url}${path}`, { method: "POST", body: "{}" });
          await res.body?.cancel();
          assert.equal(res.status, 404, path);
        }
        const client = new Client({ name: "weir-test", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
        try {
          const call = await client.callTool({ name: "delete_series", arguments: {} });
          assert.equal(call.isError, true);
          const { tools } = await client.listTools();
          const names = tools.map((x) => x.name);
          assert.ok(!names.some((n) => /admin/.test(n)), names.join(","));
          const get = tools.find((x) => x.name === "get_query")!;
          const promql = (get.inputSchema.properties as Record<string, { description: string }>)
            .promql;
          assert.doesNotMatch(promql.description, /Refused if it contains/);
        } finally {
          await client.close();
        }
        assert.equal(await prom.requestCount("/api/v1/admin"), 0, "no admin request arrived");
      });

      await t.step("control: a direct admin request is counted", async () => {
        const res = await fetch(`${prom.url}/api/v1/admin/tsdb/snapshot`, { method: "POST" });
        assert.equal(res.status, 200, "the admin API is enabled on this Prometheus");
        await res.body?.cancel();
        assert.equal(await prom.requestCount("/api/v1/admin"), 1);
      });
    } finally {
      await server.stop();
      await prom.stop();
    }
  },
});
