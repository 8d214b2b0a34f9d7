/**
 * What a hostile client meets at the viewer's HTTP server (no berth client behind it: a bare feed,
 * so each test takes milliseconds): methods, the Host check, the token in each of its three
 * places, the cookie's scope, the security headers on every answer, the options refused, and the
 * routes that exist only in one mode.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { createBus } from '../../../bus/bus.ts';
import { InvalidViewerOptionsError } from '../../../actors/viewer/errors.ts';
import { ViewerFeed } from '../../../actors/viewer/feed.ts';
import type { Recording } from '../../../actors/viewer/recording.ts';
import { PAGE_FILES, pageSize, startViewerServer, type ViewerServeOptions, type ViewerServer, type ViewerSource } from '../../../actors/viewer/server.ts';

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(url: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw HTTP/1.0 request (so no Host header unless the text has one); resolves with the status line. */
function raw(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (d) => (got += d));
    s.on('end', () => resolve(got.split('\r\n')[0]!));
    s.on('error', reject);
    s.write(text);
  });
}

/** Reads an SSE stream until `until` is true of what arrived; then hangs up. */
function sseText(url: string, until: (text: string) => boolean, headers: Record<string, string> = {}): Promise<{ headers: Got['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        if (until(text)) {
          req.destroy();
          resolve({ headers: res.headers, text });
        }
      });
      res.on('end', () => resolve({ headers: res.headers, text }));
    });
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
    req.end();
  });
}

/** A token with what must be escaped in a URL and in a cookie. */
const TOKEN = 'tok 1;=&%';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The headers every answer carries, refusals included. */
function expectHardened(g: Got, what: string): void {
  expect(g.headers['content-security-policy'], what).to.equal(CSP);
  expect(g.headers['x-content-type-options'], what).to.equal('nosniff');
  expect(g.headers['referrer-policy'], what).to.equal('no-referrer');
  expect(g.headers['cache-control'], what).to.equal('no-store');
  if (g.body) expect(g.headers['content-length'], what).to.equal(String(Buffer.byteLength(g.body)));
}

/**
 * Holds the timers armed with one of `delays` (the server's flush delay, its 15 s heartbeat): they
 * run only when the test fires them, so "what the page gets at each flush" needs no waiting.
 * Every other timer runs as usual. `restore()` puts the real functions back.
 */
function holdTimers(...delays: number[]) {
  const real = { setTimeout, clearTimeout, setInterval, clearInterval };
  const held = new Map<NodeJS.Timeout, { ms: number; fn: () => void; repeat: boolean }>();
  let onArm: (() => void) | undefined;
  const hold =
    (repeat: boolean) =>
    (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (!delays.includes(ms ?? 0)) return (repeat ? real.setInterval : real.setTimeout)(fn, ms, ...args);
      const t = real.setTimeout(() => undefined, 2 ** 31 - 1).unref();
      held.set(t, { ms: ms!, fn: () => fn(...args), repeat });
      onArm?.();
      return t;
    };
  const release = (t: NodeJS.Timeout | string | number | undefined) => {
    if (t !== undefined && typeof t === 'object') held.delete(t);
    real.clearTimeout(t);
  };
  globalThis.setTimeout = hold(false) as unknown as typeof setTimeout;
  globalThis.setInterval = hold(true) as unknown as typeof setInterval;
  globalThis.clearTimeout = release as typeof clearTimeout;
  globalThis.clearInterval = release as typeof clearInterval;
  const pending = (ms: number) => [...held].filter(([, h]) => h.ms === ms);
  return {
    /** Timers of `ms` armed and not cleared (nor run, for a timeout). */
    pending: (ms: number) => pending(ms).length,
    /** Runs every timer of `ms` pending now, oldest first. */
    fire(ms: number) {
      for (const [t, h] of pending(ms)) {
        if (!h.repeat) held.delete(t);
        h.fn();
      }
    },
    /** Resolves once a timer of `ms` is pending. */
    armed: (ms: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!pending(ms).length) return;
          onArm = undefined;
          resolve();
        };
        onArm = check;
        check();
      }),
    restore() {
      Object.assign(globalThis, real);
      for (const t of held.keys()) real.clearTimeout(t);
      held.clear();
    },
  };
}

