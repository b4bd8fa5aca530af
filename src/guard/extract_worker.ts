/**
 * The parsing half of `extract`, run in a Web Worker so that a hostile or
 * broken document can be stopped (`Worker.terminate()`) when it passes its
 * deadline, and a parser crash takes down only this worker.
 *
 * Message in: `{ kind: "pdf-text" | "feed-entries", bytes: Uint8Array, max: number }`.
 * Message out: `{ ok: true, result, shown, total }` or `{ ok: false, error }`.
 *
 * @module
 */
import { getDocumentProxy } from "unpdf";
import { XMLParser } from "fast-xml-parser";

// Nothing from a parser may reach stdout (on stdio it is the MCP wire).
console.log = console.error;
console.warn = console.error;
console.info = console.error;

interface Job {
  kind: "pdf-text" | "feed-entries";
  bytes: Uint8Array;
  max: number;
}

type Reply =
  | { ok: true; result: unknown; shown: number; total: number }
  | { ok: false; error: string };

/** The worker's global scope (the Window type the checker assumes has no onmessage). */
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<Job>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = async (event: MessageEvent<Job>) => {
  const { kind, bytes, max } = event.data;
  let reply: Reply;
  try {
    reply = kind === "pdf-text" ? await pdfText(bytes, max) : feedEntries(bytes, max);
  } catch (error) {
    reply = {
      ok: false,
      error: error instanceof Error ? `${error.name}: ${error.message}` : "error",
    };
  }
  scope.postMessage(reply);
};

async function pdfText(bytes: Uint8Array, max: number): Promise<Reply> {
  let pdf;
  try {
    pdf = await getDocumentProxy(bytes, { verbosity: 0 });
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    return {
      ok: false,
      error: name === "PasswordException"
        ? "the PDF is encrypted"
        : `not a readable PDF (${error instanceof Error ? error.message : "parse error"})`,
    };
  }
  const total = pdf.numPages;
  const shown = Math.min(total, max);
  const pages: { page: number; text: string }[] = [];
  for (let i = 1; i <= shown; i++) {
    const page = await pdf.getPage(i);
    const content = await page.getTextContent();
    let text = "";
    for (const item of content.items as { str?: string; hasEOL?: boolean }[]) {
      if (typeof item.str === "string") text += item.str;
      if (item.hasEOL) text += "\n";
    }
    pages.push({ page: i, text: text.trim() });
    page.cleanup();
  }
  await pdf.cleanup();
  return { ok: true, result: { pages }, shown, total };
}

type Node = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  // No DTD entities: a feed has no business declaring them (billion laughs).
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ["item", "entry", "category", "link", "author"].includes(name),
});

function feedEntries(bytes: Uint8Array, max: number): Reply {
  const text = new TextDecoder("utf-8").decode(bytes);
  let doc: Node;
  try {
    doc = parser.parse(text, true) as Node;
  } catch (error) {
    return {
      ok: false,
      error: `not a feed: the XML does not parse (${
        error instanceof Error ? error.message.split("\n")[0] : "error"
      })`,
    };
  }
  // An element with no children parses as "": an empty <channel/> is still a channel.
  if (doc.rss !== undefined) {
    const channel = asNode(asNode(doc.rss)?.channel) ?? {};
    return done(textOf(channel.title), itemsOf(channel.item).map(rssEntry), max);
  }
  if (doc["rdf:RDF"] !== undefined) {
    // RSS 1.0: the items are siblings of the channel.
    const rdf = asNode(doc["rdf:RDF"]) ?? {};
    const channel = asNode(rdf.channel) ?? {};
    return done(textOf(channel.title), itemsOf(rdf.item).map(rssEntry), max);
  }
  if (doc.feed !== undefined) {
    const feed = asNode(doc.feed) ?? {};
    return done(textOf(feed.title), itemsOf(feed.entry).map(atomEntry), max);
  }
  return { ok: false, error: "not a feed: neither RSS (<rss><channel>) nor Atom (<feed>)" };
}

function itemsOf(value: unknown): Node[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter(asNode) as Node[];
}

function done(title: string | undefined, entries: Node[], max: number): Reply {
  const kept = entries.slice(0, max);
  const result: Node = {};
  if (title) result.title = title;
  result.entries = kept;
  return { ok: true, result, shown: kept.length, total: entries.length };
}

function rssEntry(item: Node): Node {
  const out: Node = {};
  put(out, "title", textOf(item.title));
  put(out, "link", textOf(first(item.link)));
  put(out, "author", textOf(first(item.author)) ?? textOf(item["dc:creator"]));
  put(out, "id", textOf(item.guid));
  put(out, "published", textOf(item.pubDate) ?? textOf(item["dc:date"]));
  const cats = ((item.category ?? []) as unknown[]).map(textOf).filter(Boolean);
  if (cats.length > 0) out.categories = cats;
  return out;
}

function atomEntry(entry: Node): Node {
  const out: Node = {};
  put(out, "title", textOf(entry.title));
  const links = (entry.link ?? []) as Node[];
  const link = links.find((l) => !l["@rel"] || l["@rel"] === "alternate") ?? links[0];
  put(out, "link", link ? (link["@href"] as string | undefined) : undefined);
  put(out, "author", textOf(asNode(first(entry.author))?.name ?? first(entry.author)));
  put(out, "id", textOf(entry.id));
  put(out, "published", textOf(entry.published));
  put(out, "updated", textOf(entry.updated));
  const cats = ((entry.category ?? []) as Node[])
    .map((c) => (asNode(c) ? (c["@term"] as string | undefined) : textOf(c)))
    .filter(Boolean);
  if (cats.length > 0) out.categories = cats;
  return out;
}

function put(out: Node, key: string, value: string | undefined): void {
  if (value !== undefined && value !== "") out[key] = value;
}

function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function asNode(value: unknown): Node | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Node
    : undefined;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number") return String(value);
  const node = asNode(value);
  if (node && typeof node["#text"] === "string") return (node["#text"] as string).trim();
  return undefined;
}
