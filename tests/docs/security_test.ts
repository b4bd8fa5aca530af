/**
 * docs/security.md as a reviewer reads it: every item of the OWASP MCP Top 10
 * and of the NSA sheet has a section; each section says what weir does and
 * what it leaves to the operator; every claim of what weir does links at least
 * one test file, and every test file linked exists. Also the one claim this
 * file proves itself: the shipped examples that start an MCP server with `npx`
 * name an exact package version.
 */
import assert from "node:assert/strict";
import { ROOT } from "../support/cli.ts";

const PAGE = "docs/security.md";

interface Section {
  heading: string;
  line: number;
  does: { text: string; line: number }[];
  left: { text: string; line: number }[];
}

/** The `###` sections of the page with their two lists; continuation lines joined to their bullet. */
function readSections(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  let list: Section["does"] | undefined;
  text.split("\n").forEach((line, i) => {
    if (line.startsWith("#")) {
      current = undefined;
      list = undefined;
      if (line.startsWith("### ")) {
        current = { heading: line.slice(4).trim(), line: i + 1, does: [], left: [] };
        sections.push(current);
      }
      return;
    }
    if (!current) return;
    if (line.trim() === "weir does:") list = current.does;
    else if (line.trim() === "Left to the operator:") list = current.left;
    else if (list && line.startsWith("- ")) list.push({ text: line.slice(2), line: i + 1 });
    else if (list && line.startsWith("  ") && list.length > 0) {
      list[list.length - 1].text += " " + line.trim();
    } else if (line.trim() !== "") list = undefined;
  });
  return sections;
}

const TEST_LINK = /\]\(\.\.\/(tests\/[^)#\s]+)\)/g;

Deno.test("docs/security.md: every OWASP MCP Top 10 item and NSA recommendation has a section", () => {
  const sections = readSections(Deno.readTextFileSync(`${ROOT}${PAGE}`));
  const headings = sections.map((s) => s.heading);
  for (let n = 1; n <= 10; n++) {
    const id = `MCP${String(n).padStart(2, "0")} `;
    assert.equal(headings.filter((h) => h.startsWith(id)).length, 1, `one section for ${id}`);
  }
  for (let n = 1; n <= 9; n++) {
    assert.equal(headings.filter((h) => h.startsWith(`NSA ${n} `)).length, 1, `NSA ${n}`);
  }
  assert.equal(sections.length, 19, `only those sections: ${headings.join(" | ")}`);
  // The list we could not find is said so, not invented.
  assert.match(Deno.readTextFileSync(`${ROOT}${PAGE}`), /MCP-01 to MCP-12[^]*?could not find/);
});

Deno.test("docs/security.md: every claim links a test file that exists; each section says both sides", () => {
  const sections = readSections(Deno.readTextFileSync(`${ROOT}${PAGE}`));
  const problems: string[] = [];
  let links = 0;
  for (const s of sections) {
    if (s.does.length === 0) problems.push(`${PAGE}:${s.line} ${s.heading}: no "weir does:" list`);
    if (s.left.length === 0) {
      problems.push(`${PAGE}:${s.line} ${s.heading}: no "Left to the operator:" list`);
    }
    for (const claim of s.does) {
      const targets = [...claim.text.matchAll(TEST_LINK)].map((m) => m[1]);
      if (targets.length === 0) {
        problems.push(`${PAGE}:${claim.line}: a claim without a test file: ${claim.text}`);
      }
      for (const t of targets) {
        links++;
        if (!t.endsWith("_test.ts")) {
          problems.push(`${PAGE}:${claim.line}: ${t} is not a test file`);
        } else {
          try {
            if (!Deno.statSync(`${ROOT}${t}`).isFile) throw new Error("not a file");
          } catch {
            problems.push(`${PAGE}:${claim.line}: ${t} does not exist`);
          }
        }
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(links >= 19, `every section links tests (${links} links)`);
});

Deno.test("readSections(): a claim without a link or a missing list is seen (the check can fail)", () => {
  const sections = readSections(
    "### MCP01 x\n\nweir does:\n\n- a claim\n  ([a_test.ts](../tests/a_test.ts)).\n- bare claim\n\n" +
      "### MCP02 y\n\nLeft to the operator:\n\n- theirs\n",
  );
  assert.equal(sections.length, 2);
  assert.equal(sections[0].does.length, 2);
  assert.equal([...sections[0].does[0].text.matchAll(TEST_LINK)].length, 1);
  assert.equal([...sections[0].does[1].text.matchAll(TEST_LINK)].length, 0);
  assert.equal(sections[1].does.length, 0);
  assert.equal(sections[1].left.length, 1);
});

Deno.test("the shipped examples that start an MCP server with npx name an exact package version", () => {
  let seen = 0;
  for (const entry of Deno.readDirSync(`${ROOT}guardfiles`)) {
    const text = Deno.readTextFileSync(`${ROOT}guardfiles/${entry.name}`);
    for (const m of text.matchAll(/mcp-server\s+stdio\s+"npx"((?:\s+"[^"]*")+)/g)) {
      seen++;
      const pkg = [...m[1].matchAll(/"([^"]*)"/g)].map((a) => a[1]).find((a) => !a.startsWith("-"));
      assert.match(pkg ?? "", /^(@[^/]+\/)?[^@]+@\d+\.\d+\.\d+$/, `${entry.name}: ${pkg}`);
    }
  }
  assert.ok(seen >= 1, "an example starts a server with npx");
});
