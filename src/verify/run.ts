/**
 * The loop of `weir verify`: every generated call sent to weir as a client
 * would send it (MCP under both revisions, and the tool API), one at a time,
 * and every assertion held for it: at most one upstream request per call; a
 * call of anything but a served tool reaches nothing; the request is the one
 * the grant allows (the mode's oracle); a gated call is sent only after a
 * person's confirmation; no byte of a stand-in secret in any answer, log line
 * or telemetry event. Where the file sends each caller's identity upstream
 * (token exchange), each call is made by a caller ({@link Caller}): a call
 * whose caller's identity cannot go upstream reaches nothing and asks no one.
 *
 * @module
 */
import type { Case, Via } from "./cases.ts";
import { findSecret } from "./secrets.ts";
import type { StdioLink } from "./stdio_link.ts";

/** A tool weir lists, as verify needs it. */
export interface ListedTool {
  name: string;
  inputSchema: Record<string, unknown>;
  /** A call of it may reach the upstream (a grant or a proxied tool; not a stub or the info tool). */
  reaches: boolean;
  /** A person must confirm each call first. */
  confirm: boolean;
  /** Answers may be reused (`cache`): a success without a request is then no surprise. */
  cached: boolean;
  /**
   * What verify cannot hold for this tool, in words (a sql grant: no database
   * to run its statement against). Absent: the tool is held whole.
   */
  unchecked?: string;
}

/** Who makes a call, where the file sends the caller's identity upstream. */
export interface Caller {
  /** The caller's subject. */
  name: string;
  /** The `Authorization` its HTTP requests carry (none over stdio). */
  authorization?: string;
  /**
   * Why this caller's identity cannot go upstream (its exchange refused, no
   * token to exchange): its calls must be refused before any person is asked
   * or any request sent. Absent: its calls may go through.
   */
  refused?: string;
}

/** What verify drives and watches, for one guardfile. */
export interface Target {
  /** weir's HTTP app, as `weir serve --http` answers (`/mcp`, `/api/<tool>`). */
  fetch(request: Request): Promise<Response>;
  /** weir over stdio: one 2025-11-25 session (opened on first use). */
  stdio(): Promise<StdioLink>;
  /** Every tool listed. */
  tools: ListedTool[];
  /** How many requests (or MCP calls) the stand-in has received so far. */
  received(): number;
  /** The violations of the stand-in's records `[from, received())` for one call. */
  check(tool: string, args: unknown, from: number, caller?: Caller): string[];
  /** Who makes case `index` (absent: no caller identity; calls carry no credential). */
  callerOf?(index: number, via: Via): Caller;
  /** What the other stand-ins (the identity provider) found wrong since last asked. */
  findings?(): string[];
  /** The stand-in secrets, by what they are (`credential`, `pin site_id`, ...). */
  secrets: [string, string][];
  /** Log lines and telemetry events written so far, as text. */
  watched(): string[];
}

/** One violation, with what replays it. */
export interface Violation {
  /** The case's position in the tool's cases (0-based). */
  index: number;
  via: Via;
  kind: string;
  /** The tool name sent. */
  sent: string;
  /** The arguments as sent (cut to 300 characters). */
  args: string;
  message: string;
}

/** What one tool's cases found. */
export interface ToolReport {
  tool: string;
  cases: number;
  /** Upstream requests (or MCP calls) its calls under its own name made. */
  requests: number;
  /** Calls answered with an error that reached nothing upstream (refused before sending). */
  refused: number;
  /** Calls a person was asked to confirm. */
  confirmed: number;
  violations: Violation[];
  /** What was not held for this tool (see {@link ListedTool.unchecked}). */
  unchecked?: string;
}

const HOST = "127.0.0.1:8080";

/** The JSON-RPC answer in a response (a JSON body, or the last answer on an event stream). */
async function rpcAnswer(
  response: Response,
): Promise<{ text: string; json: Record<string, unknown> | undefined }> {
  const text = await response.text();
  const type = response.headers.get("content-type") ?? "";
  let candidates = [text];
  if (type.includes("text/event-stream")) {
    candidates = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim())
      .reverse();
  }
  for (const c of candidates) {
    try {
      const json = JSON.parse(c);
      if (json && typeof json === "object" && ("result" in json || "error" in json)) {
        return { text, json };
      }
    } catch { /* not this one */ }
  }
  return { text, json: undefined };
}

/**
 * A reused answer must be its own caller's: the stand-in's `served` numbers
 * it quotes (raw, or inside JSON text) name requests of this caller only.
 * @param madeBy whose call made each request the stand-in received
 */
