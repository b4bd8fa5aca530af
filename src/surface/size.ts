/**
 * The size of a served surface in model tokens: what an agent pays on every
 * turn for the tools it is handed. `weir lint` prints it and enforces a budget
 * with it; `bench/context.ts` measures the examples with the same count.
 *
 * A tool's size is the number of o200k tokens (the tokenizer of OpenAI's GPT-4o
 * and later models, from the `gpt-tokenizer` package) of its compact JSON as
 * `tools/list` sends it: name, description, schemas, annotations, `_meta`. The
 * instructions are counted apart (a client that passes them on pays them once
 * per conversation, not per tool). Other vendors' tokenizers differ by some
 * per cent; the ratios between two surfaces move far less.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { McpServer } from "../mcp/server.ts";
import type { SurfaceSettings } from "../guardfile/model.ts";

/** The tokenizer, as the reports name it. */
export const TOKENIZER = "o200k_base (npm gpt-tokenizer 4.0.0)";

/**
 * The tokenizer's module, held in a constant so that Deno does not fetch it
 * before it is needed: a dynamic `import()` of a string literal is part of the
 * module graph, and its npm package (30 MB) is downloaded when any command
 * starts; an `import()` of a variable is resolved only when it runs, so only
 * `weir lint` downloads it. Written as the full `npm:` specifier (the version
 * pinned in deno.json, held to it by tests/release/lazy_npm_test.ts) so that it
 * resolves the same from a checkout, from JSR and in a compiled binary.
 */
const TOKENIZER_MODULE = "npm:gpt-tokenizer@4.0.0/encoding/o200k_base";

/** One tool's size. */
export interface ToolSize {
  /** The tool's name. */
  name: string;
  /** o200k tokens of its compact JSON as listed. */
  tokens: number;
}

/** A surface's size. */
export interface SurfaceSize {
  /** The tokenizer used ({@link TOKENIZER}). */
  tokenizer: string;
  /** How many tools are listed. */
  tools: number;
  /** Tokens of all listed tools together. */
  tokens: number;
  /** `tokens / tools`, one decimal (0 for no tools). */
  tokensPerTool: number;
  /** Tokens of the server's `instructions` (0 when none). */
  instructionsTokens: number;
  /** Every tool, largest first (ties by name). */
  perTool: ToolSize[];
}

/** What a server lists: its tools (every page) and its instructions. */
export interface ListedSurface {
  /** The tools as `tools/list` returns them, all pages in order. */
  tools: JsonObject[];
  /** The server's `instructions`, if any. */
  instructions?: string;
}

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/**
 * Ask a server, in process, for what a client would be shown: `server/discover`
 * for the instructions, then every page of `tools/list` (2026-07-28; the tool
 * objects are the same in both revisions). Nothing goes over a transport.
 *
 * @throws {Error} when the server answers either request with an error
 */
export async function listedSurface(server: McpServer): Promise<ListedSurface> {
  let id = 0;
  const ask = async (method: string, params: JsonObject = {}): Promise<JsonObject> => {
    const reply = await server.handle({
      jsonrpc: "2.0",
      id: ++id,
      method,
      params: { ...params, _meta: META },
    });
    const body = JSON.parse(reply.body ?? "null");
    if (!body?.result) throw new Error(`${method}: ${body?.error?.message ?? "no result"}`);
    return body.result;
  };
  const discover = await ask("server/discover");
  const tools: JsonObject[] = [];
  let cursor: string | undefined;
  do {
    const page = await ask("tools/list", cursor === undefined ? {} : { cursor });
    tools.push(...page.tools as JsonObject[]);
    cursor = page.nextCursor as string | undefined;
  } while (cursor !== undefined);
  const instructions = typeof discover.instructions === "string"
    ? discover.instructions
    : undefined;
  return { tools, instructions };
}

/**
 * Count a listed surface (loads the tokenizer on first use: about 0.3 s).
 * @param listed the tools and instructions as a client receives them
 */
export async function measureSurface(listed: ListedSurface): Promise<SurfaceSize> {
  const { countTokens }: typeof import("npm:gpt-tokenizer@4.0.0/encoding/o200k_base") =
    await import(TOKENIZER_MODULE);
  const perTool = listed.tools.map((tool) => ({
    name: String(tool.name),
    tokens: countTokens(JSON.stringify(tool)),
  })).sort((a, b) => b.tokens - a.tokens || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tokens = perTool.reduce((sum, t) => sum + t.tokens, 0);
  return {
    tokenizer: TOKENIZER,
    tools: perTool.length,
    tokens,
    tokensPerTool: perTool.length === 0 ? 0 : Math.round((tokens / perTool.length) * 10) / 10,
    instructionsTokens: listed.instructions ? countTokens(listed.instructions) : 0,
    perTool,
  };
}

/** How many of the largest tools a budget problem names. */
export const LARGEST = 5;

/** The budget lines a size breaks, each naming the largest tools. */
export function budgetProblems(
  size: SurfaceSize,
  settings: Pick<SurfaceSettings, "maxTokens" | "maxToolTokens">,
): string[] {
  const out: string[] = [];
  const largest = size.perTool.slice(0, LARGEST).map((t) => `${t.name} ${t.tokens}`).join(", ");
  if (settings.maxTokens !== undefined && size.tokens > settings.maxTokens) {
    out.push(
      `the tools list ${size.tokens} tokens, over the budget of ${settings.maxTokens} ` +
        `(max-tokens); the largest tools: ${largest}. Shorten their descriptions, withhold or ` +
        `drop tools, or raise the budget`,
    );
  }
  if (settings.maxToolTokens !== undefined) {
    const over = size.perTool.filter((t) => t.tokens > settings.maxToolTokens!);
    if (over.length > 0) {
      out.push(
        `${over.length} tool${over.length === 1 ? "" : "s"} over the per-tool budget of ` +
          `${settings.maxToolTokens} tokens (max-tool-tokens): ` +
          `${over.slice(0, LARGEST).map((t) => `${t.name} ${t.tokens}`).join(", ")}` +
          `${over.length > LARGEST ? ", ..." : ""}. Shorten them, or raise the budget`,
      );
    }
  }
  return out;
}
