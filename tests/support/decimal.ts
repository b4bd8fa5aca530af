/**
 * Exact decimal arithmetic on JSON number literals, for tests that check what
 * weir wrote for a number an agent sent.
 */

/**
 * The decimal text of the integer a JSON number literal names, in exact
 * arithmetic: `1e23` -> `"1"` and 23 zeros (the double nearest it is
 * 99999999999999991611392), `-0` -> `"0"`, `1.50e1` -> `"15"`. The literal
 * must name an integer.
 */
export function integerText(literal: string): string {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (!m) throw new Error(`not a JSON number: ${literal}`);
  const exponent = Number(m[4] ?? 0) - (m[3] ?? "").length;
  const digits = BigInt(m[2] + (m[3] ?? ""));
  const value = exponent >= 0
    ? digits * 10n ** BigInt(exponent)
    : digits / 10n ** BigInt(-exponent);
  return String(m[1] === "-" ? -value : value);
}
