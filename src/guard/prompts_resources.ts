/**
 * The guardfile's static context as MCP resources and prompts: `resource`
 * nodes become fixed text resources, `prompt` nodes message templates with
 * `{argument}` substitution. Served through the core like any host's catalog.
 *
 * @module
 */
import { NotFoundError, type PromptReader, type ResourceReader } from "../mcp/server.ts";
import type { PromptSpec, ResourceSpec } from "../mcp/types.ts";
import type { PromptTemplate, StaticResource } from "../guardfile/model.ts";

/** `resource` nodes as listed resources (audience and priority become annotations). */
export function resourceSpecs(resources: StaticResource[]): ResourceSpec[] {
  return resources.map((r) => {
    const spec: ResourceSpec = { uri: r.uri, name: r.name, mimeType: r.mimeType };
    if (r.title) spec.title = r.title;
    if (r.description) spec.description = r.description;
    if (r.audience || r.priority !== undefined) {
      spec.annotations = {};
      if (r.audience) spec.annotations.audience = r.audience;
      if (r.priority !== undefined) spec.annotations.priority = r.priority;
    }
    return spec;
  });
}

/** Reads a `resource` node's text. */
export function resourceReader(resources: StaticResource[]): ResourceReader {
  const byUri = new Map(resources.map((r) => [r.uri, r]));
  return (uri) => {
    const r = byUri.get(uri);
    if (!r) throw new NotFoundError(`no resource ${uri}`);
    return [{ uri, mimeType: r.mimeType, text: r.text }];
  };
}

/** `prompt` nodes as listed prompts. */
export function promptSpecs(prompts: PromptTemplate[]): PromptSpec[] {
  return prompts.map((p) => {
    const spec: PromptSpec = {
      name: p.name,
      arguments: p.arguments.map((a) => ({ ...a })),
    };
    if (p.title) spec.title = p.title;
    if (p.description) spec.description = p.description;
    return spec;
  });
}

/** Renders a prompt: one user message, each `{argument}` replaced (a missing optional: empty). */
export function promptReader(prompts: PromptTemplate[]): PromptReader {
  const byName = new Map(prompts.map((p) => [p.name, p]));
  return (name, args) => {
    const p = byName.get(name);
    if (!p) throw new NotFoundError(`no prompt ${name}`);
    // One pass over the template: a value is inserted literally and is never
    // itself searched for {placeholders}.
    const declared = new Set(p.arguments.map((a) => a.name));
    const text = p.text.replace(
      /\{([^{}]+)\}/g,
      (whole, name: string) =>
        declared.has(name) ? (Object.hasOwn(args, name) ? args[name] : "") : whole,
    );
    return {
      ...(p.description ? { description: p.description } : {}),
      messages: [{ role: "user", content: { type: "text", text } }],
    };
  };
}
