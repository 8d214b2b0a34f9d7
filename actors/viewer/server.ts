/**
 * The viewer's HTTP server: one self-contained page (every asset from `static/`, nothing from
 * outside), the charts, and the records, live over Server-Sent Events or a whole recording for
 * replay, plus a task's log tail. Loopback by default; with a token every request needs it (as
 * `?token=`, an `X-Berth-Token` header, or the cookie the page gets when opened with `?token=`
 * or with a host's one-time `?code=`).
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkHostHeader, isLoopbackAddress } from '../../model/loopback.ts';
import { secretMatches } from '../../model/secret.ts';
import { logFileIndices } from '../drivers/logs/reader.ts';
import { InvalidViewerOptionsError } from './errors.ts';
import type { ViewerFeed } from './feed.ts';
import { berthCharts } from './machine-charts.ts';
import type { ViewerRecord } from './records.ts';
import type { Recording } from './recording.ts';
import { errorText } from '../../model/error-text.ts';

/** Where the viewer listens. */
export interface ViewerServeOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** When set, every request and stream must carry it. */
  token?: string;
  /**
   * With a token: takes a one-time code a host issued (its `?code=` on any page) instead of the
   * token, true once per code. The page then gets the session cookie, as with `?token=`, and is
   * sent on to the same path without the code, so no secret stays in the address bar.
   */
  redeemCode?: (code: string) => boolean;
  /** Records queued per page before it is resynchronised from the model instead (default 5000). */
  maxQueue?: number;
  /** How often queued records go out to pages (default 50 ms). */
  flushMs?: number;
  /**
   * Bytes a log tail may fall behind a task's output while its page does not read before it
   * skips to the end again, with a `skipped` event (default 1 MiB).
   */
  logMaxBehindBytes?: number;
}

/** A task's logs, as the viewer reads them (`runner.logs` plus where the files live, for a tail). */
export interface ViewerLogSource {
  logsDir: string;
  tasks: string[];
  logs(task: string, stream: 'stdout' | 'stderr', opts: { follow?: boolean; offset?: number; signal?: AbortSignal }): AsyncIterable<Buffer>;
  /** Aborted when the alloc is destroyed: every tail of it ends. */
  ended?: AbortSignal;
}

/** What a viewer server shows: a live client, or a recording. */
export type ViewerSource =
  | { mode: 'live'; feed: ViewerFeed; logSource(allocId: string): ViewerLogSource | undefined; title?: string }
  | { mode: 'replay'; recording: Recording; title?: string };

/** A running viewer server. */
export interface ViewerServer {
  /** e.g. http://127.0.0.1:8080/ (add `?token=…` when a token is set). */
  url: string;
  /** Pages (event streams) connected now. */
  pages(): number;
  /** Resolves when the next page connects (at once if one is connected). */
  pageConnected(): Promise<void>;
  /** Ends every stream and stops listening. Idempotent. */
  close(): Promise<void>;
}

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));
/** The page's files: name → content type. Nothing else is served from disk. */
export const PAGE_FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'model.mjs': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};
const LOG_TAIL_BYTES = 64 * 1024;
const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The page's total size in bytes (every file it loads). */
export function pageSize(): number {
  return Object.keys(PAGE_FILES).reduce((n, f) => n + statSync(join(STATIC_DIR, f)).size, 0);
}

function checkOptions(o: ViewerServeOptions): void {
  if (o.host !== undefined && (typeof o.host !== 'string' || o.host === '')) throw new InvalidViewerOptionsError('viewer: host must be a non-empty string');
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535))
    throw new InvalidViewerOptionsError(`viewer: port must be an integer in 0..65535, not ${JSON.stringify(o.port)}`);
  if (o.token !== undefined && (typeof o.token !== 'string' || o.token === '')) throw new InvalidViewerOptionsError('viewer: token must be a non-empty string');
  if (o.redeemCode !== undefined && (typeof o.redeemCode !== 'function' || o.token === undefined))
    throw new InvalidViewerOptionsError('viewer: redeemCode must be a function, and needs a token');
  if (o.logMaxBehindBytes !== undefined && (!Number.isSafeInteger(o.logMaxBehindBytes) || o.logMaxBehindBytes < 0))
    throw new InvalidViewerOptionsError(`viewer: logMaxBehindBytes must be a non-negative integer, not ${JSON.stringify(o.logMaxBehindBytes)}`);
  // Without a token only loopback is safe to bind: anyone who can reach the port could read it.
  if (o.token === undefined && o.host !== undefined && !isLoopbackAddress(o.host))
    throw new InvalidViewerOptionsError(`viewer: host ${JSON.stringify(o.host)} is not a loopback address: pass a token to listen on it`);
}

