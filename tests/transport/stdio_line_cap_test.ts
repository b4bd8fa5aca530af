/**
 * The stdio line cap holds at boundary-1, boundary and boundary+1 however
 * the bytes arrive: a line of exactly the cap (line end not counted) is
 * answered, one byte more is refused with -32600 and skipped, for generated
 * splits of the input (one chunk, byte by byte around the boundary, random
 * cut points), with CRLF or LF line ends, and the next line is answered.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { McpServer, serveStdio } from "../../mod.ts";

const enc = new TextEncoder();
const CAP = 2000;

const server = new McpServer({
  name: "cap",
  log: () => {},
  catalog: { tools: [], resources: [], prompts: [] },
});

/** A ping of exactly `size` bytes (padded with spaces inside the JSON object). */
function pingLine(size: number, id: number): string {
  const bare = `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
  return bare.slice(0, -1) + " ".repeat(size - bare.length) + "}";
}

async function run(input: Uint8Array, cuts: number[]): Promise<unknown[]> {
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, input.length]) {
    if (cut <= from) continue;
    pieces.push(input.slice(from, cut));
    from = cut;
  }
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(p);
      controller.close();
    },
  });
  let out = "";
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      out += new TextDecoder().decode(chunk);
    },
  });
  await serveStdio(server, { readable, writable, maxLineBytes: CAP });
  return out.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test("serveStdio(): the line cap holds at its boundary however the input is split", async () => {
  for (const delta of [-1, 0, 1]) {
    for (const end of ["\n", "\r\n"]) {
      // The cap counts the line's bytes without its LF; a CR before it is part of the line.
      const size = CAP + delta - (end === "\r\n" ? 1 : 0);
      const text = pingLine(size, 1) + end + pingLine(60, 2) + "\n";
      const input = enc.encode(text);
      const boundary = size;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.constant([] as number[]),
            fc.uniqueArray(fc.integer({ min: 1, max: input.length - 1 }), { maxLength: 8 })
              .map((c) => c.sort((a, b) => a - b)),
            fc.constant(Array.from({ length: 10 }, (_, i) => boundary - 5 + i)),
          ),
          async (cuts) => {
            const answers = await run(input, cuts) as {
              id?: number;
              result?: unknown;
              error?: { code: number; message: string };
            }[];
            const second = answers.find((a) => a.id === 2);
            // Answered (any answer with its id; a ping without a revision is an error answer).
            assert.ok(second, `the next line is answered: ${JSON.stringify(answers)}`);
            if (delta <= 0) {
              assert.ok(
                answers.find((a) => a.id === 1),
                `${CAP + delta}: ${JSON.stringify(answers)}`,
              );
            } else {
              assert.ok(
                !answers.some((a) => a.id === 1),
                `a line over the cap was answered (cuts ${cuts})`,
              );
              const refusal = answers.find((a) => a.error?.code === -32600);
              assert.match(refusal?.error?.message ?? "", new RegExp(`exceeds ${CAP} bytes`));
            }
          },
        ),
        { numRuns: 8 },
      );
    }
  }
});
