/**
 * A small router over `node:http`: Nomad's paths as patterns (`/v1/job/:id/allocations`, and a
 * last `*name` for the rest of the path, slashes and all: `/v1/var/*path`), one handler per method, JSON in (bounded, whatever the Content-Type: Nomad's Go client sends
 * none) and JSON out, errors as Nomad writes them (plain text with the status code).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { BerthError, errorText } from '../../index.ts';
import { ApiError, httpAnswer } from './errors.ts';
import { checkJsonDepth } from './json-depth.ts';
import type { Target } from './target.ts';

/** Largest request body accepted (a job with many groups fits many times over). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What a handler sees. */
export interface Req {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  raw: IncomingMessage;
  res: ServerResponse;
  /** Aborts when the client goes away (made on first use: an AbortSignal costs ~1.4 KB). */
  readonly signal: AbortSignal;
  /**
   * Calls `gone` once when the client goes away (at once if it already has); returns what stops
   * listening. The cheap way for a request parked a long time (a blocking query) to notice.
   */
  onClose(gone: () => void): () => void;
  /** The body as JSON; `undefined` when there is none. ApiError 400 for bad JSON or too much. */
  json(): Promise<unknown>;
}

/** A JSON answer; `index` becomes `X-Nomad-Index`. */
export interface Reply {
  status?: number;
  body: unknown;
  index?: number;
  /** `body` already serialised (a blocking query's shared answer). */
  json?: string;
}

/** A handler answers with a Reply, or writes the response itself and resolves with nothing. */
export type Handler = (req: Req) => Promise<Reply | void> | Reply | void;

/**
 * Who may call a route when ACLs are on (with ACLs off everyone may). Each route carries its
 * own, so the check reads the route the router matched, never a second reading of the path.
 */
export interface AuthRule {
  /** `anonymous`: no token needed (Nomad's status, regions, health, bootstrap); `management`: the management token. */
  kind: 'anonymous' | 'management';
  /** A token this route takes besides the management token (the snapshot route's per-alloc migrate token). */
  alsoAccepts?: (token: string, params: Readonly<Record<string, string>>) => boolean;
  /** A query parameter the token may come in too (`/ui`, which a browser opens by hand). */
  queryToken?: string;
}

/** No token needed. */
export const ANONYMOUS: AuthRule = Object.freeze({ kind: 'anonymous' });
/** The management token (the default of {@link Router.on}). */
export const MANAGEMENT: AuthRule = Object.freeze({ kind: 'management' });

/** Serves a WebSocket upgrade on a route (the exec socket): the socket is the handler's. */
export type UpgradeHandler = (raw: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>, query: URLSearchParams) => void;

interface Route {
  pattern: string;
  parts: string[];
  methods: Record<string, { handler: Handler; auth: AuthRule }>;
  upgrade?: { handler: UpgradeHandler; auth: AuthRule };
}

/** One row of the route table: what {@link Router.routes} lists (the ACL specs walk it). */
export interface RouteInfo {
  pattern: string;
  /** An HTTP method, or `UPGRADE` for a WebSocket (sent as a GET with `Upgrade: websocket`). */
  method: string;
  auth: AuthRule;
}

/** What the router matched for a request: the handler to run and the rule that guards it. */
export type Match =
  | { kind: 'http'; handler: Handler; auth: AuthRule; params: Record<string, string> }
  | { kind: 'upgrade'; handler: UpgradeHandler; auth: AuthRule; params: Record<string, string> };

/** A route pattern with `*` anywhere but its last segment (a programming error, caught at start). */
export class RoutePatternError extends BerthError {
  constructor(readonly pattern: string) {
    super(`route pattern ${JSON.stringify(pattern)}: a "*rest" segment must be the last`);
  }
}

/** Routes by path pattern and method. */
export class Router {
  readonly #routes: Route[] = [];

  /**
   * Adds `handler` for `method` on `pattern`, guarded by `auth` (default {@link MANAGEMENT}):
   * `on('GET', '/v1/jobs', handler)` or `on('GET', '/v1/status/leader', ANONYMOUS, handler)`.
   * A last segment `*name` takes one or more segments, joined by `/`, as `params.name`; a route
   * with fixed segments where a rest route has its `*` wins (it is tried first).
   */
  on(method: string, pattern: string, auth: AuthRule, handler: Handler): this;
  // Last, so `Parameters<Router['on']>[2]` is the Handler (TypeScript reads the last overload).
  on(method: string, pattern: string, handler: Handler): this;
  on(method: string, pattern: string, a: AuthRule | Handler, b?: Handler): this {
    const [auth, handler] = typeof a === 'function' ? [MANAGEMENT, a] : [a, b!];
    this.#route(pattern).methods[method] = { handler, auth };
    return this;
  }

  /** Adds a WebSocket upgrade on `pattern` (a GET with `Upgrade: websocket`), guarded by `auth`. */
  upgrade(pattern: string, handler: UpgradeHandler, auth: AuthRule = MANAGEMENT): this {
    this.#route(pattern).upgrade = { handler, auth };
    return this;
  }

