/**
 * `value` sources: `value <provider> "<address>"` inline, or a chain block
 * `value { env "A"; file "/run/secrets/a" }` whose first non-empty source
 * wins at call time. Providers: `env`, `file` (contents trimmed), `literal`.
 *
 * @module
 */
import type { ValueSource } from "./model.ts";
import { type NodeReader, suggest } from "./nodes.ts";

/** Value providers a `value` may name. */
export const PROVIDERS: readonly string[] = ["env", "file", "literal"];

/** `value <provider> "<address>"` or `value { <provider> "<address>"; ... }`. */
export function readValue(node: NodeReader): ValueSource | undefined {
  node.onlyProperties();
  const inline = node.node.values.length > 0;
  const block = node.node.children.length > 0;
  if (inline && block) {
    node.error(`"value" is either inline (value env "X") or a block, not both; remove one`);
    return undefined;
  }
  const provider = (name: string, address: string, at: NodeReader) => {
    if (!PROVIDERS.includes(name)) {
      at.error(
        `unknown value provider "${name}"${suggest(name, PROVIDERS)}; use env, file or literal`,
      );
      return false;
    }
    if (address === "") {
      at.error(`value ${name} needs a non-empty address`);
      return false;
    }
    return true;
  };
  if (inline) {
    if (!node.argCount(2, 2, `a provider and an address, e.g. value env "API_TOKEN"`)) {
      return undefined;
    }
    const name = node.stringArg(0, "the value provider");
    const address = node.stringArg(1, "the value address");
    if (!name || address === undefined || !provider(name, address, node)) return undefined;
    return { chain: [{ provider: name, address }] };
  }
  if (!block) {
    node.error(`"value" needs a provider and an address, e.g. value env "API_TOKEN"`);
    return undefined;
  }
  const chain: ValueSource["chain"] = [];
  for (const kid of node.children()) {
    kid.onlyProperties();
    kid.noChildren();
    if (!kid.argCount(1, 1, "the address")) continue;
    const address = kid.stringArg(0, `${kid.name} address`);
    if (address !== undefined && provider(kid.name, address, kid)) {
      chain.push({ provider: kid.name, address });
    }
  }
  return chain.length > 0 ? { chain } : undefined;
}