/** An SSE reader that keeps every event (`: ping` comments as event `ping`) and waits for one. */
function page(url: string) {
  const events: Array<{ event: string; data: string }> = [];
  let buf = '';
  let waiter: (() => void) | undefined;
  const req = request(url, { agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (block === ': ping') events.push({ event: 'ping', data: '' });
        const m = /^event: (\w+)\ndata: (.*)$/s.exec(block);
        if (m) events.push({ event: m[1]!, data: m[2]! });
      }
      waiter?.();
    });
  });
  req.on('error', () => undefined); // hung up by the test
  req.end();
  return {
    events,
    req,
    /** Resolves once `pred` holds of the events received. */
    until: (pred: (e: typeof events) => boolean) =>
      new Promise<void>((resolve) => {
        waiter = () => {
          if (!pred(events)) return;
          waiter = undefined;
          resolve();
        };
        waiter();
      }),
  };
}

describe('viewer server: what a hostile client meets', () => {
  const open: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of open.splice(0)) await close();
  });

  const live = async (opts: ViewerServeOptions = {}, extra: Partial<Extract<ViewerSource, { mode: 'live' }>> = {}) => {
    const bus = createBus();
    const feed = new ViewerFeed({ bus, now: Date.now });
    const srv = await startViewerServer({ mode: 'live', feed, logSource: () => undefined, ...extra }, opts);
    open.push(async () => {
      await srv.close();
      feed.close();
      bus.close();
    });
    return { srv, bus, feed };
  };
  const replay = async (opts: ViewerServeOptions = {}, title?: string): Promise<ViewerServer> => {
    const recording: Recording = { header: { berth: 'recording', version: 1, started: 5 }, records: [], dropped: 2, complete: false };
    const srv = await startViewerServer({ mode: 'replay', recording, ...(title !== undefined ? { title } : {}) }, opts);
    open.push(() => srv.close());
    return srv;
  };

  it('answers GET and HEAD only: any other method is a 405, hardened like every answer', async () => {
    const { srv } = await live();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const g = await call(`${srv.url}api/info`, { method });
      expect(g.status, method).to.equal(405);
      expect(g.body, method).to.equal('method not allowed');
      expect(g.headers['content-type'], method).to.equal('text/plain');
      expectHardened(g, method);
    }
    expect((await call(`${srv.url}api/info`, { method: 'HEAD' })).status).to.equal(200);
    const page = await call(srv.url);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(page.headers['set-cookie'], 'no token, no cookie').to.equal(undefined);
    expectHardened(page, 'page');
    expect((await call(`${srv.url}index.html`)).body).to.equal(page.body);
  });

  it('a loopback server refuses a foreign or missing Host with 403, before anything else is looked at', async () => {
    const { srv } = await live();
    for (const host of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example', '0.0.0.0', '10.0.0.1']) {
      const g = await call(`${srv.url}api/info`, { headers: { host } });
      expect(g.status, host).to.equal(403);
      expect(g.body, host).to.equal('forbidden host');
      expect(g.headers['content-type'], host).to.equal('text/plain');
      expectHardened(g, host);
    }
    // No Host at all (HTTP/1.0 allows it): refused too.
    expect(await raw(srv.url, 'GET /api/info HTTP/1.0\r\n\r\n')).to.match(/^HTTP\/1\.[01] 403 /);
    expect(await raw(srv.url, 'GET /api/info HTTP/1.0\r\nHost: localhost\r\n\r\n')).to.match(/^HTTP\/1\.[01] 200 /);
    for (const host of ['localhost', '127.0.0.1:1', '[::1]:8080', '127.1'])
      expect((await call(`${srv.url}api/info`, { headers: { host } })).status, host).to.equal(200);
    // A token does not lift the Host check on loopback.
    const { srv: withToken } = await live({ token: 'tok' });
    expect((await call(`${withToken.url}api/info`, { headers: { host: 'evil.example', 'x-berth-token': 'tok' } })).status).to.equal(403);
  });

  it('a non-loopback server (it has a token) answers any Host that carries the token', async () => {
    const { srv } = await live({ host: '0.0.0.0', token: 'tok' });
    expect(srv.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect((await call(`${srv.url}api/info`, { headers: { host: 'viewer.example:9', 'x-berth-token': 'tok' } })).status).to.equal(200);
    expect((await call(`${srv.url}api/info`, { headers: { host: 'viewer.example:9' } })).status).to.equal(401);
  });

  it('the token: right in the query, the header or this port’s cookie; wrong anywhere else is a 401 with a hint', async () => {
    const { srv } = await live({ token: TOKEN });
    const port = new URL(srv.url).port;
    const q = encodeURIComponent(TOKEN);
    const refused = async (path: string, headers: Record<string, string>, what: string) => {
      const g = await call(`${srv.url}${path}`, { headers });
      expect(g.status, what).to.equal(401);
      expect(g.body, what).to.equal('this viewer needs its token: open it with ?token=…');
      expect(g.headers['content-type'], what).to.equal('text/plain');
      expectHardened(g, what);
      expect(g.headers['set-cookie'], what).to.equal(undefined);
    };
    await refused('api/info', {}, 'nothing');
    await refused('api/info?token=', {}, 'empty query');
    await refused('api/info?token=tok', {}, 'a prefix');
    await refused(`api/info?token=${q}x`, {}, 'longer');
    await refused('api/info', { 'x-berth-token': '' }, 'empty header');
    await refused('api/info', { cookie: `berth_viewer=${q}` }, 'cookie of no port');
    await refused('api/info', { cookie: `berth_viewer_1${port}=${q}` }, 'cookie of another port');
    await refused('api/info', { cookie: `=${q}` }, 'cookie without a name');
    await refused('api/info', { cookie: `xberth_viewer_${port}=${q}` }, 'cookie with a longer name');
    // A part without `=` (a browser's nameless cookie) is no cookie of ours, however it is spelled.
    expect(
      (await call(`${srv.url}api/info`, { headers: { cookie: `berth_viewer_${port}x; berth_viewer_${port}=${q}` } })).status,
      'nameless, then right',
    ).to.equal(200);
    // The first cookie of that name decides: a malformed one is not skipped for a later good one.
    await refused('api/info', { cookie: `berth_viewer_${port}=%E0%A4%A; berth_viewer_${port}=${q}` }, 'malformed, then right');
    // The query is looked at first, then the header, then the cookie: the first one given must be right.
    await refused('api/info?token=wrong', { 'x-berth-token': TOKEN }, 'wrong query, right header');
    expect((await call(`${srv.url}api/info`, { headers: { 'x-berth-token': TOKEN } })).status).to.equal(200);
    await refused('api/info', { 'x-berth-token': 'wrong', cookie: `berth_viewer_${port}=${q}` }, 'wrong header, right cookie');

    expect((await call(`${srv.url}api/info?token=${q}`)).status).to.equal(200);
    expect((await call(`${srv.url}api/info`, { headers: { cookie: `a=1; berth_viewer_${port} = ${q} ; b=2` } })).status).to.equal(200);
    expect((await call(`${srv.url}api/info`, { headers: { cookie: `a=%; berth_viewer_${port}=${q}` } })).status, 'a bad cookie before it').to.equal(200);
    // Only a page opened with ?token= gets the cookie, scoped to this port, script-proof and same-site.
    const page = await call(`${srv.url}?token=${q}`);
    expect(page.status).to.equal(200);
    expect(page.headers['set-cookie']).to.deep.equal([`berth_viewer_${port}=${q}; HttpOnly; SameSite=Strict; Path=/`]);
    expect((await call(`${srv.url}api/info?token=${q}`)).headers['set-cookie'], 'only the page sets it').to.equal(undefined);
    const byCookie = await call(srv.url, { headers: { cookie: `berth_viewer_${port}=${q}` } });
    expect(byCookie.status).to.equal(200);
    expect(byCookie.headers['set-cookie'], 'no cookie without ?token=').to.equal(undefined);
  });

  it('serves the page files and nothing else from disk, each with its own type', async () => {
    const { srv } = await live();
    // pageSize() is what those files weigh together.
    const dir = join(import.meta.dirname, '../../../actors/viewer/static');
    expect(pageSize()).to.equal(Object.keys(PAGE_FILES).reduce((n, f) => n + statSync(join(dir, f)).size, 0));
    expect(Object.keys(PAGE_FILES).sort()).to.deep.equal(['app.js', 'index.html', 'model.mjs', 'style.css']);
    for (const [name, type] of Object.entries(PAGE_FILES)) {
      const g = await call(`${srv.url}static/${name}`);
      expect(g.status, name).to.equal(200);
      expect(g.headers['content-type'], name).to.equal(type);
      expectHardened(g, name);
    }
    for (const path of [
      'static/',
      'static/index.htm',
      'static/%2e%2e/server.ts',
      'static/..%2fserver.ts',
      'static/static/app.js',
      'nope',
      'api',
      'api/info/x',
      'app.js',
    ]) {
      const g = await call(`${srv.url}${path}`);
      expect(g.status, path).to.equal(404);
      expect(g.body, path).to.equal('not found');
      expect(g.headers['content-type'], path).to.equal('text/plain');
    }
  });

  it('live and replay each answer only their own routes; titles default by mode', async () => {
    const { srv } = await live();
    expect(JSON.parse((await call(`${srv.url}api/info`)).body)).to.deep.equal({ mode: 'live', title: 'live' });
    expect((await call(`${srv.url}api/recording`)).status).to.equal(404);
    const info = await call(`${srv.url}api/info`);
    expect(info.headers['content-type']).to.equal('application/json');
    expectHardened(info, 'info');
    const { srv: named } = await live({}, { title: 'node-a' });
    expect(JSON.parse((await call(`${named.url}api/info`)).body)).to.deep.equal({ mode: 'live', title: 'node-a' });

    const rec = await replay();
    expect(JSON.parse((await call(`${rec.url}api/info`)).body)).to.deep.equal({ mode: 'replay', title: 'recording' });
    expect(JSON.parse((await call(`${rec.url}api/recording`)).body)).to.deep.equal({
      header: { berth: 'recording', version: 1, started: 5 },
      records: [],
      dropped: 2,
      complete: false,
    });
    expect((await call(`${rec.url}api/events`)).status).to.equal(404);
    const logs = await call(`${rec.url}api/logs?alloc=a&task=t`);
    expect(logs.status).to.equal(404);
    expect(logs.body).to.equal('logs are not recorded: open a live viewer');
    expect(logs.headers['content-type']).to.equal('text/plain');
    expectHardened(logs, 'replay logs');
    expect(JSON.parse((await call(`${(await replay({}, 'mine')).url}api/info`)).body).title).to.equal('mine');
  });

  it('log tails: a bad stream is a 400, an unknown alloc or task a 404 naming it, a failing source a 500', async () => {
    const { srv } = await live(
      {},
      {
        logSource: (id) => {
          if (id === 'boom') throw new Error('the log source broke');
          return id === 'a1' ? { logsDir: '/nonexistent', tasks: ['web'], logs: () => (async function* () {})() } : undefined;
        },
      },
    );
    const g = (q: string) => call(`${srv.url}api/logs?${q}`);
    for (const stream of ['stdin', 'STDOUT', '']) {
      const r = await g(`alloc=a1&task=web&stream=${stream}`);
      expect(r.status, stream).to.equal(400);
      expect(r.body).to.equal('stream must be stdout or stderr');
      expect(r.headers['content-type'], stream).to.equal('text/plain');
    }
    const noAlloc = await g('alloc=zz&task=web');
    expect(noAlloc).to.include({ status: 404, body: 'no allocation zz on this client' });
    expect(noAlloc.headers['content-type']).to.equal('text/plain');
    expect(await g('task=web')).to.include({ status: 404, body: 'no allocation  on this client' });
    const noTask = await g('alloc=a1&task=db');
    expect(noTask).to.include({ status: 404, body: 'allocation a1 has no task db' });
    expect(noTask.headers['content-type']).to.equal('text/plain');
    expect(await g('alloc=a1')).to.include({ status: 404, body: 'allocation a1 has no task ' });
    const broke = await g('alloc=boom&task=web');
    expect(broke.status).to.equal(500);
    expect(broke.body).to.include('the log source broke');
    expect(broke.headers['content-type']).to.equal('text/plain');
    expectHardened(broke, 'a failing source');
    // A known task: an event stream that starts at offset 0 (no files yet).
    const tail = await sseText(`${srv.url}api/logs?alloc=a1&task=web`, (t) => t.includes('event: start'));
    expect(tail.headers['content-type']).to.equal('text/event-stream');
    expect(tail.headers.connection).to.equal('keep-alive');
    expectHardened({ ...tail, status: 200, body: '' }, 'a tail');
    expect(tail.text).to.match(/^: berth viewer\n\nevent: start\ndata: \{"offset":0\}\n\n/);
  });

  it('a tail starts 64 KiB before the end of all the stream’s files, sends each chunk as JSON, and reports a failing source', async () => {
    const logsDir = mkdtempSync(join(tmpdir(), 'berth-tail-'));
    try {
      writeFileSync(join(logsDir, 'web.stdout.0'), Buffer.alloc(50_000, 'a'));
      writeFileSync(join(logsDir, 'web.stdout.1'), Buffer.alloc(30_000, 'b'));
      writeFileSync(join(logsDir, 'web.stderr.0'), 'short');
      const asked: Array<{ stream: string; follow?: boolean; offset?: number; signal: boolean }> = [];
      const { srv } = await live(
        {},
        {
          logSource: () => ({
            logsDir,
            tasks: ['web', 'bad'],
            logs: (task, stream, o) => {
              asked.push({ stream, follow: o.follow, offset: o.offset, signal: o.signal instanceof AbortSignal });
              return (async function* () {
                if (task === 'bad') throw new Error('the log files are gone');
                yield Buffer.from('line "one"\n');
                yield Buffer.from('two');
              })();
            },
          }),
        },
      );
      const out = await sseText(`${srv.url}api/logs?alloc=a&task=web`, (t) => t.includes('"two"'));
      expect(out.text).to.equal(`: berth viewer\n\nevent: start\ndata: {"offset":${80_000 - 65_536}}\n\ndata: "line \\"one\\"\\n"\n\ndata: "two"\n\n`);
      const err = await sseText(`${srv.url}api/logs?alloc=a&task=bad&stream=stderr`, (t) => t.includes('event: failed'));
      expect(err.text).to.equal(': berth viewer\n\nevent: start\ndata: {"offset":0}\n\nevent: failed\ndata: "the log files are gone"\n\n');
      expect(asked).to.deep.equal([
        { stream: 'stdout', follow: true, offset: 80_000 - 65_536, signal: true },
        { stream: 'stderr', follow: true, offset: 0, signal: true },
      ]);
    } finally {
      rmSync(logsDir, { recursive: true, force: true });
    }
  });

  it('a tail whose log directory cannot be read ends its stream once the headers are out', async () => {
    // A file where the directory should be: listing it fails after the stream has started.
    const { srv } = await live({}, { logSource: () => ({ logsDir: import.meta.filename, tasks: ['web'], logs: () => (async function* () {})() }) });
    const tail = await sseText(`${srv.url}api/logs?alloc=a&task=web`, () => false);
    expect(tail.headers['content-type']).to.equal('text/event-stream');
    expect(tail.text).to.equal(': berth viewer\n\n');
  });

  it("an alloc's destroy ends a tail that is waiting for output", async () => {
    const ended = new AbortController();
    let stopped = false;
    const { srv } = await live(
      {},
      {
        logSource: () => ({
          logsDir: '/nonexistent',
          tasks: ['web'],
          ended: ended.signal,
          logs: (_t, _s, o) =>
            (async function* () {
              yield Buffer.from('hi');
              await new Promise<void>((r) => o.signal!.addEventListener('abort', () => r()));
              stopped = true;
            })(),
        }),
      },
    );
    // Once the first chunk is out, the alloc is destroyed: the stream ends from the server's side.
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${srv.url}api/logs?alloc=a&task=web`, { agent: false }, (res) => {
        let got = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          got += d;
          if (got.includes('data: "hi"')) ended.abort();
        });
        res.on('end', () => resolve(got));
      });
      req.on('error', reject);
      req.end();
    });
    expect(text.endsWith('data: "hi"\n\n')).to.equal(true);
    expect(stopped, 'the source was told to stop').to.equal(true);
  });

  it("a tail that ended leaves no listener on its alloc's destroy signal", async () => {
    const ended = new AbortController();
    const { srv } = await live(
      {},
      { logSource: () => ({ logsDir: '/nonexistent', tasks: ['web'], logs: () => (async function* () {})(), ended: ended.signal }) },
    );
    for (let i = 0; i < 3; i++) {
      const tail = await sseText(`${srv.url}api/logs?alloc=a&task=web`, () => false);
      expect(tail.text).to.equal(': berth viewer\n\nevent: start\ndata: {"offset":0}\n\n');
    }
    expect(getEventListeners(ended.signal, 'abort')).to.have.length(0);
  });

  it("a tail whose source ignores its stop signal: the alloc's destroy still ends it, and nothing is written after", async () => {
    const ended = new AbortController();
    let late = 0;
    let released!: () => void;
    const gone = new Promise<void>((r) => (released = r));
    const { srv } = await live(
      {},
      {
        logSource: () => ({
          logsDir: '/nonexistent',
          tasks: ['web'],
          ended: ended.signal,
          logs: () =>
            (async function* () {
              try {
                yield Buffer.from('hi');
                await new Promise<void>((r) => ended.signal.addEventListener('abort', () => r()));
                late++;
                yield Buffer.from('late'); // written after the stream ended: refused by the response, not sent
                late++;
              } finally {
                released();
              }
            })(),
        }),
      },
    );
    const tail = await sseText(`${srv.url}api/logs?alloc=a&task=web`, (t) => {
      if (t.includes('data: "hi"')) ended.abort();
      return false;
    });
    expect(tail.text).to.equal(': berth viewer\n\nevent: start\ndata: {"offset":0}\n\ndata: "hi"\n\n');
    await gone; // the source is let go (its generator returned), not left waiting on a dead response
    expect(late, 'pulled once past the destroy, then let go').to.equal(1);
  });

  it('a tail whose source ignores its stop signal is let go when its page hangs up', async () => {
    let afterHangUp = 0;
    let hungUp = false;
    let released!: () => void;
    const gone = new Promise<void>((r) => (released = r));
    const { srv } = await live(
      {},
      {
        logSource: () => ({
          logsDir: '/nonexistent',
          tasks: ['web'],
          logs: () =>
            (async function* () {
              try {
                for (let i = 0; afterHangUp < 1000; i++) {
                  if (hungUp) afterHangUp++;
                  yield Buffer.from(`line ${i}\n`);
                  await new Promise((r) => setImmediate(r));
                }
              } finally {
                released();
              }
            })(),
        }),
      },
    );
    await sseText(`${srv.url}api/logs?alloc=a&task=web`, (t) => (hungUp = t.includes('line 3')));
    await gone;
    expect(afterHangUp, 'chunks pulled after the page hung up').to.be.at.most(2);
  });

  it('a tail of an alloc already destroyed ends at once', async () => {
    const ended = new AbortController();
    ended.abort();
    const { srv } = await live(
      {},
      { logSource: () => ({ logsDir: '/nonexistent', tasks: ['web'], logs: () => (async function* () {})(), ended: ended.signal }) },
    );
    const tail = await sseText(`${srv.url}api/logs?alloc=a&task=web`, () => false);
    expect(tail.text).to.equal(': berth viewer\n\n');
  });

  it('counts pages, resolves pageConnected, and close() ends their streams and is idempotent', async () => {
    const { srv, bus } = await live({ flushMs: 1 });
    expect(srv.pages()).to.equal(0);
    let hung = false;
    let sawRecords: () => void;
    const records = new Promise<void>((r) => (sawRecords = r));
    const stream = new Promise<string>((resolve, reject) => {
      const req = request(`${srv.url}api/events`, { agent: false }, (res) => {
        expect(res.headers['content-type']).to.equal('text/event-stream');
        expect(res.headers['content-security-policy']).to.equal(CSP);
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (text.includes('event: records')) sawRecords();
        });
        res.on('end', () => {
          hung = true;
          resolve(text);
        });
      });
      req.on('error', reject);
      req.end();
    });
    await srv.pageConnected();
    expect(srv.pages()).to.equal(1);
    await srv.pageConnected(); // at once, one is connected
    bus.publish('alloc.state', { allocId: 'z', from: null, to: 'pending' });
    await records;
    await Promise.all([srv.close(), srv.close()]);
    const text = await stream;
    expect(hung).to.equal(true);
    expect(text.startsWith(': berth viewer\n\nevent: init\ndata: ')).to.equal(true);
    expect(text).to.include('event: records\ndata: ');
    expect(srv.pages()).to.equal(0);
    let err: unknown;
    await call(srv.url).catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException).code).to.equal('ECONNREFUSED');
  });

  it('a page that stops taking records is not written to until its socket drains, and is resynchronised past maxQueue', async () => {
    const FLUSH = 4321;
    const BEAT = 15_000;
    const clock = holdTimers(FLUSH, BEAT);
    try {
      const { srv, bus } = await live({ flushMs: FLUSH, maxQueue: 2 });
      const p = page(`${srv.url}api/events`);
      await srv.pageConnected();
      await p.until((e) => e.length === 1);
      const err = (error: string) => bus.publish('client.error', { error });
      const records = (i: number) => JSON.parse(p.events[i]!.data).map((r: { error: string }) => r.error.slice(0, 8));
      const big = (c: string) => c.repeat(20_000); // past the socket's 16 KiB mark: the write says "wait for drain"
      // A batch the socket cannot take at once: the flush that follows the drain finds nothing queued.
      err(big('a'));
      expect(clock.pending(FLUSH), 'one flush timer for what is queued').to.equal(1);
      clock.fire(FLUSH);
      await clock.armed(FLUSH); // armed by the drain
      clock.fire(FLUSH);
      // Blocked again: flushes before the drain write nothing, the queue outgrows maxQueue.
      err(big('b'));
      clock.fire(FLUSH);
      for (const r of ['r2', 'r3', 'r4']) {
        err(r);
        clock.fire(FLUSH);
      }
      await clock.armed(FLUSH);
      clock.fire(FLUSH); // the resync
      err('r5');
      clock.fire(FLUSH);
      clock.fire(BEAT);
      await p.until((e) => e.some((x) => x.event === 'ping'));
      expect(p.events.map((e) => e.event)).to.deep.equal(['init', 'records', 'records', 'init', 'records', 'ping']);
      expect(records(1)).to.deep.equal(['aaaaaaaa']);
      expect(records(2)).to.deep.equal(['bbbbbbbb']);
      expect(records(4), 'records flow again after a resync').to.deep.equal(['r5']);
      // Records queued when the page goes leave no flush timer behind.
      err('r6');
      err('r7');
      expect(clock.pending(FLUSH), 'one flush for records queued together').to.equal(1);
      await srv.close();
      expect(clock.pending(FLUSH), 'flush timer left after close').to.equal(0);
      expect(clock.pending(BEAT), 'heartbeat left after close').to.equal(0);
    } finally {
      clock.restore();
    }
  });

  it('a page that hangs up is no longer counted', async () => {
    const { srv } = await live();
    const p = page(`${srv.url}api/events`);
    await p.until((e) => e.length === 1);
    expect(srv.pages()).to.equal(1);
    p.req.destroy();
    while (srv.pages() > 0) await new Promise((r) => setImmediate(r)); // the server sees the close a few turns later
    expect(srv.pages()).to.equal(0);
  });

  it('a page is resynchronised past 5000 queued records by default, not at 5000', async () => {
    for (const [n, want] of [
      [5000, 'records'],
      [5001, 'init'],
    ] as const) {
      const { srv, bus } = await live();
      let second = '';
      const done = new Promise<void>((resolve, reject) => {
        const req = request(`${srv.url}api/events`, { agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
            const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
            if (events.length >= 2) {
              second = events[1]!;
              req.destroy();
              resolve();
            }
          });
        });
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
        req.end();
      });
      await srv.pageConnected();
      for (let i = 0; i < n; i++) bus.publish('alloc.state', { allocId: `a${i}`, from: null, to: 'pending' });
      await done;
      expect(second, `${n} records`).to.equal(want);
    }
  });

  it('serves the charts as JSON; a port in use is an error; close() does not wait for a half-sent request', async function () {
    this.timeout(30_000); // elkjs loads on first use
    const { srv } = await live();
    const charts = await call(`${srv.url}api/charts`);
    expect(charts.status).to.equal(200);
    expect(charts.headers['content-type']).to.equal('application/json');
    expect(Object.keys(JSON.parse(charts.body)).sort()).to.deep.equal(['alloc', 'task']);
    let err: unknown;
    await live({ port: Number(new URL(srv.url).port) }).catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException)?.code).to.equal('EADDRINUSE');
    // A client that sent half a request and stopped: close() cuts it rather than waiting.
    const { srv: other } = await live();
    const { port } = new URL(other.url);
    const half = connect(Number(port), '127.0.0.1');
    half.on('error', () => undefined); // the reset is the point
    await new Promise<void>((r) => half.once('connect', () => r()));
    half.write('GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const cut = new Promise<void>((r) => half.once('close', () => r()));
    await other.close();
    await cut;
  });

  it('refuses options that cannot work, each with a message that says what to change', async () => {
    const cases: Array<[ViewerServeOptions, RegExp]> = [
      [{ host: '' }, /^viewer: host must be a non-empty string$/],
      [{ host: 7 as never }, /^viewer: host must be a non-empty string$/],
      [{ port: -1 }, /^viewer: port must be an integer in 0\.\.65535, not -1$/],
      [{ port: 65536 }, /not 65536$/],
      [{ port: 2.5 }, /not 2\.5$/],
      [{ port: '80' as never }, /not "80"$/],
      [{ token: '' }, /^viewer: token must be a non-empty string$/],
      [{ token: 5 as never }, /^viewer: token must be a non-empty string$/],
      [{ logMaxBehindBytes: -1 }, /^viewer: logMaxBehindBytes must be a non-negative integer, not -1$/],
      [{ logMaxBehindBytes: 0.5 }, /not 0\.5$/],
      [{ host: '10.0.0.1' }, /^viewer: host "10\.0\.0\.1" is not a loopback address: pass a token to listen on it$/],
      [{ host: '::' }, /is not a loopback address/],
    ];
    for (const [opts, message] of cases) {
      let err: unknown;
      await startViewerServer({ mode: 'replay', recording: undefined as never }, opts).catch((e) => (err = e));
      expect(err, JSON.stringify(opts)).to.be.instanceOf(InvalidViewerOptionsError);
      expect((err as Error).message, JSON.stringify(opts)).to.match(message);
    }
    // The edges that are allowed.
    // Port 0 is "any free port"; 65535 is a valid port (whether or not it is free here).
    const any = await replay({ port: 0 });
    expect(Number(new URL(any.url).port)).to.be.greaterThan(0);
    const top = await startViewerServer({ mode: 'replay', recording: undefined as never }, { port: 65535 }).catch((e: Error) => e);
    if (top instanceof Error) expect(top).to.not.be.instanceOf(InvalidViewerOptionsError);
    else await top.close();
    for (const opts of [{ logMaxBehindBytes: 0 }, { host: 'localhost' }, { host: '::1' }]) {
      const srv = await replay(opts);
      const shown = opts.host === '::1' ? '\\[::1\\]' : opts.host === 'localhost' ? 'localhost' : '127\\.0\\.0\\.1'; // the host as given (bracketed if IPv6)
      expect(srv.url, JSON.stringify(opts)).to.match(new RegExp(`^http://${shown}:\\d+/$`));
    }
  });
});
