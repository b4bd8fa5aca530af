/**
 * Untyped inputs (a path parameter without `param type=`, a bare `query
 * "name"` or `body "name"`): a string, or an integer sent as its decimal
 * text. Models send `{"id": 7}` for ids; refusing it as a schema error costs
 * a retry with most of them.
 *
 * The integer is held to the input's string rules through its decimal text,
 * and the advertised schema says so in JSON Schema terms ({@link
 * integerForm}): `type: ["string", "integer"]`, the string keywords as they
 * are (they constrain strings only), and for integers the bounds and enum
 * values the string rules imply (`maxLength: 3` -> `maximum: 999`). A
 * `pattern` admits integers only when weir can state exactly which (one
 * character class holding the digits, repeated: `^[0-9]+$`, `^-?\d+$`,
 * `^[0-9]{1,6}$`); any other keeps the input a string only. The guard checks the decimal text against the
 * rules again before anything is sent ({@link decimalProblem}).
 *
 * @module
 */
import type { ValueRules } from "../guardfile/model.ts";

/** What an untyped input admits of integers, as JSON Schema keywords for integers. */
export interface IntegerForm {
  /** Least integer admitted (absent: no bound). */
  minimum?: number;
  /** Greatest integer admitted (absent: no bound). */
  maximum?: number;
  /** The integers admitted when the input has an `enum`. */
  enum?: number[];
}

/**
 * The `pattern`s whose language over decimal integer texts weir can state
 * exactly: one character class (or `\d`), optionally after `-?`, repeated
 * `+`, `*` or `{m,n}` times, anchored: `^[0-9]+$`, `^-?\d+$`,
 * `^[A-Za-z0-9._-]+$`, `^[0-9]{1,6}$`. Any other pattern admits no integer
 * (a sample of integers cannot prove that a pattern takes them all).
 */
const COUNTABLE = /^\^(-\?)?(\[(?:[^\]\\]|\\.)+\]|\\d)(\+|\*|\{(\d+),(\d+)?\})\$$/u;

/** The integers a {@link COUNTABLE} pattern admits, as digit counts and signs; null: none. */
function patternIntegers(
  pattern: string,
): { negatives: boolean; minDigits: number; maxDigits?: number } | null {
  const m = COUNTABLE.exec(pattern);
  if (!m) return null;
  const [, sign, cls, , min, max] = m;
  let inClass: RegExp;
  try {
    inClass = new RegExp(`^${cls}$`, "u");
  } catch {
    return null;
  }
  if (![..."0123456789"].every((d) => inClass.test(d))) return null;
  const bounded = min !== undefined;
  const minDigits = bounded ? Number(min) : m[3] === "+" ? 1 : 0;
  const maxDigits = bounded && max !== undefined ? Number(max) : undefined;
  // A negative's text is "-" and its digits: under "-?" the digits alone
  // count; in the class itself "-" counts as one of them (so only an
  // unbounded repetition takes every negative exactly).
  const negatives = sign !== undefined ? true : inClass.test("-") && !bounded;
  return { negatives, minDigits: Math.max(minDigits, 1), maxDigits };
}

/** A canonical decimal integer text (what `decimalText` writes). */
const DECIMAL = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * The integers an untyped input admits, or `null` when it admits none (a
 * `pattern` that refuses decimal digits, an enum of no decimal integers, a
 * `maxLength` of 0).
 */
export function integerForm(rules: ValueRules): IntegerForm | null {
  let negatives = true;
  const form: IntegerForm = {};
  if (rules.pattern !== undefined) {
    const counted = patternIntegers(rules.pattern);
    if (counted === null) return null;
    negatives = counted.negatives;
    if (counted.minDigits > 1 || counted.maxDigits !== undefined) {
      // Digit counts bound the non-negative integers only.
      negatives = false;
      if (counted.maxDigits !== undefined && counted.maxDigits < 1) return null;
      if (counted.minDigits > 1) form.minimum = 10 ** (counted.minDigits - 1);
      if (counted.maxDigits !== undefined && counted.maxDigits <= 15) {
        form.maximum = 10 ** counted.maxDigits - 1;
      }
    }
  }
  if (rules.minLength !== undefined || rules.maxLength !== undefined) {
    // Lengths are counted on the decimal text: only non-negative integers,
    // whose length is their digit count, are admitted under a length rule.
    negatives = false;
    const min = rules.minLength ?? 0;
    const max = rules.maxLength;
    if (max !== undefined && max < 1) return null;
    if (min > 1) form.minimum = Math.max(form.minimum ?? 0, 10 ** (min - 1));
    // Past 15 digits the bound is beyond what a double holds exactly (the
    // core refuses such integers anyway): no maximum.
    if (max !== undefined && max <= 15) {
      form.maximum = Math.min(form.maximum ?? Infinity, 10 ** max - 1);
    }
  }
  if (!negatives && form.minimum === undefined) form.minimum = 0;
  if (rules.enum !== undefined) {
    const integers = rules.enum
      .filter((v): v is string => typeof v === "string" && DECIMAL.test(v))
      .map(Number)
      .filter((n) => Number.isSafeInteger(n) && (negatives || n >= 0));
    if (integers.length === 0) return null;
    form.enum = integers;
  }
  return form;
}

/**
 * An integer's decimal text: `7` -> `"7"`, `1e21` -> `"1000000000000000000000"`
 * (never exponent notation), `-0` -> `"0"`. Beyond 2^53 it is the value of
 * the number's shortest spelling (ECMA-262 Number::toString), the number the
 * caller wrote, not the double's exact value: `1e23` -> `"1"` and 23 zeros,
 * where the double nearest it is 99999999999999991611392. (The core refuses
 * spellings with more digits than a double keeps, so the two agree.)
 *
 * @example
 * ```ts
 * import { decimalText } from "./untyped.ts";
 * if (decimalText(1e23) !== "1" + "0".repeat(23)) throw new Error("not as written");
 * if (decimalText(-0) !== "0") throw new Error("-0");
 * ```
 */
export function decimalText(n: number): string {
  if (Number.isSafeInteger(n)) return n === 0 ? "0" : String(n);
  const [mantissa, exponent = "0"] = String(Math.abs(n)).split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  const zeros = Number(exponent) - fraction.length;
  return (n < 0 ? "-" : "") + whole + fraction + "0".repeat(Math.max(zeros, 0));
}

/**
 * Why an untyped input's decimal text breaks one of its string rules, or
 * `undefined` when it keeps them all (the schema admits no such integer;
 * this holds the guard to the rules even so).
 */
export function decimalProblem(text: string, rules: ValueRules): string | undefined {
  if (rules.pattern !== undefined && !new RegExp(rules.pattern, "u").test(text)) {
    return `does not match the pattern ${JSON.stringify(rules.pattern)}`;
  }
  if (rules.minLength !== undefined && text.length < rules.minLength) {
    return `is shorter than ${rules.minLength} characters`;
  }
  if (rules.maxLength !== undefined && text.length > rules.maxLength) {
    return `is longer than ${rules.maxLength} characters`;
  }
  if (rules.enum !== undefined && !rules.enum.includes(text)) {
    return "is not one of the enum values";
  }
  return undefined;
}