  /** Every route and method served, with its rule. */
  routes(): RouteInfo[] {
    return this.#routes.flatMap((r) => [
      ...Object.entries(r.methods).map(([method, m]) => ({ pattern: r.pattern, method, auth: m.auth })),
      ...(r.upgrade ? [{ pattern: r.pattern, method: 'UPGRADE', auth: r.upgrade.auth }] : []),
    ]);
  }

  #route(pattern: string): Route {
    const parts = pattern.split('/').filter(Boolean);
    if (parts.slice(0, -1).some((p) => p.startsWith('*'))) throw new RoutePatternError(pattern);
    let r = this.#routes.find((x) => x.parts.join('/') === parts.join('/'));
    if (!r) {
      r = { pattern, parts, methods: {} };
      // Rest routes last, so an exact route of the same prefix is matched before them.
      const firstRest = this.#routes.findIndex((x) => x.parts.at(-1)?.startsWith('*'));
      if (parts.at(-1)?.startsWith('*') || firstRest < 0) this.#routes.push(r);
      else this.#routes.splice(firstRest, 0, r);
    }
    return r;
  }

  /**
   * The handler for `method` on a parsed target's segments, or an ApiError: 404 for no route,
   * 405 for a method the route does not serve, 400 for an upgrade a route does not take.
   */
  resolve(method: string, segments: readonly string[], upgrade: boolean): Match {
    const found = this.#find(segments);
    if (!found) throw new ApiError(404, '404 page not found');
    const { route, params } = found;
    if (upgrade) {
      if (!route.upgrade || method !== 'GET') throw new ApiError(400, `${route.pattern} does not take a WebSocket upgrade`);
      return { kind: 'upgrade', ...route.upgrade, params };
    }
    const verb = method === 'PUT' ? (route.methods.PUT ? 'PUT' : 'POST') : method === 'HEAD' ? 'GET' : method;
    const m = route.methods[verb] ?? (verb === 'POST' ? route.methods.PUT : undefined);
    if (!m)
      throw new ApiError(
        route.upgrade && verb === 'GET' ? 400 : 405,
        route.upgrade && verb === 'GET' ? `${route.pattern} needs a WebSocket upgrade` : 'Invalid method',
      );
    return { kind: 'http', ...m, params };
  }

  #find(segs: readonly string[]): { route: Route; params: Record<string, string> } | undefined {
    for (const route of this.#routes) {
      const rest = route.parts.at(-1)?.startsWith('*') === true;
      if (rest ? segs.length < route.parts.length : route.parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < route.parts.length; i++) {
        const p = route.parts[i]!;
        if (p.startsWith('*')) params[p.slice(1)] = segs.slice(i).join('/');
        else if (p.startsWith(':')) params[p.slice(1)] = segs[i]!;
        else if (p !== segs[i]) {
          ok = false;
          break;
        }
      }
      if (ok) return { route, params };
    }
    return undefined;
  }

  /** Runs a matched HTTP handler; never throws (a handler's error becomes Nomad's plain-text error). */
  async serve(raw: IncomingMessage, res: ServerResponse, target: Target, handler: Handler, params: Record<string, string>): Promise<void> {
    // One plain listener per request; the AbortController only for handlers that ask for it.
    let ac: AbortController | undefined;
    let closed = false;
    res.once('close', () => {
      closed = true;
      ac?.abort();
    });
    try {
      const req: Req = {
        method: raw.method ?? 'GET',
        path: target.path,
        params,
        query: target.query,
        raw,
        res,
        get signal() {
          if (!ac) {
            ac = new AbortController();
            if (closed) ac.abort();
          }
          return ac.signal;
        },
        onClose: (gone) => {
          if (closed) {
            gone();
            return () => {};
          }
          res.once('close', gone);
          return () => res.off('close', gone);
        },
        json: () => readJson(raw),
      };
      const reply = await handler(req);
      if (reply && !res.headersSent) sendJson(res, reply);
    } catch (err) {
      sendError(res, err);
    }
  }
}

/** Writes a JSON reply with Nomad's headers. */
export function sendJson(res: ServerResponse, reply: Reply): void {
  const body = reply.json ?? JSON.stringify(reply.body ?? null);
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
  if (reply.index !== undefined) {
    headers['X-Nomad-Index'] = reply.index;
    headers['X-Nomad-KnownLeader'] = 'true';
    headers['X-Nomad-LastContact'] = 0;
  }
  res.writeHead(reply.status ?? 200, headers);
  res.end(body);
}

/** Nomad's error answer: the status and text of {@link httpAnswer}, as plain text. */
export function sendError(res: ServerResponse, err: unknown): void {
  const { status, text } = httpAnswer(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(raw: IncomingMessage): Promise<unknown> {
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    raw.on('data', (c: Buffer) => {
      size += c.length;
      // Past the bound the rest is read and dropped (not kept): the client gets the answer.
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    raw.on('end', () =>
      size > MAX_BODY_BYTES ? reject(new ApiError(413, `request body larger than ${MAX_BODY_BYTES} bytes`)) : resolve(Buffer.concat(chunks).toString('utf8')),
    );
    raw.on('error', reject);
  });
  if (text.trim() === '') return undefined;
  checkJsonDepth(text);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(400, `failed to parse request body: ${errorText(e)}`);
  }
}
