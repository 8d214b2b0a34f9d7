/**
 * Streams and slow readers: a log tail waits for its page's socket to drain (what is buffered
 * per page is bounded), a page that fell far behind skips ahead with a `skipped` event, and an
 * alloc's destroy ends every stream of it (viewer tails, runner.logs follow, fs streams) with no
 * fd left on its deleted files.
 */
import { expect } from 'chai';
import { appendFileSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus } from '../../../bus/bus.ts';
import { readTaskLogs } from '../../../actors/drivers/logs/reader.ts';
import { ViewerFeed } from '../../../actors/viewer/feed.ts';
import { startViewerServer, type ViewerLogSource } from '../../../actors/viewer/server.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';

/** Opens a GET and hands back the response without reading it (a page that stopped reading). */
function openPaused(url: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      res.pause();
      resolve({ req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

/** GETs a URL and reads its whole body. */
function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

/** Waits (20 ms ticks) until `value()` stops changing for 5 ticks, or passes `cap`. */
async function steady(value: () => number, cap: number): Promise<number> {
  let last = -1;
  let same = 0;
  while (same < 5 && value() <= cap) {
    await new Promise((r) => setTimeout(r, 20));
    const v = value();
    same = v === last ? same + 1 : 0;
    last = v;
  }
  return value();
}

const MiB = 1024 * 1024;

describe('viewer log tail: back-pressure', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  const serveSource = async (src: ViewerLogSource, extra = {}) => {
    const bus = createBus();
    const feed = new ViewerFeed({ bus, now: Date.now });
    const srv = await startViewerServer({ mode: 'live', feed, logSource: () => src }, extra);
    return {
      srv,
      close: async () => {
        await srv.close();
        feed.close();
        bus.close();
      },
    };
  };

  it('reads no further than the socket takes from a flooding task: what it buffers for a stalled page is bounded', async () => {
    const logsDir = mkdtempSync(join(tmpdir(), 'berth-flood-'));
    dirs.push(logsDir);
    let pulled = 0;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const src: ViewerLogSource = {
      logsDir,
      tasks: ['web'],
      async *logs(_t, _s, o) {
        while (!o.signal?.aborted) {
          pulled += chunk.length;
          yield chunk;
          await new Promise((r) => setImmediate(r));
        }
      },
    };
    const { srv, close } = await serveSource(src);
    try {
      const { req, res } = await openPaused(`${srv.url}api/logs?alloc=a&task=web`);
      // What the tail has pulled from the task stays within the socket buffers (a few MiB on
      // loopback) of what the page took off its socket: checked after each of 200 requests the
      // server answers meanwhile. Without back-pressure it pulls 64 KiB every loop turn, without end.
      let ahead = 0;
      for (let i = 0; i < 200; i++) {
        await fetchText(`${srv.url}api/info`);
        ahead = Math.max(ahead, pulled - res.socket.bytesRead);
        expect(ahead, `read ${(ahead / MiB).toFixed(1)} MiB more than the page took`).to.be.below(16 * MiB);
      }
      req.destroy();
    } finally {
      await close();
    }
  });

  it('a page that fell behind more than logMaxBehindBytes skips to the tail, told by a `skipped` event', async () => {
    const logsDir = mkdtempSync(join(tmpdir(), 'berth-behind-'));
    dirs.push(logsDir);
    const file = join(logsDir, 'web.stdout.0');
    writeFileSync(file, 'start\n');
    let pulled = 0;
    const src: ViewerLogSource = {
      logsDir,
      tasks: ['web'],
      async *logs(task, stream, o) {
        for await (const c of readTaskLogs(logsDir, task, stream, o)) {
          pulled += c.length;
          yield c;
        }
      },
    };
    const { srv, close } = await serveSource(src, { logMaxBehindBytes: 256 * 1024 });
    try {
      const { req, res } = await openPaused(`${srv.url}api/logs?alloc=a&task=web`);
      // The tail has read what was there (it starts at the end): only now does the flood begin.
      while (pulled < 6) await new Promise((r) => setTimeout(r, 5));
      const block = Buffer.alloc(MiB, 'y');
      for (let i = 0; i < 24; i++) appendFileSync(file, block);
      // Let the tail fall behind as far as the stalled socket lets it (a settle wait, not the
      // proof: resumed early, the page would catch up and the skipped event below would be missing).
      await steady(() => pulled, 64 * MiB);
      const total = 24 * MiB + 6;
      let received = 0;
      let text = '';
      const skipped = await new Promise<boolean>((resolve) => {
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          received += d.length;
          const seen = text + d; // the marker may straddle two chunks
          if (seen.includes('event: skipped')) return resolve(true);
          if (received >= total) resolve(false);
          text = seen.slice(-32);
        });
        res.on('end', () => resolve(false));
        res.resume();
      });
      req.destroy();
      expect(skipped, 'a skipped event before the whole backlog').to.equal(true);
      expect(received).to.be.below(total);
    } finally {
      await close();
    }
  });
  it('by default a page may fall 1 MiB behind: 5000 bytes behind is no skip', async () => {
    const logsDir = mkdtempSync(join(tmpdir(), 'berth-noskip-'));
    dirs.push(logsDir);
    const file = join(logsDir, 'web.stdout.0');
    writeFileSync(file, Buffer.alloc(64 * 1024 + 10, 'x'));
    const asked: number[] = [];
    const src: ViewerLogSource = {
      logsDir,
      tasks: ['web'],
      async *logs(_t, _s, o) {
        asked.push(o.offset!);
        appendFileSync(file, Buffer.alloc(5000, 'y'));
        yield Buffer.alloc(64 * 1024, 'z'); // more than the socket takes at once: the lag is measured
      },
    };
    const { srv, close } = await serveSource(src);
    try {
      const text = await fetchText(`${srv.url}api/logs?alloc=a&task=web`);
      expect(text === `: berth viewer\n\nevent: start\ndata: {"offset":10}\n\ndata: "${'z'.repeat(64 * 1024)}"\n\n`, 'no skipped event').to.equal(true);
      expect(asked).to.deep.equal([10]);
    } finally {
      await close();
    }
  });

  it('the skip arithmetic: each pass skipped by exactly what it fell behind, to 64 KiB before the end; a lag of exactly logMaxBehindBytes is kept', async () => {
    const logsDir = mkdtempSync(join(tmpdir(), 'berth-skips-'));
    dirs.push(logsDir);
    const file = join(logsDir, 'web.stdout.0');
    writeFileSync(file, Buffer.alloc(64 * 1024 + 10, 'x')); // the tail starts at offset 10
    const SKIPS = 12;
    const asked: number[] = [];
    const signals: AbortSignal[] = [];
    const leaks: string[] = [];
    const onWarning = (w: Error) => void (w.name === 'MaxListenersExceededWarning' && leaks.push(w.message));
    process.on('warning', onWarning);
    const src: ViewerLogSource = {
      logsDir,
      tasks: ['web'],
      async *logs(_t, _s, o) {
        asked.push(o.offset!);
        signals.push(o.signal!);
        // Each pass, the task writes 5000 bytes while a 64 KiB chunk (more than the socket takes
        // at once) goes out; the last one writes exactly the bound.
        appendFileSync(file, Buffer.alloc(asked.length <= SKIPS ? 5000 : 1000, 'y'));
        yield Buffer.alloc(64 * 1024, String(asked.length % 10));
      },
    };
    const { srv, close } = await serveSource(src, { logMaxBehindBytes: 1000 });
    try {
      const text = await fetchText(`${srv.url}api/logs?alloc=a&task=web`);
      await new Promise((r) => setImmediate(r));
      const chunk = (n: number) => `data: "${String(n % 10).repeat(64 * 1024)}"\n\n`;
      let want = ': berth viewer\n\nevent: start\ndata: {"offset":10}\n\n';
      for (let i = 1; i <= SKIPS; i++) want += chunk(i) + `event: skipped\ndata: {"bytes":5000,"offset":${10 + 5000 * i}}\n\n`;
      want += chunk(SKIPS + 1);
      expect(text.length).to.equal(want.length);
      expect(text === want, 'the transcript').to.equal(true);
      expect(asked).to.deep.equal(Array.from({ length: SKIPS + 1 }, (_, i) => 10 + 5000 * i));
      expect(
        signals.map((s) => s.aborted),
        'each pass told to stop',
      ).to.deep.equal(signals.map(() => true));
      expect(leaks, 'listeners left behind by earlier passes').to.deep.equal([]);
    } finally {
      process.off('warning', onWarning);
      await close();
    }
  });
});

