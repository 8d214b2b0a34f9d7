/**
 * A small router over `node:http`: Nomad's paths as patterns (`/v1/job/:id/allocations`), one
 * handler per method, JSON in (bounded, whatever the Content-Type: Nomad's Go client sends
 * none) and JSON out, errors as Nomad writes them (plain text with the status code).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BerthError, errorText } from '../../index.ts';
import { ApiError } from '../core.ts';

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

interface Route {
  parts: string[];
  methods: Record<string, Handler>;
  /** Last part is `*`: matches the rest of the path (Nomad's `/v1/client/fs/ls/:alloc`). */
}

/** Routes by path pattern and method. */
export class Router {
  readonly #routes: Route[] = [];

  /** Adds `handler` for `method` on `pattern`. */
  on(method: string, pattern: string, handler: Handler): this {
    const parts = pattern.split('/').filter(Boolean);
    let r = this.#routes.find((x) => x.parts.join('/') === parts.join('/'));
    if (!r) this.#routes.push((r = { parts, methods: {} }));
    r.methods[method] = handler;
    return this;
  }

  /** The route for `path`, with its params, or undefined. */
  match(path: string): { route: Route; params: Record<string, string> } | undefined {
    const segs = path.split('/').filter(Boolean);
    for (const route of this.#routes) {
      if (route.parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segs.length; i++) {
        const p = route.parts[i]!;
        if (p.startsWith(':')) params[p.slice(1)] = decodeURIComponent(segs[i]!);
        else if (p !== segs[i]) {
          ok = false;
          break;
        }
      }
      if (ok) return { route, params };
    }
    return undefined;
  }

  /** Serves one request; never throws (a handler's error becomes Nomad's plain-text error). */
  async handle(raw: IncomingMessage, res: ServerResponse, before?: (req: Req) => void): Promise<void> {
    const url = new URL(raw.url ?? '/', 'http://agent');
    // One plain listener per request; the AbortController only for handlers that ask for it.
    let ac: AbortController | undefined;
    let closed = false;
    res.once('close', () => {
      closed = true;
      ac?.abort();
    });
    const method = raw.method ?? 'GET';
    try {
      const m = this.match(url.pathname);
      if (!m) throw new ApiError(404, '404 page not found');
      const verb = method === 'PUT' ? (m.route.methods.PUT ? 'PUT' : 'POST') : method === 'HEAD' ? 'GET' : method;
      const handler = m.route.methods[verb] ?? (verb === 'POST' ? m.route.methods.PUT : undefined);
      if (!handler) throw new ApiError(405, 'Invalid method');
      const req: Req = {
        method,
        path: url.pathname,
        params: m.params,
        query: url.searchParams,
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
      before?.(req);
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

/** Nomad's error answer: the status and the message as plain text. */
export function sendError(res: ServerResponse, err: unknown): void {
  const status = err instanceof ApiError ? err.status : err instanceof BerthError ? 400 : 500;
  const text = err instanceof Error ? err.message : String(err);
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
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(400, `failed to parse request body: ${errorText(e)}`);
  }
}
