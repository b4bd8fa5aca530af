/**
 * The proxy variables Deno's `fetch` honours (`HTTP_PROXY`, `HTTPS_PROXY`,
 * `ALL_PROXY`, upper or lower case, with `NO_PROXY`), checked once per
 * process. `fetch` silently ignores a value it cannot parse and connects
 * directly, so where every request must go through a proxy a typo would send
 * traffic straight out; weir refuses instead: every mode that sends through
 * `fetch` (spec mode behind a proxy, serve-upstream and lint-upstream over
 * HTTP, the AWS modes) asks {@link proxySetting} at start-up and stops when
 * it reports a problem.
 *
 * @module
 */

/** The variables, in the order they are looked at. */
export const PROXY_VARIABLES: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
];

/** What the proxy variables say. */
export interface ProxySetting {
  /** Whether all of them could be read (env permission); when not, nothing else is known. */
  readable: boolean;
  /** The first one set, when its value is a proxy URL. */
  variable?: string;
  /** Why no request may be sent: the variable named, never its value (it may hold a password). */
  problem?: string;
}

let setting: ProxySetting | undefined;

/** The proxy variables' setting, read on the first call. */
export function proxySetting(): ProxySetting {
  if (setting) return setting;
  const readable = PROXY_VARIABLES.every((variable) =>
    Deno.permissions.querySync({ name: "env", variable }).state === "granted"
  );
  if (!readable) return setting = { readable };
  for (const variable of PROXY_VARIABLES) {
    const value = Deno.env.get(variable);
    if (!value) continue;
    if (!isProxyUrl(value)) {
      return setting = {
        readable,
        problem: `${variable} is set but is not a proxy URL (give http://HOST:PORT); ` +
          `weir will not send past a proxy it cannot use`,
      };
    }
    return setting = { readable, variable };
  }
  return setting = { readable };
}

/** Whether `value` is something `fetch` takes as a proxy (`http://h:p`, `socks5://h`, or `h:p`). */
function isProxyUrl(value: string): boolean {
  const parse = (text: string) => {
    try {
      return new URL(text);
    } catch {
      return undefined;
    }
  };
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? parse(value) : parse(`http://${value}`);
  return url !== undefined && url.hostname !== "" &&
    ["http:", "https:", "socks5:", "socks5h:"].includes(url.protocol);
}
