/**
 * The agent's HTTP edge: the one decision, for a plain request and a WebSocket upgrade alike,
 * whether a request reaches a handler. In order:
 *
 * 1. `Host`: bound to loopback, the agent answers only a `Host` naming loopback (by address,
 *    however spelled), so a page whose name was rebound to 127.0.0.1 is refused (403).
 * 2. `Origin`: a request a browser sent from a page of another origin is refused (403), unless
 *    that origin is in `http_allowed_origins`. No `Origin` (the CLI, Nomad's Go client, curl)
 *    passes. This holds with ACLs off, where it is what keeps a web page from driving the agent.
 * 3. `Content-Type`: from a browser (a request with `Origin` or `Sec-Fetch-Site`, which every
 *    browser sends on a POST), the three it may send without asking first (`text/plain`, a form,
 *    multipart) are refused (415); none and `application/json` pass. A client that is no browser
 *    may send any: `curl --data @job.json` sends a form type, and Nomad's docs use it.
 * 4. The target, parsed once ({@link parseTarget}: 400 for anything unclean), matched once
 *    (404, 405), and with ACLs on the token checked against the rule of the route that matched (403).
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { checkHostHeader, secretMatches } from '../../index.ts';
import { ApiError } from './errors.ts';
import type { Match, Router } from './router.ts';
import { parseTarget, type Target } from './target.ts';

/** What the edge knows of the agent. */
export interface EdgeOptions {
  /** The management token (ACLs on) or undefined. */
  token?: string;
  /** Bound to a loopback address: `Host` must name loopback. */
  loopback: boolean;
  scheme: 'http' | 'https';
  /** Origins besides the agent's own whose pages may call it, normalised (`https://ops.example:8443`). */
  allowedOrigins: readonly string[];
}

/** A request let through: its parsed target and the route that serves it. */
export interface Admitted {
  target: Target;
  match: Match;
}

/** Content types a browser sends cross-site without a CORS preflight (Fetch's "CORS-safelisted"). */
const SIMPLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

/** `scheme://host[:port]` as a browser writes an origin, or undefined (`null`, garbage). */
export function originOf(text: string): string | undefined {
  try {
    const o = new URL(text).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/** The token a request carries: `X-Nomad-Token`, or `Authorization: Bearer`. */
export function requestToken(req: IncomingMessage): string {
  const h = req.headers['x-nomad-token'];
  if (typeof h === 'string') return h;
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7) : '';
}

/** Decides whether `req` reaches a handler; throws the ApiError to answer instead. */
export function admit(router: Router, req: IncomingMessage, opts: EdgeOptions, upgrade: boolean): Admitted {
  const host = req.headers.host;
  if (opts.loopback && !checkHostHeader(host))
    throw new ApiError(403, `Forbidden: Host ${JSON.stringify(host ?? '')} is not a loopback name (the agent listens on loopback)`);
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const o = originOf(origin);
    const own = host === undefined ? undefined : originOf(`${opts.scheme}://${host}`);
    if (o === undefined || (o !== own && !opts.allowedOrigins.includes(o)))
      throw new ApiError(403, `Forbidden: Origin ${JSON.stringify(origin)} is not this agent's (allow it with http_allowed_origins)`);
  }
  const type = req.headers['content-type']?.split(';')[0]!.trim().toLowerCase();
  const browser = origin !== undefined || req.headers['sec-fetch-site'] !== undefined;
  if (browser && type !== undefined && SIMPLE_TYPES.has(type))
    throw new ApiError(415, `Unsupported Content-Type ${JSON.stringify(type)}: send application/json or no Content-Type`);
  const target = parseTarget(req.url ?? '/', host);
  const match = router.resolve(req.method ?? 'GET', target.segments, upgrade);
  if (opts.token !== undefined && match.auth.kind !== 'anonymous') {
    const q = match.auth.queryToken;
    const given = requestToken(req) || (q ? (target.query.get(q) ?? '') : '');
    if (!secretMatches(given, opts.token) && !match.auth.alsoAccepts?.(given, match.params)) throw new ApiError(403, 'Permission denied');
  }
  return { target, match };
}
