/**
 * The guardfile's static context as MCP resources and prompts: `resource`
 * nodes become fixed text resources, `prompt` nodes message templates with
 * `{argument}` substitution. Served through the core like any host's catalog.
 *
 * @module
 */
import {
  type Logger,
  NotFoundError,
  type PromptReader,
  type ResourceReader,
} from "../mcp/server.ts";
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

/**
 * Reads a `resource` node's text, writing the audit line of the read
 * (`resource_read`, src/ops/audit.ts shape: the resource's name, never a value).
 */
export function resourceReader(resources: StaticResource[], log?: Logger): ResourceReader {
  const byUri = new Map(resources.map((r) => [r.uri, r]));
  return (uri, ctx) => {
    const r = byUri.get(uri);
    if (!r) throw new NotFoundError(`no resource ${uri}`);
    log?.({
      level: "info",
      event: "resource_read",
      decision: "allow",
      resource: r.name,
      status: 200,
      ...subjectField(ctx?.auth),
    });
    return [{ uri, mimeType: r.mimeType, text: r.text }];
  };
}

/** The caller's subject as an audit field, when weir checked an OAuth token. */
function subjectField(auth: unknown): { subject?: string } {
  const subject = (auth as { subject?: unknown } | null | undefined)?.subject;
  return typeof subject === "string" ? { subject: subject.slice(0, 128) } : {};
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
export function promptReader(prompts: PromptTemplate[], log?: Logger): PromptReader {
  const byName = new Map(prompts.map((p) => [p.name, p]));
  return (name, args, ctx) => {
    const p = byName.get(name);
    if (!p) throw new NotFoundError(`no prompt ${name}`);
    log?.({
      level: "info",
      event: "prompt_get",
      decision: "allow",
      prompt: name,
      status: 200,
      ...subjectField(ctx?.auth),
    });
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