function reusedFromOthers(text: string, caller: Caller, madeBy: readonly string[]): string[] {
  return [...text.matchAll(/\\*"served\\*":\s*(\d+)/g)].flatMap(([, n]) => {
    const owner = madeBy[Number(n)];
    return owner !== undefined && owner !== caller.name
      ? [`${caller.name} was answered with the answer kept for ${owner}'s call`]
      : [];
  });
}

/**
 * The same call again by another caller who may call (a tool whose answers
 * are kept): with the caller's identity upstream, it must get its own answer,
 * never the one kept for the first caller.
 */
async function byAnother(
  target: Target,
  index: number,
  via: Via,
  c: Case,
  first: Caller,
  madeBy: string[],
): Promise<{ problems: string[]; text: string; made: number }> {
  let other: Caller | undefined;
  for (let j = index + 1; j <= index + 10 && !other; j++) {
    const candidate = target.callerOf?.(j, via);
    if (candidate && candidate.name !== first.name && candidate.refused === undefined) {
      other = candidate;
    }
  }
  if (!other) return { problems: [], text: "", made: 0 };
  const from = target.received();
  const answer = await send(target, via, c.tool, c.args, other);
  const made = target.received() - from;
  for (let at = from; at < from + made; at++) madeBy[at] = other.name;
  const problems = made === 0 && answer.outcome === "ok"
    ? reusedFromOthers(answer.text, other, madeBy)
    : [];
  if (made === 1) problems.push(...target.check(c.tool, JSON.parse(c.args), from, other));
  return { problems, text: answer.text, made };
}

/** Whether a header value can carry `text` as it is (else the client sends it another way). */
function headerSafe(text: string): boolean {
  return /^[\x21-\x7e]+$/.test(text);
}

async function send(
  target: Target,
  via: Via,
  tool: string,
  args: string,
  caller: Caller | undefined,
  extra = "",
): Promise<{ text: string; outcome: "ok" | "refused" | "ask"; ask?: Record<string, unknown> }> {
  const authorization: Record<string, string> = caller?.authorization
    ? { authorization: caller.authorization }
    : {};
  if (via === "tool API") {
    const response = await target.fetch(
      new Request(`http://${HOST}/api/${encodeURIComponent(tool)}`, {
        method: "POST",
        headers: { host: HOST, "content-type": "application/json", ...authorization },
        body: args,
      }),
    );
    const text = await response.text();
    return { text, outcome: response.status === 200 ? "ok" : "refused" };
  }
  const modern = via === "mcp 2026-07-28";
  const meta = modern
    ? `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
      `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
    : "";
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${
    JSON.stringify(tool)
  },"arguments":${args}${extra}${meta}}}`;
  const headers: Record<string, string> = {
    host: HOST,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
    ...authorization,
  };
  if (modern) {
    headers["mcp-method"] = "tools/call";
    headers["mcp-name"] = tool;
  }
  const response = await target.fetch(
    new Request(`http://${HOST}/mcp`, { method: "POST", headers, body }),
  );
  const { text, json } = await rpcAnswer(response);
  const result = json?.result as Record<string, unknown> | undefined;
  if (!result || result.isError === true) return { text, outcome: "refused" };
  if (result.resultType === "input_required") return { text, outcome: "ask", ask: result };
  return { text, outcome: "ok" };
}

/**
 * Run one tool's cases against the target.
 * @param tool the tool the cases were generated for
 */
