/**
 * `weir describe`: the served surface of a guardfile as a person reads it,
 * or as JSON for machines. Derived from the same tool specs the server lists,
 * so what it says is what is served.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Grant, Guardfile } from "../guardfile/model.ts";
import { grantInputSchema } from "../guard/tools.ts";
import { printable } from "../guardfile/diagnostics.ts";

/** One input of a tool, flattened for reading. */
export interface DescribedInput {
  name: string;
  /** `path`, `query`, `body`, `body map`, `graphql`. */
  in: string;
  type: string;
  required: boolean;
  /** Bounds and other constraints in words, e.g. `1..50`, `at most 5 items`. */
  constraints: string[];
  /** Wire name when it differs (query `upstream=`, body map target). */
  sentAs?: string;
}

/** One served tool. */
export interface DescribedTool {
  name: string;
  kind: "grant" | "withheld" | "info";
  method?: string;
  path?: string;
  description?: string;
  inputs?: DescribedInput[];
  restrictions?: { param: string; allowed: string[] }[];
  exclusive?: string[][];
  fixedBody?: Record<string, unknown>;
  destructive?: boolean;
  reason?: string;
  alternative?: string;
  inputSchema?: JsonObject;
}

/** The whole surface. */
export interface Surface {
  server: string;
  file: string;
  upstream: string;
  auth: string;
  tools: DescribedTool[];
}

/** Describe a loaded guardfile. */
export function describeGuardfile(guardfile: Guardfile): Surface {
  const tools: DescribedTool[] = guardfile.grants.map((g) => describeGrant(g, guardfile));
  for (const w of guardfile.withholds) {
    tools.push({ name: w.tool, kind: "withheld", reason: w.reason, alternative: w.alternative });
  }
  if (guardfile.infoTool) {
    tools.push({
      name: guardfile.infoTool,
      kind: "info",
      description: "read-only: lists what this server serves; reaches nothing upstream",
    });
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const auth = guardfile.auth;
  return {
    server: guardfile.name,
    file: guardfile.file,
    upstream: typeof guardfile.baseUrl === "string"
      ? guardfile.baseUrl
      : `resolved at call time from ${sourceText(guardfile.baseUrl.chain)}`,
    auth: auth.scheme === "none"
      ? "none"
      : auth.scheme === "header-token"
      ? `header ${auth.header} from ${sourceText(auth.value.chain)}`
      : auth.scheme === "bearer"
      ? `Authorization: Bearer from ${sourceText(auth.value.chain)}`
      : `query ${auth.params.map((p) => `${p.name} from ${sourceText(p.value.chain)}`).join(", ")}`,
    tools,
  };
}

function sourceText(chain: { provider: string; address: string }[]): string {
  return chain.map((c) => (c.provider === "literal" ? "a literal" : `${c.provider} ${c.address}`))
    .join(", else ");
}

function describeGrant(grant: Grant, guardfile: Guardfile): DescribedTool {
  const inputs: DescribedInput[] = [];
  for (const p of grant.pathParams) {
    inputs.push({
      name: p,
      in: "path",
      type: "string",
      required: true,
      constraints: ["one segment"],
    });
  }
  for (const q of grant.query) {
    const constraints: string[] = [];
    if (q.minimum !== undefined || q.maximum !== undefined) {
      constraints.push(`${q.minimum ?? "-inf"}..${q.maximum ?? "inf"}`);
    }
    if (q.minItems !== undefined) constraints.push(`at least ${q.minItems} items`);
    if (q.maxItems !== undefined) constraints.push(`at most ${q.maxItems} items`);
    inputs.push({
      name: q.name,
      in: "query",
      type: q.kind === "array" ? `${q.type}[]` : q.type,
      required: q.required,
      constraints,
      ...(q.wire !== q.name ? { sentAs: q.wire } : {}),
    });
  }
  const walk = (fields: Grant["body"], prefix: string) => {
    for (const f of fields) {
      const name = prefix + f.name;
      const type = f.type === "array"
        ? (f.raw ? "array (any)" : `${f.items ?? "string"}[]`)
        : f.raw
        ? "object (any)"
        : f.type;
      inputs.push({ name, in: "body", type, required: f.required, constraints: [] });
      if (f.fields) walk(f.fields, `${name}.`);
    }
  };
  walk(grant.body, "");
  for (const m of grant.bodyMap) {
    inputs.push({
      name: m.source.join("."),
      in: "body map",
      type: "string",
      required: true,
      constraints: [],
      sentAs: m.target,
    });
  }
  for (const v of grant.graphql?.variables ?? []) {
    inputs.push({ name: v, in: "graphql", type: "any", required: false, constraints: [] });
  }
  const restrictions = guardfile.restricts
    .filter((r) => grant.pathParams.includes(r.param))
    .map((r) => ({ param: r.param, allowed: r.globs }));
  const tool: DescribedTool = {
    name: grant.tool,
    kind: "grant",
    method: grant.method,
    path: grant.path,
    description: grant.describe,
    inputs,
    restrictions,
    destructive: grant.destructive,
    inputSchema: grantInputSchema(grant, guardfile.restricts),
  };
  if (grant.exclusive.length > 0) tool.exclusive = grant.exclusive;
  if (grant.set) tool.fixedBody = grant.set;
  return tool;
}

/** The surface as text. */
export function describeText(surface: Surface): string {
  const lines = [
    `server ${surface.server} (${surface.file})`,
    `upstream ${surface.upstream}`,
    `auth ${surface.auth}`,
    "",
  ];
  for (const t of surface.tools) {
    if (t.kind === "withheld") {
      lines.push(`${t.name}  WITHHELD`);
      lines.push(`  reason: ${t.reason}`);
      if (t.alternative) lines.push(`  instead: ${t.alternative}`);
    } else if (t.kind === "info") {
      lines.push(`${t.name}  (info tool)`, `  ${t.description}`);
    } else {
      lines.push(`${t.name}  ${t.method} ${t.path}${t.destructive ? "  [destructive]" : ""}`);
      if (t.description) lines.push(`  ${t.description}`);
      for (const i of t.inputs ?? []) {
        const extra = [
          i.required ? "required" : "optional",
          ...i.constraints,
          ...(i.sentAs ? [`sent as ${i.sentAs}`] : []),
        ];
        lines.push(`  ${i.in.padEnd(8)} ${i.name}: ${i.type} (${extra.join(", ")})`);
      }
      for (const r of t.restrictions ?? []) {
        lines.push(
          `  restrict ${r.param} matches ${r.allowed.map((g) => JSON.stringify(g)).join(" ")}`,
        );
      }
      for (const g of t.exclusive ?? []) lines.push(`  at most one of: ${g.join(", ")}`);
      if (t.fixedBody) lines.push(`  body is always ${JSON.stringify(t.fixedBody)}`);
    }
    lines.push("");
  }
  return lines.map(printable).join("\n").trimEnd();
}
