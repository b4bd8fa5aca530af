/**
 * The schema check the chart tests use (tests/support/kube_schema.ts) refuses
 * what Kubernetes would refuse, so a passing chart test means something.
 */
import assert from "node:assert/strict";
import { kubeSchemaProblems } from "../support/kube_schema.ts";

Deno.test("kubeSchemaProblems(): wrong types, a missing required field and an unknown kind are problems", () => {
  const deployment = (container: Record<string, unknown>) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d" },
    spec: { selector: {}, template: { spec: { containers: [container] } } },
  });
  assert.deepEqual(kubeSchemaProblems([deployment({ name: "weir", image: "x" })]), []);
  const [typed] = kubeSchemaProblems([
    deployment({ name: "weir", lifecycle: { preStop: { sleep: { seconds: "5" } } } }),
  ]);
  assert.match(typed, /^apps\/v1\/Deployment d: .*preStop\/sleep\/seconds must be integer/);
  const [required] = kubeSchemaProblems([
    { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "p" }, spec: 3 },
  ]);
  assert.match(required, /PodDisruptionBudget p: .*spec must be object/);
  assert.match(kubeSchemaProblems([{ apiVersion: "v9", kind: "Thing" }])[0], /no schema/);
});
