/**
 * JMESPath for `fail-when`, via `npm:@jmespath-community/jmespath` (the
 * JMESPath Community edition, which adds lexical scopes: a grant's inputs are
 * visible as `$name`).
 *
 * @module
 */
import { compile, TreeInterpreter } from "@jmespath-community/jmespath";

type Ast = ReturnType<typeof compile>;
type Json = Parameters<typeof TreeInterpreter.search>[1];

/**
 * Check that an expression compiles.
 * @returns `null` when it does, else the parser's message, without the
 *   `undefined`, `NaN` or `[object Object]` the parser sometimes puts where a token's
 *   text belongs (a generated-expression test found both)
 */
export function compileJmesPath(expression: string): string | null {
  try {
    compile(expression);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const clean = message
      .replace(/,?\s*(?:value:\s*|:\s*)?"?(?:undefined|NaN|\[object \w+\])"?/g, "")
      .replace(/[\s:,]+$/, "");
    return clean === "" ? "the text is not a JMESPath expression" : clean;
  }
}

/**
 * Compile an expression into a predicate with JMESPath truthiness (false,
 * null, empty string, array or object are false).
 *
 * @throws {Error} when the expression does not compile (the loader checks first)
 */
export function jmesPathPredicate(
  expression: string,
): (data: unknown, scope: Record<string, unknown>) => boolean {
  const ast: Ast = compile(expression);
  return (data, scope) => {
    // `search` resets the scope chain, so bind the scope and visit directly.
    const interpreter = TreeInterpreter.withScope(scope as never) as unknown as {
      _rootValue: unknown;
      visit(node: Ast, value: Json): unknown;
    };
    interpreter._rootValue = data;
    const value = interpreter.visit(ast, data as Json);
    if (value === null || value === false || value === "") return false;
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === "object") return Object.keys(value as object).length > 0;
    return true;
  };
}
