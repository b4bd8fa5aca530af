/**
 * `isShallowAndExact` lets the core skip its two exact argument checks (depth,
 * rounded numbers): whenever it says "plain", those checks must have nothing
 * to refuse. Checked against plain reference walks on seeded random values,
 * and over MCP: a too-deep or rounded argument is still refused.
 */
import assert from "node:assert/strict";
import { isShallowAndExact, nestsDeeperThan } from "../../src/mcp/depth.ts";
import { parseMessage } from "../../src/mcp/jsonrpc.ts";

const isRawJSON = (JSON as unknown as { isRawJSON(v: unknown): boolean }).isRawJSON;
const rawJSON = (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON;

/** Every number and raw value in `v` (a plain recursive reference). */
function leaves(v: unknown, out: unknown[] = []): unknown[] {
  if (typeof v === "number" || isRawJSON(v)) out.push(v);
  else if (Array.isArray(v)) v.forEach((c) => leaves(c, out));
  else if (v !== null && typeof v === "object") Object.values(v).forEach((c) => leaves(c, out));
  return out;
}

Deno.test("isShallowAndExact says plain only when depth and numbers give nothing to refuse", () => {
  let seed = 3;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const numbers = [
    0,
    -1,
    1.5,
    2 ** 53 - 1,
    2 ** 53,
    -(2 ** 53) - 2,
    1e21,
    Infinity,
    -Infinity,
    0.1,
  ];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 7 || r < 0.3) {
      const pick = Math.floor(next() * (numbers.length + 4));
      if (pick < numbers.length) return numbers[pick];
      return ["s", null, true, rawJSON("1")][pick - numbers.length];
    }
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 3) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 3); i > 0; i--) o[`k${i}`] = make(depth + 1);
    return o;
  };
  let plain = 0;
  let not = 0;
  for (let i = 0; i < 5000; i++) {
    const value = make(0);
    for (const limit of [3, 6, 64]) {
      const exact = !nestsDeeperThan(value, limit) &&
        leaves(value).every((n) =>
          typeof n === "number" && Number.isFinite(n) &&
          (Number.isSafeInteger(n) || !Number.isInteger(n))
        );
      assert.equal(isShallowAndExact(value, limit), exact, JSON.stringify(value));
      if (exact) plain++;
      else not++;
    }
  }
  assert.ok(plain > 1000 && not > 1000, `${plain} plain, ${not} not`);
});

Deno.test("arguments parsed from the wire: long numbers and deep nesting are not plain", () => {
  const args = (json: string) =>
    (parseMessage(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":${json}}}`,
    ) as { params: { arguments: unknown } }).params.arguments;
  assert.equal(isShallowAndExact(args(`{"a":[1,"x",{"b":2.5}]}`), 64), true);
  assert.equal(isShallowAndExact(args(`{"a":0.1000000000000000055511}`), 64), false);
  assert.equal(isShallowAndExact(args(`{"a":9007199254740993}`), 64), false);
  assert.equal(isShallowAndExact(args(`{"a":1e400}`), 64), false);
  assert.equal(isShallowAndExact(args(`${"[".repeat(65)}${"]".repeat(65)}`), 64), false);
  assert.equal(isShallowAndExact(args(`${"[".repeat(64)}${"]".repeat(64)}`), 64), true);
});
