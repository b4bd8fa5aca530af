/**
 * `extract "<tool>" as="pdf-text"|"feed-entries"`: a grant's raw answer (it
 * must declare `raw-response`) projected into something a model can read.
 *
 * - `pdf-text`: `{pages: [{page, text}]}`, the first `max-pages` pages
 *   (default 20, at most 200); `coverage.pages = {shown, total}`. Text only:
 *   no OCR, no tables. Encrypted or malformed documents are tool errors.
 * - `feed-entries`: RSS 2.0, RSS 1.0 (RDF) or Atom as
 *   `{title?, entries: [{title, link, author, id, published, updated, categories}]}`,
 *   each field left out when the feed lacks it and the entry body dropped;
 *   the first `max-items` entries (default 25, at most 250);
 *   `coverage.entries = {shown, total}`. A non-feed is a tool error; an empty
 *   feed is `entries: []`, 0 of 0.
 *
 * Size gates before any parsing: 32 MiB for a PDF, 8 MiB for a feed (the
 * upstream response cap, `--max-response-bytes`, applies first). Parsing runs
 * in a Web Worker ({@link ./extract_worker.ts}) that is terminated when the
 * call's deadline passes or the call is cancelled, so a hostile document can
 * neither hang nor crash the server. Libraries: `npm:unpdf` (pdf.js) and
 * `npm:fast-xml-parser` (DTD entities off).
 *
 * @module
 */
import { ToolError } from "../mcp/server.ts";
import type { Extraction } from "../guardfile/model.ts";
import { kindOf, WeirError } from "../errors/kinds.ts";
import { moduleUrl } from "../ops/lazy.ts";

/** The kinds of a call's deadline passing (src/guard/host.ts CallBudget). */
const TIMEOUTS = new Set<string>(["upstream_timeout", "sql_timeout", "extract_timeout"]);

/** Bytes a PDF may have before parsing is refused. */
export const PDF_MAX_BYTES = 32 * 1024 * 1024;
/** Bytes a feed may have before parsing is refused. */
export const FEED_MAX_BYTES = 8 * 1024 * 1024;

/** What an extraction produced. */
export interface Extracted {
  result: unknown;
  shown: number;
  total: number;
}

/**
 * Parse a raw answer.
 * @param timeoutMs time left for the parse (0 = none)
 * @param deadlineMs the deadline as configured, for the message (a caller
 *   passing what is left of a call's deadline still names the setting)
 * @throws {ToolError} `extract_too_large` 502, `extract_failed` 502, `extract_timeout` 504,
 *   `cancelled` 499
 */
export function extract(
  tool: string,
  rule: Extraction,
  bytes: Uint8Array,
  timeoutMs: number,
  signal: AbortSignal,
  deadlineMs: number = timeoutMs,
): Promise<Extracted> {
  const gate = rule.as === "pdf-text" ? PDF_MAX_BYTES : FEED_MAX_BYTES;
  const what = rule.as === "pdf-text" ? "PDF" : "feed";
  if (bytes.length > gate) {
    return Promise.reject(
      new WeirError(
        "extract_too_large",
        `${tool} answered a ${what} of ${bytes.length} bytes, over the ` +
          `${gate}-byte gate; nothing was parsed`,
        { status: 502 },
      ),
    );
  }
  return new Promise<Extracted>((resolve, reject) => {
    const worker = new Worker(moduleUrl("src/guard/extract_worker.ts"), {
      type: "module",
    });
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      worker.terminate();
      outcome();
    };
    // Words name the deadline the operator set, never what was left of it.
    const late = () =>
      new WeirError(
        "extract_timeout",
        `parsing the ${what} from ${tool} passed the ${deadlineMs} ms deadline and was stopped`,
        { status: 504 },
      );
    const timer = timeoutMs > 0
      ? setTimeout(() => finish(() => reject(late())), timeoutMs)
      : undefined;
    const onAbort = () =>
      finish(() =>
        reject(
          // The call's deadline passing while parsing is this parse's timeout, however
          // the two timers raced.
          TIMEOUTS.has(kindOf(signal.reason) ?? "")
            ? late()
            : signal.reason instanceof ToolError
            ? signal.reason
            : new WeirError("cancelled", `${tool} was cancelled while parsing`, { status: 499 }),
        )
      );
    signal.addEventListener("abort", onAbort, { once: true });
    worker.onmessage = (event: MessageEvent) => {
      const reply = event.data as
        | { ok: true; result: unknown; shown: number; total: number }
        | { ok: false; error: string };
      finish(() =>
        reply.ok
          ? resolve({ result: reply.result, shown: reply.shown, total: reply.total })
          : reject(
            new WeirError(
              "extract_failed",
              `${tool} answered a ${what} weir cannot read: ${reply.error}`,
              {
                status: 502,
              },
            ),
          )
      );
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      finish(() =>
        reject(
          new WeirError("extract_failed", `the ${what} parser failed on the answer of ${tool}`, {
            status: 502,
          }),
        )
      );
    };
    const copy = bytes.slice();
    worker.postMessage({ kind: rule.as, bytes: copy, max: rule.max }, [copy.buffer]);
  });
}
