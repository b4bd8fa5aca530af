/**
 * The surface model's fields that `weir describe` and the review page show
 * beside a tool's operation, arguments and controls, as labelled words: the
 * fixed headers (never their text), the connection to a wrapped MCP server,
 * the `surface` settings, the text a model reads (instructions, resources,
 * prompts, icons), and a tool's title, hints, answer handling and output
 * schema. One wording for both readers, so neither leaves a field out. Pure.
 *
 * @module
 */
import { CONCEALED_TEXT } from "./concealed.ts";
import type { Surface, Tool } from "./model.ts";
import { oneLine } from "./words.ts";

/** One labelled fact: `[label, words]`. */
export type Fact = [string, string];

/**
 * The server's facts describe shows after who may call.
 * @example
 * ```ts
 * import { serverFacts } from "./facts.ts";
 * const facts = serverFacts({
 *   headers: [],
 *   settings: { readOnly: false, schemaProfile: "gemini", maxTokens: 4000 },
 *   texts: { instructions: "Be brief.", resources: [], prompts: [], icons: [] },
 * });
 * if (!facts.some(([k, v]) => k === "surface" && v.includes("gemini"))) throw new Error();
 * ```
 */
export function serverFacts(
  surface: Pick<Surface, "headers" | "connection" | "settings" | "texts" | "aws">,
): Fact[] {
  const out: Fact[] = surface.headers.map((
    header,
  ) => ["header", `${header.name}: ${CONCEALED_TEXT}`]);
  // An AWS policy's own limits (content types, max-bytes, parameters) are
  // enforced by weir, not by a tool's schema: a reviewer reads them here.
  for (const [key, value] of Object.entries(surface.aws?.policy ?? {})) {
    if (value === undefined || value === null || value === "") continue;
    const words = Array.isArray(value) ? value.map(String).join(", ") : String(value);
    out.push(["policy", `${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${words}`]);
  }
  const c = surface.connection;
  const connection = [
    c?.connectTimeoutMs !== undefined ? `connect-timeout ${c.connectTimeoutMs} ms` : "",
    c?.requestTimeoutMs !== undefined ? `request-timeout ${c.requestTimeoutMs} ms` : "",
    c?.maxResponseBytes !== undefined ? `max-response-bytes ${c.maxResponseBytes}` : "",
    c?.maxStalenessMs !== undefined ? `max-staleness ${c.maxStalenessMs} ms` : "",
  ].filter((x) => x !== "");
  if (connection.length > 0) out.push(["connection", connection.join(", ")]);
  const s = surface.settings;
  const settings = [
    s.readOnly ? "read-only: only operations that change nothing" : "",
    s.schemaProfile !== "full" ? `schema profile ${s.schemaProfile}` : "",
    s.maxTokens !== undefined ? `max-tokens ${s.maxTokens}` : "",
    s.maxToolTokens !== undefined ? `max-tool-tokens ${s.maxToolTokens}` : "",
  ].filter((x) => x !== "");
  if (settings.length > 0) out.push(["surface", settings.join(", ")]);
  const t = surface.texts;
  if (t.instructions !== undefined) {
    out.push(["instructions", JSON.stringify(oneLine(t.instructions))]);
  }
  for (const r of t.resources) out.push(["resource", r.name]);
  for (const p of t.prompts) out.push(["prompt", p.name]);
  for (const i of t.icons) out.push(["icon", i]);
  return out;
}

/**
 * A tool's facts describe shows beside its controls: title, the hints a
 * client reads (a proxied tool's: a grant's follow from its method), how an answer is taken (`fail-when`, `raw-response`), and
 * whether an output schema is promised.
 */
export function toolFacts(tool: Tool): Fact[] {
  const out: Fact[] = [];
  if (tool.title !== undefined) out.push(["title", tool.title]);
  const hints = [
    tool.hints?.idempotent !== undefined
      ? `idempotent ${tool.hints.idempotent ? "yes" : "no"}`
      : "",
    tool.hints?.openWorld !== undefined ? `open world ${tool.hints.openWorld ? "yes" : "no"}` : "",
  ].filter((x) => x !== "");
  // A grant's hints follow from its method, which describe shows; a proxy's are claims.
  if (hints.length > 0 && tool.kind === "proxy") out.push(["hints", hints.join(", ")]);
  const c = tool.controls;
  if (c.failWhen !== undefined) {
    out.push(["fail-when", `an answer matching ${c.failWhen} is an error`]);
  }
  if (c.rawResponse) out.push(["raw-response", "the answer is passed through as text"]);
  if (tool.outputSchema !== undefined) out.push(["output schema", "promised (structured answers)"]);
  return out;
}
