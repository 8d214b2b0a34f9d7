/**
 * The one parse of a request target the agent makes: the router matches what this returns and
 * the token check reads the route that matched, so the two can never see different paths.
 *
 * Go's `ServeMux`, in front of Nomad's handlers, cleans a path before it routes (`..` and `.`
 * resolved, `//` folded) and answers an unclean one with a redirect to its clean form. berth
 * answers 400 instead: a redirect would only be followed by the clients that sent the odd
 * spelling on purpose, and no Nomad client sends one. What is refused: a target that is not
 * `/…` (nor absolute-form for this agent's own `Host`), a `\` or `#` anywhere, an empty segment
 * (`//`, but a single trailing `/` is dropped as before), a `.` or `..` segment however it is
 * escaped (`%2e`, `.%2E`), and a malformed `%` escape.
 * @module
 */
import { ApiError } from './errors.ts';

/** A request target, parsed once. */
export interface Target {
  /** The path's segments, each percent-decoded once (what the routes' patterns match). */
  segments: string[];
  /** The path as sent (still escaped), for handlers that echo it. */
  path: string;
  query: URLSearchParams;
}

/** The text every refusal of a target starts with (400). */
export const BAD_TARGET = 'invalid request target';

const bad = (why: string) => new ApiError(400, `${BAD_TARGET}: ${why}`);

/**
 * Parses `raw` (`req.url` as Node gives it: the request line's target, untouched). `host` is the
 * request's `Host` header: an absolute-form target (`http://host/path`) is taken only when its
 * authority is that same host, so what the Host rules checked is what the target names.
 * Throws an {@link ApiError} 400 for anything unclean.
 */
export function parseTarget(raw: string, host: string | undefined): Target {
  if (raw.includes('#')) throw bad('a fragment is not sent to a server');
  if (raw.includes('\\')) throw bad('"\\" is not a path separator');
  let rest = raw;
  const abs = /^https?:\/\/([^/?]*)/i.exec(raw);
  if (abs) {
    if (host === undefined || abs[1]!.toLowerCase() !== host.toLowerCase()) throw bad('absolute-form target for another host');
    rest = raw.slice(abs[0].length) || '/';
  }
  if (!rest.startsWith('/')) throw bad('the path must start with "/"');
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : rest.slice(q + 1));
  const parts = path.split('/').slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 1 && parts[0] === '') parts.pop();
  const segments = parts.map((s) => {
    if (s === '') throw bad('empty path segment ("//")');
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw bad(`malformed percent-escape in path segment ${JSON.stringify(s)}`);
    }
    if (d === '.' || d === '..') throw bad('dot segments ("." and "..") are not resolved');
    return d;
  });
  return { segments, path, query };
}
