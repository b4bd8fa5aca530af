/**
 * The stand-in values of one `weir verify` run: every value a guardfile
 * reads from the environment or a file (a credential, a pin, a DSN, the
 * token exchange's secret or key) is mapped to a generated one, which the
 * guard reads through {@link StandInValues.resolver}; the secret ones are
 * searched for in everything that comes back.
 *
 * @module
 */
import type { ValueSource } from "../guardfile/model.ts";
import type { ValueResolver } from "../guard/values.ts";
import { standInSecret } from "../verify/secrets.ts";

/** Stand-in values: every environment or file source of the file mapped to a generated value. */
export class StandInValues {
  readonly values = new Map<string, string>();
  readonly secrets: [string, string][] = [];
  #next = 0;

  /** A fresh secret-looking value. */
  fresh(): string {
    return standInSecret(crypto.getRandomValues(new Uint8Array(16)));
  }

  /** A fresh stand-in for `what`: an environment variable name verify answers, and its value. */
  source(what: string, secret: boolean, value?: string): { source: ValueSource; value: string } {
    const name = `WEIR_VERIFY_VALUE_${this.#next++}`;
    const v = value ?? (secret ? this.fresh() : `pinned-${this.fresh().slice(3, 15)}`);
    this.values.set(name, v);
    if (secret) this.secrets.push([what, v]);
    return { source: { chain: [{ provider: "env", address: name }] }, value: v };
  }

  /** The resolver the guard reads them through (no real variable, no file). */
  resolver(): ValueResolver {
    return {
      env: (name) => this.values.get(name),
      readFile: () => Promise.reject(new Error("verify reads no file")),
    };
  }
}
