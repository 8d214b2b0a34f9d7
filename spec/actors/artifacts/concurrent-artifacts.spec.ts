/**
 * A task's artifacts are fetched three at a time, as Nomad's artifact hook (3 workers), over
 * loopback HTTP with no timing: the server holds its answers until it has seen three requests in
 * flight (a fetch one at a time would never get there), a fourth request comes only once a fetch
 * finished, a failure aborts the fetches still in flight and names its artifact, a cancel leaves
 * the tree as it was. Through a client: the task events, and a restart that fetches only what
 * failed (the hook state).
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { ARTIFACT_WORKERS, fetchArtifacts } from '../../../actors/artifacts/fetch-all.ts';
import { ArtifactDownloadError, ArtifactFetchError } from '../../../actors/artifacts/errors.ts';
import type { FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { RwLock } from '../../../actors/allocdir/lock.ts';
import type { Artifact } from '../../../model/types.ts';
import { tempDirs } from '../allocdir/helpers.ts';
import { fingerprint } from '../allocdir/tree.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

/** One request the server has: its path, its answer to come, whether it was cut before an answer. */
interface Held {
  path: string;
  res: http.ServerResponse;
  cut: boolean;
}

/** A loopback HTTP server that hands each request to `onRequest` (which may hold it). */
async function loopback(onRequest: (h: Held, all: Held[]) => void) {
  const all: Held[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const h: Held = { path: req.url!, res, cut: false };
    res.on('close', () => (h.cut = !res.writableFinished));
    all.push(h);
    onRequest(h, all);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url,
    all,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Answers `h` with its file's text (`/a.txt` is "body of a.txt"). */
const answer = (h: Held) => h.res.end(`body of ${h.path.slice(1)}`);

/** Resolves once `cond` holds, looking again after each turn of the event loop. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

describe('artifacts: a task fetches its artifacts three at a time', function () {
  this.timeout(20_000);
  const tmp = tempDirs();
  let root: string;
  let taskDir: string;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    await tmp.cleanup();
  });
  beforeEach(async () => {
    root = await tmp.make('berth-artifacts-');
    taskDir = path.join(root, 'alloc', 'task');
    await mkdir(path.join(taskDir, 'local'), { recursive: true });
  });

  const ctx = (signal = new AbortController().signal): FetchArtifactContext => ({
    dest: { dir: taskDir, allocId: 'a1', built: true, lock: new RwLock() },
    env: {},
    maxBytes: 1024 * 1024,
    timeoutMs: 60_000,
    signal,
  });
  const artifacts = (url: string, names: string[]): Artifact[] => names.map((n) => ({ source: `${url}/${n}` }));
  /** The temp dirs of fetches in progress, beside the task dir. */
  const tempsLeft = async () => (await readdir(path.dirname(taskDir))).filter((n) => n.startsWith('.artifact-'));

  it('three requests are in flight at once before any answer; the fourth starts only once one of them is fetched', async () => {
    expect(ARTIFACT_WORKERS).to.equal(3);
    const fetched: string[] = [];
    /** At each request's arrival: fetches started and not yet done, and what was fetched by then. */
    const atArrival: Array<{ path: string; inFlight: number; fetched: string[] }> = [];
    const srv = await loopback((h, all) => {
      atArrival.push({ path: h.path, inFlight: all.length - fetched.length, fetched: [...fetched] });
      if (all.length === 3) answer(all[0]!); // three held at once: let the first go
      if (all.length === 4) for (const x of all.slice(1)) answer(x);
    });
    closers.push(srv.close);
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    await fetchArtifacts(artifacts(srv.url, names), ctx(), { onFetched: (a) => fetched.push(new URL(a.source).pathname) });
    expect(atArrival.map((x) => x.inFlight)).to.deep.equal([1, 2, 3, 3]);
    // The first three are a, b and c in some order; the fourth is d, after the first answered one was in place.
    expect(atArrival.slice(0, 3).map((x) => x.path)).to.have.members(['/a.txt', '/b.txt', '/c.txt']);
    expect(atArrival[3]).to.deep.equal({ path: '/d.txt', inFlight: 3, fetched: [srv.all[0]!.path] });
    for (const n of names) expect(await readFile(path.join(taskDir, 'local', n), 'utf8')).to.equal(`body of ${n}`);
    expect(fetched).to.have.members(names.map((n) => `/${n}`));
    expect(await tempsLeft()).to.deep.equal([]);
  });

  it('one failing (404) aborts the two in flight, the fourth never starts, and the error names the failed artifact', async () => {
    const srv = await loopback((h, all) => {
      // a and b are never answered: only the abort can end them.
      if (all.length === 3)
        all
          .find((x) => x.path === '/c.txt')!
          .res.writeHead(404)
          .end();
    });
    closers.push(srv.close);
    const before = await fingerprint(root);
    const err = await fetchArtifacts(artifacts(srv.url, ['a.txt', 'b.txt', 'c.txt', 'd.txt']), ctx()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ArtifactFetchError);
    const e = err as ArtifactFetchError;
    expect(e.artifact.source).to.equal(`${srv.url}/c.txt`);
    expect(e.message).to.equal(`failed to download artifact "${srv.url}/c.txt": bad response code: 404`);
    expect(e.cause).to.be.instanceOf(ArtifactDownloadError);
    // Returned only after the others settled: their requests were cut, d was never asked for.
    await until(() => srv.all.filter((x) => x.cut).length === 2);
    expect(srv.all.filter((x) => x.cut).map((x) => x.path)).to.have.members(['/a.txt', '/b.txt']);
    expect(srv.all.map((x) => x.path)).to.not.include('/d.txt');
    expect(await fingerprint(root)).to.deep.equal(before);
  });

  it('a cancel while three are half-sent ends all three and leaves the tree as it was', async () => {
    const ac = new AbortController();
    let halfSent = 0;
    const srv = await loopback((h) => {
      // Headers and half the body of each, then nothing more.
      h.res.writeHead(200, { 'content-length': '1000' });
      h.res.write('x'.repeat(500), () => {
        halfSent++;
      });
    });
    closers.push(srv.close);
    const before = await fingerprint(root);
    const pending = fetchArtifacts(artifacts(srv.url, ['a.bin', 'b.bin', 'c.bin', 'd.bin']), ctx(ac.signal)).then(
      () => undefined,
      (e: unknown) => e,
    );
    await until(() => halfSent === 3);
    // Each of the three has its temp dir (its download under way) beside the task dir.
    expect(await tempsLeft()).to.have.length(3);
    ac.abort(new Error('stopped'));
    const err = await pending;
    expect(err).to.be.instanceOf(ArtifactFetchError);
    expect((err as Error).message).to.match(/^failed to download artifact "http:\/\/127\.0\.0\.1:\d+\/[abc]\.bin": /);
    expect(await tempsLeft()).to.deep.equal([]);
    expect(await fingerprint(root)).to.deep.equal(before);
    await until(() => srv.all.every((x) => x.cut));
    expect(srv.all.map((x) => x.path)).to.have.members(['/a.bin', '/b.bin', '/c.bin']);
  });

  it('a cancel before any fetch starts fetches nothing', async () => {
    const srv = await loopback(answer);
    closers.push(srv.close);
    const ac = new AbortController();
    ac.abort(new Error('stopped'));
    const err = await fetchArtifacts(artifacts(srv.url, ['a.txt']), ctx(ac.signal)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ArtifactFetchError);
    expect((err as Error).message).to.equal(`failed to download artifact "${srv.url}/a.txt": stopped`);
    expect(srv.all).to.deep.equal([]);
  });

  describe('through a client', () => {
    const newClient = useTempClients();

    it('"Downloading Artifacts", "Failed Artifact Download" naming the one that failed, and the restart fetches only that one', async () => {
      let allocDir = '';
      const srv = await loopback((h, all) => {
        if (h.path === '/good.txt') return answer(h);
        // The first /bad.txt fails once good.txt is in place (so its fetch is recorded); the retry works.
        if (all.filter((x) => x.path === '/bad.txt').length > 1) return answer(h);
        void until(() => existsSync(path.join(allocDir, 'fetcher', 'local', 'good.txt'))).then(() => h.res.writeHead(404).end());
      });
      closers.push(srv.close);
      const client = newClient();
      const restartPolicy = { attempts: 1, intervalMs: 600_000, delayMs: 0, mode: 'fail' as const };
      const alloc = makeAlloc(
        [
          {
            name: 'fetcher',
            driver: 'raw_exec',
            config: { command: 'sh', args: ['-c', 'cat "$NOMAD_TASK_DIR/good.txt" "$NOMAD_TASK_DIR/bad.txt"'] },
            artifacts: [{ source: `${srv.url}/good.txt` }, { source: `${srv.url}/bad.txt` }],
          },
        ],
        { jobType: 'batch', group: { restartPolicy } },
      );
      const r = client.addAlloc(alloc);
      allocDir = r.allocDir.dir;
      await viewWhere(client, r, (a) => a.taskStates?.fetcher?.state === 'dead');
      const st = r.alloc().taskStates!.fetcher!;
      expect(st.failed).to.equal(false);
      const types = st.events.map((e) => e.type);
      expect(types.filter((t) => t === 'Downloading Artifacts')).to.have.length(2);
      const failed = st.events.filter((e) => e.type === 'Failed Artifact Download');
      expect(failed.map((e) => e.displayMessage)).to.deep.equal([`failed to download artifact "${srv.url}/bad.txt": bad response code: 404`]);
      expect(types.indexOf('Failed Artifact Download')).to.be.lessThan(types.indexOf('Restarting'));
      expect(types.lastIndexOf('Downloading Artifacts')).to.be.lessThan(types.indexOf('Started'));
      // good.txt once (recorded when it was in place), bad.txt twice.
      expect(srv.all.map((x) => x.path).sort()).to.deep.equal(['/bad.txt', '/bad.txt', '/good.txt']);
      expect(await readFile(path.join(allocDir, 'fetcher', 'local', 'bad.txt'), 'utf8')).to.equal('body of bad.txt');
    });
  });
});