describe('destroy ends every stream of the alloc', () => {
  const newClient = useTempClients();

  /** fds of this process on deleted files under `dir`. */
  const deletedFds = (dir: string) =>
    readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const to = readlinkSync(`/proc/self/fd/${fd}`);
        return to.startsWith(dir) && to.endsWith('(deleted)') ? [to] : [];
      } catch {
        return [];
      }
    });

  it('runner.logs follow, fs.stream follow and viewer tails end when destroy() resolves, no fds on deleted files', async () => {
    const client = newClient();
    const v = await client.serveViewer();
    const a = makeAlloc([{ name: 'web', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', 'echo hello; sleep 30'] }, killTimeoutMs: 1000 }]);
    const r = client.addAlloc(a);
    await r.waitFor('running');
    const ended: string[] = [];
    const consume = async (what: string, it: AsyncIterable<Buffer>) => {
      for await (const _ of it) void _;
      ended.push(what);
    };
    const runs: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) runs.push(consume(`logs${i}`, r.logs('web', 'stdout', { follow: true })));
    for (let i = 0; i < 20; i++) runs.push(consume(`fs${i}`, r.fs.stream('alloc/logs/web.stdout.0', { follow: true })));
    // A stalled consumer: asked once, then never again.
    const stalled = r.logs('web', 'stdout', { follow: true })[Symbol.asyncIterator]();
    await stalled.next();
    const tails: Array<Promise<number | undefined>> = [];
    const reading: Array<Promise<void>> = [];
    for (let i = 0; i < 5; i++)
      tails.push(
        new Promise((resolve) => {
          let sawHello: () => void;
          reading.push(new Promise<void>((r) => (sawHello = r)));
          const req = request(`${v.url}api/logs?alloc=${a.id}&task=web`, { agent: false }, (res) => {
            res.setEncoding('utf8');
            res.on('data', (d: string) => d.includes('hello') && sawHello());
            res.on('end', () => resolve(res.statusCode));
          });
          req.on('error', () => resolve(undefined));
          req.end();
        }),
      );
    // Every tail has its file open: each has sent the task's first line.
    await Promise.all(reading);
    await r.destroy();
    const after = deletedFds(client.dataDir);
    expect(after, 'fds on deleted files after destroy').to.deep.equal([]);
    await Promise.all(runs);
    expect(ended).to.have.length(40);
    expect(await Promise.all(tails)).to.deep.equal([200, 200, 200, 200, 200]);
    expect((await stalled.next()).done).to.equal(true);
  });
});
