/**
 * Kubernetes schema validation of rendered manifests, here instead of
 * `kubeconform` (a Go binary no registry here serves): the JSON schemas of the
 * Kubernetes API (1.34+) compiled into validators by `npm:kubernetes-models`,
 * and the External Secrets Operator's CRD schemas by
 * `npm:@kubernetes-models/external-secrets`, both pinned in deno.json. Types,
 * required fields, enums and formats (int32, int-or-string...) are checked;
 * like kubeconform without `-strict`, a field the schema does not name is not
 * refused.
 */
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Service } from "kubernetes-models/v1/Service";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ExternalSecret as ExternalSecretV1beta1 } from "@kubernetes-models/external-secrets/external-secrets.io/v1beta1/ExternalSecret";
import { ExternalSecret as ExternalSecretV1 } from "@kubernetes-models/external-secrets/external-secrets.io/v1/ExternalSecret";

// deno-lint-ignore no-explicit-any
type Model = new (data: any) => { validate(): void };

const MODELS: Record<string, Model> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "external-secrets.io/v1beta1/ExternalSecret": ExternalSecretV1beta1,
  "external-secrets.io/v1/ExternalSecret": ExternalSecretV1,
};

/**
 * Validate each object against its kind's schema.
 * @returns one line per problem (`Kind name: path message`), empty when all are valid;
 *   a kind with no schema here is a problem too (add its model above)
 */
export function kubeSchemaProblems(objects: Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    const kind = `${object.apiVersion}/${object.kind}`;
    const name = (object.metadata as { name?: string } | undefined)?.name ?? "?";
    const model = MODELS[kind];
    if (!model) {
      problems.push(`${kind} ${name}: no schema for this kind in tests/support/kube_schema.ts`);
      continue;
    }
    try {
      new model(object).validate();
    } catch (error) {
      problems.push(`${kind} ${name}: ${(error as Error).message}`);
    }
  }
  return problems;
}