/** Bytes in a task's log files now (every rotated file of the stream). */
async function logBytes(src: ViewerLogSource, task: string, stream: string): Promise<number> {
  let total = 0;
  for (const i of await logFileIndices(src.logsDir, task, stream as 'stdout' | 'stderr')) {
    try {
      total += (await stat(join(src.logsDir, `${task}.${stream}.${i}`))).size;
    } catch {
      // rotated away meanwhile
    }
  }
  return total;
}

/** Resolves true once `res` drains, false when it closes or fails first. */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      res.off('error', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
    res.once('error', onClose);
  });
}

/** Digests compared, so a wrong guess's length does not change the time the check takes. */
function sameSecret(given: string | undefined, token: string): boolean {
  return given !== undefined && secretMatches(given, token);
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // malformed escapes: no valid cookie, so a 401
      }
    }
  }
  return undefined;
}

/** Starts a viewer server for a live client or a recording. */
export async function startViewerServer(source: ViewerSource, opts: ViewerServeOptions = {}): Promise<ViewerServer> {
  checkOptions(opts);
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token;
  const loopback = isLoopbackAddress(host);
  const maxQueue = opts.maxQueue ?? 5000;
  const flushMs = opts.flushMs ?? 50;
  const maxBehind = opts.logMaxBehindBytes ?? 1024 * 1024;
  const files = new Map(Object.keys(PAGE_FILES).map((f) => [f, readFileSync(join(STATIC_DIR, f))]));
  const sockets = new Set<Socket>();
  const streams = new Set<() => void>();
  let pages = 0;
  let pageWaiters: Array<() => void> = [];
  let closed = false;
  let cookieName = 'berth_viewer';

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
    res.writeHead(status, { ...HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
    res.end(body);
  };
  const json = (res: ServerResponse, v: unknown) => send(res, 200, 'application/json', JSON.stringify(v));

  /** Server-Sent Events: headers, a comment every 15 s, cleanup on close. */
  const openStream = (req: IncomingMessage, res: ServerResponse, onClose: () => void) => {
    res.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
    res.write(': berth viewer\n\n');
    const beat = setInterval(() => res.write(': ping\n\n'), 15_000);
    beat.unref();
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      clearInterval(beat);
      streams.delete(end);
      onClose();
      res.end();
    };
    streams.add(end);
    req.on('close', end);
    res.on('error', end);
    return end;
  };

  const liveEvents = (req: IncomingMessage, res: ServerResponse, feed: ViewerFeed) => {
    let queue: ViewerRecord[] = [];
    let resync = false;
    let timer: NodeJS.Timeout | undefined;
    let blocked = false;
    const flush = () => {
      timer = undefined;
      if (blocked) return;
      let ok: boolean;
      if (resync) {
        resync = false;
        queue = [];
        ok = res.write(`event: init\ndata: ${JSON.stringify(feed.model)}\n\n`);
      } else {
        if (!queue.length) return;
        const batch = queue;
        queue = [];
        ok = res.write(`event: records\ndata: ${JSON.stringify(batch)}\n\n`);
      }
      if (!ok) {
        blocked = true;
        res.once('drain', () => {
          blocked = false;
          if (!timer) timer = setTimeout(flush, flushMs);
        });
      }
    };
    const off = feed.subscribe((r) => {
      if (resync) return;
      queue.push(r);
      // A page that cannot keep up is sent the whole (bounded) model again instead.
      if (queue.length > maxQueue) {
        queue = [];
        resync = true;
      }
      if (!timer) timer = setTimeout(flush, flushMs);
    });
    openStream(req, res, () => {
      off();
      if (timer) clearTimeout(timer);
      queue = [];
      pages--;
    });
    pages++;
    res.write(`event: init\ndata: ${JSON.stringify(feed.model)}\n\n`);
    for (const w of pageWaiters.splice(0)) w();
  };

  const logTail = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (source.mode !== 'live') return send(res, 404, 'text/plain', 'logs are not recorded: open a live viewer');
    const allocId = url.searchParams.get('alloc') ?? '';
    const task = url.searchParams.get('task') ?? '';
    const stream = url.searchParams.get('stream') ?? 'stdout';
    if (stream !== 'stdout' && stream !== 'stderr') return send(res, 400, 'text/plain', 'stream must be stdout or stderr');
    const src = source.logSource(allocId);
    if (!src) return send(res, 404, 'text/plain', `no allocation ${allocId} on this client`);
    if (!src.tasks.includes(task)) return send(res, 404, 'text/plain', `allocation ${allocId} has no task ${task}`);
    const ac = new AbortController();
    const end = openStream(req, res, () => ac.abort());
    // The alloc's destroy ends the tail, even one stalled on a client that stopped reading.
    const onEnded = () => end();
    src.ended?.addEventListener('abort', onEnded);
    if (src.ended?.aborted) return end();
    // Start near the end: the tail, not the whole history.
    let offset = Math.max(0, (await logBytes(src, task, stream)) - LOG_TAIL_BYTES);
    res.write(`event: start\ndata: ${JSON.stringify({ offset })}\n\n`);
    try {
      // Back-pressure: nothing more is read while the page's socket is full, so what is buffered
      // per page is one chunk past the socket's high-water mark. A page that fell more than
      // maxBehind bytes behind skips to the tail again, told so by a `skipped` event.
      for (;;) {
        const pass = new AbortController();
        const stop = () => pass.abort();
        ac.signal.addEventListener('abort', stop);
        let sent = 0;
        let skip: number | undefined;
        try {
          for await (const chunk of src.logs(task, stream, { follow: true, offset, signal: pass.signal })) {
            sent += chunk.length;
            if (res.write(`data: ${JSON.stringify(chunk.toString('utf8'))}\n\n`)) continue;
            if (!(await drained(res))) return;
            const total = await logBytes(src, task, stream);
            if (total - (offset + sent) > maxBehind) {
              skip = total - (offset + sent);
              offset = Math.max(0, total - LOG_TAIL_BYTES);
              break;
            }
          }
        } finally {
          ac.signal.removeEventListener('abort', stop);
          pass.abort();
        }
        if (skip === undefined || ac.signal.aborted) break;
        res.write(`event: skipped\ndata: ${JSON.stringify({ bytes: skip, offset })}\n\n`);
      }
    } catch (e) {
      if (!ac.signal.aborted) res.write(`event: failed\ndata: ${JSON.stringify(errorText(e))}\n\n`);
    } finally {
      src.ended?.removeEventListener('abort', onEnded);
      end();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://viewer');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed');
    // Against DNS rebinding: a loopback server (every server without a token is one) answers
    // requests naming a loopback host only, decided by address however it is spelled.
    if (loopback && !checkHostHeader(req.headers.host)) return send(res, 403, 'text/plain', 'forbidden host');
    let setCookie: Record<string, string> = {};
    if (token !== undefined && url.searchParams.has('code')) {
      const code = url.searchParams.get('code')!;
      if (!opts.redeemCode?.(code)) return send(res, 401, 'text/plain', 'this one-time code is unknown, used or expired: open the page again');
      const { pathname } = url;
      return send(res, 303, 'text/plain', 'signed in', {
        location: pathname,
        'set-cookie': `${cookieName}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
      });
    }
    if (token !== undefined) {
      const given = url.searchParams.get('token') ?? (req.headers['x-berth-token'] as string | undefined) ?? cookie(req, cookieName);
      if (!sameSecret(given, token)) return send(res, 401, 'text/plain', 'this viewer needs its token: open it with ?token=…');
      if (url.searchParams.has('token')) setCookie = { 'set-cookie': `${cookieName}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/` };
    }
    const path = url.pathname;
    if (path === '/' || path === '/index.html') return send(res, 200, PAGE_FILES['index.html']!, files.get('index.html')!, setCookie);
    if (path.startsWith('/static/')) {
      const name = path.slice('/static/'.length);
      const body = files.get(name);
      return body ? send(res, 200, PAGE_FILES[name]!, body) : send(res, 404, 'text/plain', 'not found');
    }
    if (path === '/api/info') return json(res, { mode: source.mode, title: source.title ?? (source.mode === 'live' ? 'live' : 'recording') });
    if (path === '/api/charts') return json(res, await berthCharts());
    if (path === '/api/events' && source.mode === 'live') return liveEvents(req, res, source.feed);
    if (path === '/api/recording' && source.mode === 'replay') {
      const { header, records, dropped, complete } = source.recording;
      return json(res, { header, records, dropped, complete });
    }
    if (path === '/api/logs') return logTail(req, res, url);
    return send(res, 404, 'text/plain', 'not found');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(res, 500, 'text/plain', errorText(e));
      else res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  cookieName = `berth_viewer_${port}`; // cookies are per host, not per port
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${port}/`,
    pages: () => pages,
    pageConnected: () => (pages > 0 ? Promise.resolve() : new Promise<void>((res) => pageWaiters.push(res))),
    async close() {
      if (closed) return;
      closed = true;
      for (const end of [...streams]) end();
      pageWaiters = [];
      await new Promise<void>((res) => {
        server.close(() => res());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
