/**
 * What a command line needs to show a viewer: open one on a live client, serve a recording, and
 * wait for Ctrl-C.
 * @module
 */
import { readRecording } from './recording.ts';
import { startViewerServer, type ViewerServeOptions, type ViewerServer } from './server.ts';

/** The address to open in a browser (with the token, when there is one). */
export function viewerPageUrl(server: { url: string }, token?: string): string {
  return token ? `${server.url}?token=${encodeURIComponent(token)}` : server.url;
}

/**
 * Serves a recording (`ClientOptions.record`, `berth run --record`) for replay with a time slider.
 * Throws RecordingFormatError for a file that is not one.
 * @example
 * const srv = await serveRecording('incident.jsonl', { port: 8080 });
 * console.log(`open ${srv.url}`);
 */
export async function serveRecording(file: string, opts: ViewerServeOptions = {}): Promise<ViewerServer> {
  const recording = readRecording(file);
  return startViewerServer({ mode: 'replay', recording, title: file.split('/').pop() ?? file }, opts);
}

/** What {@link openLiveViewer} needs of a client (the viewer does not import the client). */
export interface ViewerHost {
  serveViewer(opts: ViewerServeOptions): Promise<{ url: string }>;
}

/** Opens a live viewer on `client` and says where (through `log`). */
export async function openLiveViewer(client: ViewerHost, opts: ViewerServeOptions & { log?: (line: string) => void } = {}): Promise<ViewerServer> {
  const { log, ...serve } = opts;
  const srv = await client.serveViewer(serve);
  log?.(`viewer: open ${viewerPageUrl(srv, serve.token)} in a browser (berth's own page; works offline)`);
  if (serve.host && !['127.0.0.1', 'localhost', '::1'].includes(serve.host) && !serve.token)
    log?.(`viewer: listening on ${serve.host} without a token: anyone who can reach it sees your allocations (use --token)`);
  return srv as ViewerServer;
}

/** Resolves on the first SIGINT or SIGTERM (or when `signal` aborts), then stops listening. */
export function untilInterrupted(signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      signal?.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    const onAbort = () => done('aborted');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    if (signal?.aborted) return done('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves once every page that was open on `srv` (when called, or since) has gone (closed, not
 * merely reloading: no page for `graceMs`), or when `signal` aborts. Never resolves while no
 * page was opened.
 * Looks every `everyMs` (an unref'd timer: it does not keep the host alive by itself).
 */
export function untilPagesClosed(srv: Pick<ViewerServer, 'pages'>, signal?: AbortSignal, opts: { everyMs?: number; graceMs?: number } = {}): Promise<void> {
  const everyMs = opts.everyMs ?? 500;
  const graceMs = opts.graceMs ?? 2000;
  return new Promise((resolve) => {
    let seen = srv.pages() > 0; // a page open now counts, even if it closes before the first look
    let emptySince: number | undefined;
    const done = () => {
      clearInterval(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setInterval(() => {
      const n = srv.pages();
      if (n > 0) {
        seen = true;
        emptySince = undefined;
      } else if (seen) {
        emptySince ??= Date.now();
        if (Date.now() - emptySince >= graceMs) done();
      }
    }, everyMs);
    timer.unref();
    if (signal?.aborted) return done();
    signal?.addEventListener('abort', done, { once: true });
  });
}