export async function runCases(target: Target, tool: string, cases: Case[]): Promise<ToolReport> {
  const report: ToolReport = {
    tool,
    cases: cases.length,
    requests: 0,
    refused: 0,
    confirmed: 0,
    violations: [],
  };
  const byName = new Map(target.tools.map((t) => [t.name, t]));
  const unchecked = byName.get(tool)?.unchecked;
  if (unchecked) report.unchecked = unchecked;
  // Whose call made each request the stand-in received (a reused answer must be its caller's own).
  const madeBy: string[] = [];
  for (const [index, c] of cases.entries()) {
    // A name a header cannot carry goes as a 2025-11-25 client sends it (no Mcp-Name header).
    const via: Via = c.via === "mcp 2026-07-28" && !headerSafe(c.tool) ? "mcp 2025-11-25" : c.via;
    const problems: string[] = [];
    const from = target.received();
    const seen = target.watched().length;
    const texts: string[] = [];
    const listed = byName.get(c.tool);
    const caller = target.callerOf?.(index, via);
    let answer: Awaited<ReturnType<typeof send>>;
    let asked = false;
    if (via === "stdio 2025-11-25") {
      // A person is asked over the session (elicitation) and says yes.
      const link = await target.stdio();
      const said = await link.call(c.tool, c.args, () => {
        asked = true;
        report.confirmed++;
        if (!listed?.confirm) problems.push(`a person was asked to confirm a tool with no confirm`);
        if (target.received() > from) {
          problems.push(`a request was sent before the person answered`);
        }
      });
      answer = { text: said.text, outcome: said.ok ? "ok" : "refused" };
      if (!asked && listed?.confirm && target.received() > from) {
        problems.push(`the call was sent upstream without asking a person (confirm)`);
      }
    } else answer = await send(target, via, c.tool, c.args, caller);
    texts.push(answer.text);
    if (answer.outcome === "ask") {
      asked = true;
      report.confirmed++;
      if (!listed?.confirm) problems.push(`a person was asked to confirm a tool with no confirm`);
      if (target.received() > from) problems.push(`a request was sent before the person answered`);
      const requests = (answer.ask?.inputRequests ?? {}) as Record<string, unknown>;
      const responses = Object.fromEntries(
        Object.keys(requests).map((k) => [k, { action: "accept" }]),
      );
      answer = await send(
        target,
        via,
        c.tool,
        c.args,
        caller,
        `,"inputResponses":${JSON.stringify(responses)},"requestState":${
          JSON.stringify(answer.ask?.requestState)
        }`,
      );
      texts.push(answer.text);
    } else if (listed?.confirm && target.received() > from && via !== "stdio 2025-11-25") {
      problems.push(`the call was sent upstream without asking a person (confirm)`);
    }
    const made = target.received() - from;
    // Counted for the tool when the call named it (a call sent under another name is that name's).
    if (c.tool === tool) report.requests += made;
    if (answer.outcome !== "ok" && made === 0) report.refused++;
    if (made > 1) problems.push(`${made} upstream requests for one call (at most one)`);
    if (caller) { for (let at = from; at < from + made; at++) madeBy[at] = caller.name; }
    if (made === 0 && answer.outcome === "ok" && listed?.cached && caller) {
      problems.push(...reusedFromOthers(texts.at(-1) ?? "", caller, madeBy));
    }
    if (made === 0 && answer.outcome === "ok" && listed?.reaches && !listed.cached) {
      problems.push(
        `a call answered as done, and no request reached the upstream (sent somewhere else?)`,
      );
    }
    if (made > 0) {
      if (!listed?.reaches) {
        problems.push(
          listed
            ? `a call of "${c.tool}", which reaches nothing (withheld or the info tool), made a request`
            : `a call of "${c.tool}", a name weir does not list, made a request`,
        );
      } else {
        let args: unknown;
        try {
          args = JSON.parse(c.args);
        } catch { /* the case's JSON is always well-formed */ }
        problems.push(...target.check(c.tool, args, from, caller));
      }
    }
    if (caller?.refused !== undefined) {
      const who =
        `a call by ${caller.name}, whose identity cannot go upstream (${caller.refused}),`;
      if (made > 0) problems.push(`${who} reached the upstream`);
      // weir answers the info tool itself: only a call that would reach the upstream is refused.
      if (listed?.reaches && answer.outcome === "ok") problems.push(`${who} was answered as done`);
      if (listed?.reaches && asked) {
        problems.push(
          `${who} asked a person to confirm it: the caller's identity is settled before anyone is asked`,
        );
      }
    }
    problems.push(...(target.findings?.() ?? []));
    if (made === 1 && answer.outcome === "ok" && caller && listed?.cached && !listed.confirm) {
      const again = await byAnother(target, index, via, c, caller, madeBy);
      if (c.tool === tool) report.requests += again.made;
      problems.push(...again.problems);
      texts.push(again.text);
    }
    const watched = target.watched().slice(seen);
    for (const [what, secret] of target.secrets) {
      for (const text of texts) {
        const form = findSecret(text, secret);
        if (form) problems.push(`the ${what} (${form}) is in the answer`);
      }
      for (const line of watched) {
        const form = findSecret(line, secret);
        if (form) problems.push(`the ${what} (${form}) is in a log line or telemetry event`);
      }
    }
    for (const message of new Set(problems)) {
      report.violations.push({
        index,
        via,
        kind: c.kind,
        sent: c.tool,
        args: c.args.length > 300 ? `${c.args.slice(0, 297)}...` : c.args,
        message,
      });
    }
  }
  return report;
}
