/**
 * `weir describe [--format text|json|openapi|html] [--read-only] FILE`: the served surface as
 * a person reads it, as JSON, as the OpenAPI 3.1 document of its HTTP tool
 * API (`src/surface/openapi.ts`), or as a self-contained review page
 * (`src/modes/describe_html.ts`). A guardfile that wraps an MCP server is
 * described from the server's definitions with the file's rules applied
 * (weir connects to it, lists its tools and calls none).
 *
 * @module
 */
import { loadGuardfileFile } from "../modes/serve.ts";
import { describeText } from "../modes/describe.ts";
import { surfaceOfGuardfile } from "../surface/spec.ts";
import { parseFlags, printDiagnostics, surfaceFlags, UsageError } from "./args.ts";
import config from "../../deno.json" with { type: "json" };
import { ENVELOPE_SCHEMA } from "../guard/coverage.ts";
import { openApiDocument } from "../surface/openapi.ts";

/**
 * Run `weir describe`.
 * @param args the arguments after `describe`
 * @returns 0 when the guardfile loads, 1 otherwise
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    format: { type: "string", default: "text" },
    "read-only": { type: "boolean" },
  });
  if (positionals.length !== 1) throw new UsageError("describe takes exactly one FILE");
  if (!["text", "json", "openapi", "html"].includes(values.format)) {
    throw new UsageError(`--format must be text, json, openapi or html, not ${values.format}`);
  }
  // --read-only: the surface serve --read-only would serve (writes become withheld stubs).
  // describe prints where a rate-limit store's URL comes from; it never reads it.
  const loaded = await loadGuardfileFile(positionals[0], surfaceFlags(values), {
    storeUrl: false,
  });
  printDiagnostics(loaded);
  if (!loaded.guardfile && !loaded.policy && !loaded.mcpWrap) return 1;
  let surface;
  if (loaded.mcpWrap) {
    // The served definitions are the MCP server's with the file's rules: ask it.
    const { describeWrapFile } = await import("../modes/serve_mcp_wrap.ts");
    const described = await describeWrapFile(loaded.mcpWrap);
    if (typeof described === "string") {
      console.error(`weir: describe: ${described}`);
      return 1;
    }
    surface = described;
  } else {
    surface = loaded.policy
      ? (await import("../modes/serve_aws.ts")).describeAws(loaded.policy)
      : surfaceOfGuardfile(loaded.guardfile!);
  }
  if (values.format === "openapi") {
    // Guard grants answer the coverage envelope as structuredContent; a
    // proxied tool, the MCP server's own outputSchema.
    const outputSchemas = loaded.guardfile
      ? Object.fromEntries(
        surface.tools.filter((t) => t.kind === "grant").map((t) => [t.name, ENVELOPE_SCHEMA]),
      )
      : loaded.mcpWrap
      ? Object.fromEntries(
        surface.tools.flatMap((t) => t.outputSchema ? [[t.name, t.outputSchema]] : []),
      )
      : (await import("../modes/serve_aws.ts")).awsOutputSchemas(loaded.policy!);
    const doc = openApiDocument(surface, {
      version: config.version,
      outputSchemas,
      inboundTokens:
        ((loaded.guardfile?.inboundTokens ?? loaded.mcpWrap?.inboundTokens)?.length ?? 0) > 0,
    });
    console.log(JSON.stringify(doc, null, 2));
    return 0;
  }
  if (values.format === "html") {
    const { surfaceHtml } = await import("../modes/describe_html.ts");
    console.log(surfaceHtml(surface, { version: config.version }).trimEnd());
    return 0;
  }
  console.log(values.format === "json" ? JSON.stringify(surface, null, 2) : describeText(surface));
  return 0;
}
