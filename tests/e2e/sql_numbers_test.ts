/**
 * sql parameters get numbers as the agent wrote them (issue 22, kinds 2 and
 * 14), against a real PostgreSQL through the shipped CLI:
 *
 * - a `type="number"` parameter is bound as the very digits received
 *   (`2.50`, `1e21`, `-0`, `0.0000001`, `1.0`), so PostgreSQL reads its value
 *   from them (a `numeric` keeps `2.50`'s scale); it was bound as JavaScript
 *   wrote the double (`2.5`, `1e+21`, `0`, `1e-7`, `1`);
 * - an integer (a `type="integer"` or an untyped parameter) is bound as its
 *   decimal text, never in exponent form (`1e21` was bound as `1e+21`, which
 *   no integer column reads), the integer written (`1e23` was bound as
 *   99999999999999991611392, the exact value of the double nearest it);
 * - a parameter without `type=` takes a string or an integer, as untyped path,
 *   query and body inputs do (`{"id": 7}` was a schema error);
 * - a number a double cannot hold exactly is refused naming the input (the core).
 *
 * Generated spellings over the tool API; fixed ones over MCP in both revisions.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres.ts";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { postMcp } from "../support/raw_upstream.ts";
import { integerText } from "../support/decimal.ts";

const missing = postgresMissing();
if (missing) console.error(`SKIP sql_numbers_test: ${missing}`);

const PASSWORD = "nums-pass-51c0e7a9d2";

const GUARDFILE = `wrap ward mcp nums {
    database pgx { value env "NUMS_DSN" }
    can view number {
        sql {
            statement "SELECT $1::text AS t, ($1::numeric)::text AS n"
            param "n" type="number" required=#true
        }
    }
    can view integer {
        sql {
            statement "SELECT $1::text AS t"
            param "n" type="integer" required=#true
        }
    }
    can view untyped {
        sql {
            statement "SELECT $1::text AS t"
            param "n"
        }
    }
}
`;

/** A JSON number literal: sign, digits, fraction (trailing zeros allowed), exponent. */
const spelling = fc.record({
  negative: fc.boolean(),
  int: fc.oneof(
    fc.constantFrom("0", "1", "7", "42", "100", "123456789", "9007199254740991"),
    fc.bigInt({ min: 1n, max: 10n ** 20n }).map(String),
  ),
  frac: fc.option(fc.stringMatching(/^[0-9]{1,8}$/), { nil: undefined }),
  exp: fc.option(
    fc.record({
      e: fc.constantFrom("e", "E"),
      sign: fc.constantFrom("", "+", "-"),
      digits: fc.oneof(fc.integer({ min: 0, max: 30 }).map(String), fc.constantFrom("021", "00")),
    }),
    { nil: undefined },
  ),
}).map(({ negative, int, frac, exp }) =>
  `${negative ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}${
    exp === undefined ? "" : `${exp.e}${exp.sign}${exp.digits}`
  }`
);

const FIXED = [
  "1",
  "1.0",
  "-0",
  "1e21",
  "1e23",
  "-1e23",
  "1E+2",
  "2.50",
  "0.0000001",
  "5e-324",
  "1e-400",
  "1e400",
];

Deno.test({
  name: "sql parameters: numbers bound as written, integers in decimal, untyped takes integers",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pg = await startPostgres();
    const admin = postgres(pg.adminUrl, { onnotice: () => {} });
    const file = await tempGuardfile(GUARDFILE);
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      await admin.unsafe(`CREATE ROLE nums LOGIN PASSWORD '${PASSWORD}'`);
      server = await serveHttp(file, {
        env: {
          NUMS_DSN: `postgres://nums:${PASSWORD}@127.0.0.1:${pg.port}/postgres`,
          PATH: Deno.env.get("PATH") ?? "",
        },
      });
      const url = server.url;
      const call = async (tool: string, body: string) => {
        const r = await fetch(`${url}/api/${tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const answer = await r.json();
        return {
          status: r.status,
          row: answer.structuredContent?.result?.rows?.[0] as { t: string; n?: string },
          text: String(answer.content?.[0]?.text ?? ""),
        };
      };
      /** What PostgreSQL makes of the digits themselves. */
      const numericOf = async (text: string) =>
        (await admin.unsafe(`SELECT ($1::numeric)::text AS n`, [text]))[0].n as string;

      const check = async (s: string) => {
        const value = JSON.parse(s) as number;
        const exact = Number.isFinite(value) && (value !== 0 || /^-?0*\.?0*(e|E|$)/.test(s));
        const number = await call("view_number", `{"n":${s}}`);
        if (number.status !== 200) {
          // Refused by the core, naming the input: a value a double cannot hold.
          assert.equal(number.status, 400, number.text);
          assert.match(number.text, /the number at n /);
          return;
        }
        assert.ok(exact, `${s} passed though no double holds it`);
        assert.equal(number.row.t, s, "bound as the very digits received");
        assert.equal(number.row.n, await numericOf(s), "PostgreSQL read the digits themselves");
        for (const tool of ["view_integer", "view_untyped"]) {
          const integer = await call(tool, `{"n":${s}}`);
          if (Number.isInteger(value)) {
            assert.equal(integer.status, 200, `${tool} ${s}: ${integer.text}`);
            assert.equal(integer.row.t, integerText(s), `${tool} ${s} in decimal, as written`);
          } else {
            assert.equal(integer.status, 400, `${tool} ${s}: ${integer.text}`);
          }
        }
      };
      for (const s of FIXED) await check(s);
      await fc.assert(fc.asyncProperty(spelling, check), { numRuns: 150 });

      // Untyped still takes strings, as they are.
      const text = await call("view_untyped", `{"n":"007"}`);
      assert.equal(text.row.t, "007");

      // Over MCP, both revisions: the same digits.
      for (const modern of [false, true]) {
        for (const s of ["2.50", "1e21", "-0", "0.0000001"]) {
          const meta = modern
            ? `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
            : "";
          const answer = JSON.parse(
            await postMcp(
              url,
              `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view_number","arguments":{"n":${s}}${meta}}}`,
              modern
                ? {
                  "mcp-protocol-version": "2026-07-28",
                  "mcp-method": "tools/call",
                  "mcp-name": "view_number",
                }
                : {},
            ),
          );
          const row = answer.result?.structuredContent?.result?.rows?.[0];
          assert.equal(row?.t, s, JSON.stringify(answer));
        }
      }
    } finally {
      await server?.stop();
      await admin.end();
      await pg.close();
    }
  },
});
