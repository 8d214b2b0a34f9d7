/**
 * Loopback decided by address, not spelling: the rules berth's HTTP listeners (the viewer, and
 * the agent's API through `index.ts`) share against DNS rebinding. A name is parsed and normalised
 * the way a browser does (WHATWG URL host parsing: `127.000.000.001`, `0x7f.1` and `2130706433`
 * are `127.0.0.1`; `0:0:0:0:0:0:0:1` is `::1`; `::ffff:127.0.0.1` is an IPv4-mapped `127.0.0.1`).
 *
 * The rules: a listener without a token binds only to a loopback address
 * ({@link isLoopbackAddress}) and answers only requests whose `Host` names loopback
 * ({@link checkHostHeader}); any other bind needs a token.
 * @module
 */

/** `host` (a listen address, or a `Host` header with or without a port) as a browser normalises it; undefined when it is not a host. */
export function normaliseHost(host: string): string | undefined {
  if (typeof host !== 'string' || host === '' || /[\s/?#@\\]/.test(host)) return undefined;
  // A bare IPv6 address (a listen host) has more than one colon and no brackets.
  const text = !host.startsWith('[') && host.indexOf(':') !== host.lastIndexOf(':') ? `[${host}]` : host;
  try {
    return new URL(`http://${text}/`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The four bytes of an IPv4-mapped IPv6 address `[::ffff:XXXX:XXXX]` (normalised form), or undefined. */
function mappedV4FirstByte(h: string): number | undefined {
  const m = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(h);
  return m ? parseInt(m[1]!, 16) >> 8 : undefined;
}

/**
 * True when `host` is a loopback address however it is spelled: `localhost`, any address in
 * 127.0.0.0/8 (in any form a browser accepts), `::1`, or IPv4-mapped 127.0.0.0/8. `0.0.0.0` and
 * `::` are not loopback (they listen on every interface).
 * @example
 * isLoopbackAddress('127.000.000.001'); // true
 * isLoopbackAddress('0:0:0:0:0:0:0:1'); // true
 * isLoopbackAddress('0.0.0.0');         // false
 */
export function isLoopbackAddress(host: string): boolean {
  const h = normaliseHost(host);
  if (h === undefined) return false;
  if (h === 'localhost' || h === 'localhost.') return true;
  if (h === '[::1]') return true;
  if (/^127\.\d+\.\d+\.\d+$/.test(h)) return true;
  return mappedV4FirstByte(h) === 127;
}

/**
 * True when a request's `Host` header (with its port, as sent) names a loopback host: what a
 * loopback listener without a token requires, so a page on another origin rebound to 127.0.0.1
 * is refused (its `Host` still says its own name). A missing or empty header is refused.
 */
export function checkHostHeader(hostHeader: string | undefined): boolean {
  return hostHeader !== undefined && isLoopbackAddress(hostHeader);
}
