import { expect } from 'chai';
import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AllocDir, restoreSnapshot } from '../../../actors/allocdir/index.ts';
import type { MigrateEnv } from '../../../actors/migrate/env.ts';
import { serveRuntimeSnapshots } from '../../../actors/migrate/serve.ts';
import { createSnapshotServer, type SnapshotServer, type SnapshotServerOptions, type SnapshotServerTls } from '../../../actors/migrate/snapshot-server.ts';
import { firstValueFrom } from 'rxjs';
import { createBus } from '../../../bus/bus.ts';
import { BerthError, SnapshotServerBindError } from '../../../model/errors.ts';
import { makeTestPki, type TestPki } from '../../support/test-certs.ts';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), res }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('snapshot server', () => {
  let client: string;
  let src: AllocDir;
  let srv: SnapshotServer;
  const id = '11111111-2222-3333-4444-555555555555';

  before(async () => {
    client = await mkdtemp(path.join(os.tmpdir(), 'berth-snapsrv-'));
    src = new AllocDir(client, id);
    src.newTaskDir('web');
    await src.build();
    await src.taskDir('web')!.build();
    await writeFile(path.join(src.dataDir, 'db'), 'rows');
    srv = await createSnapshotServer({ lookup: (a) => (a === id ? src : undefined), token: 'secret' });
  });
  after(async () => {
    await srv.close();
    await src.destroy().catch(() => undefined);
    await rm(client, { recursive: true, force: true });
  });

  it('binds 127.0.0.1 on a free port', () => {
    expect(srv.address.host).to.equal('127.0.0.1');
    expect(srv.address.port).to.be.greaterThan(0);
    expect(srv.url).to.equal(`http://127.0.0.1:${srv.address.port}`);
  });

  it('streams the snapshot with the right token; it restores elsewhere', async () => {
    const url = `${srv.url}/v1/client/allocation/${id}/snapshot`;
    const dest = new AllocDir(client, 'dest');
    await dest.build();
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request(url, { headers: { 'X-Nomad-Token': 'secret' } }, resolve)
          .on('error', reject)
          .end(),
      );
      expect(res.statusCode).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/x-tar');
      await restoreSnapshot(res, dest, { prevAllocId: id });
      expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows');
    } finally {
      await dest.destroy();
    }
  });

  it('401 without a token, 403 with a wrong one', async () => {
    const url = `${srv.url}/v1/client/allocation/${id}/snapshot`;
    expect((await get(url)).status).to.equal(401);
    expect((await get(url, { 'X-Nomad-Token': 'nope' })).status).to.equal(403);
  });

  it('404 for an unknown alloc or another path', async () => {
    expect((await get(`${srv.url}/v1/client/allocation/unknown/snapshot`, { 'X-Nomad-Token': 'secret' })).status).to.equal(404);
    expect((await get(`${srv.url}/v1/other`, { 'X-Nomad-Token': 'secret' })).status).to.equal(404);
  });

  it('close() destroys a connection stuck mid-snapshot, and is idempotent', async () => {
    const big = new AllocDir(client, 'big');
    await big.build();
    await writeFile(path.join(big.dataDir, 'blob'), Buffer.alloc(16 * 1024 * 1024));
    let failed: unknown;
    const s2 = await createSnapshotServer({ lookup: () => big, onError: (e) => (failed = e) });
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request(`${s2.url}/v1/client/allocation/big/snapshot`, resolve).on('error', reject).end(),
      );
      res.pause(); // never read: the server's snapshot blocks on backpressure
      const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
      await new Promise((r) => setImmediate(r));
      await Promise.all([s2.close(), s2.close()]);
      await gone;
      expect(s2.server.listening).to.equal(false);
      // The aborted snapshot settles (its lock is released: destroy can proceed).
      await big.destroy();
      expect(failed).to.be.instanceOf(Error);
    } finally {
      await s2.close();
    }
  });

  it('beyond loopback it needs a token, TLS or an explicit trustedNetwork: any peer could read every alloc', async () => {
    for (const host of ['0.0.0.0', '::']) {
      try {
        const open = await createSnapshotServer({ lookup: () => undefined, host });
        await open.close();
        expect.fail(`listened on ${host} with nothing to authenticate peers`);
      } catch (e) {
        expect(e).to.be.instanceOf(SnapshotServerBindError);
        expect((e as Error).message)
          .to.match(/token/)
          .and.match(/trustedNetwork/);
      }
    }
    // Loopback spelled any way needs nothing; a token or the explicit trust lets it bind.
    for (const opts of [{ host: '127.000.000.001' }, { host: '0.0.0.0', token: 't' }, { host: '0.0.0.0', trustedNetwork: true }]) {
      const s3 = await createSnapshotServer({ lookup: () => undefined, ...opts });
      await s3.close();
    }
  });
});

/** A request with any method and headers; resolves with status, headers and body text, or the error code. */
function ask(url: string, opts: HttpsRequestOptions = {}): Promise<{ status?: number; headers?: IncomingMessage['headers']; body?: string; error?: string }> {
  const send = url.startsWith('https:') ? httpsRequest : request;
  return new Promise((resolve) => {
    const req = send(url, { agent: false, ...opts }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: res.statusCode!, error: e.code ?? e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

describe('snapshot server: what a hostile peer meets', function () {
  this.timeout(20_000);
  const ID = 'alloc-1';
  const servers: SnapshotServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  /** A server whose lookup records what it was asked for and snapshots a fixed body. */
  const serve = async (opts: Partial<SnapshotServerOptions> = {}) => {
    const asked: string[] = [];
    const srv = await createSnapshotServer({
      lookup: (id) => {
        asked.push(id);
        return id === ID ? { snapshot: async (out) => void out.end('tar bytes') } : undefined;
      },
      ...opts,
    });
    servers.push(srv);
    return { srv, asked, route: `${srv.url}/v1/client/allocation/${ID}/snapshot` };
  };
  const plain = (r: { headers?: IncomingMessage['headers']; body?: string }) => {
    expect(r.headers?.['content-type']).to.equal('text/plain; charset=utf-8');
    expect(r.headers?.['content-length']).to.equal(String(Buffer.byteLength(r.body ?? '')));
  };

  it('the token is checked before anything is looked up: 401 missing or empty, 403 wrong (any length), with what to fix', async () => {
    const { srv, asked, route } = await serve({ token: 'the-token' });
    for (const headers of [{}, { 'X-Nomad-Token': '' }]) {
      const r = await ask(route, { headers });
      expect(r).to.include({ status: 401, body: 'Missing X-Nomad-Token\n' });
      plain(r);
    }
    for (const given of ['the-toke', 'the-tokenX', 'THE-TOKEN', 'x'.repeat(5000)]) {
      const r = await ask(route, { headers: { 'X-Nomad-Token': given } });
      expect(r, given.slice(0, 10)).to.include({ status: 403, body: 'Permission denied\n' });
      plain(r);
    }
    // An unknown alloc with a wrong token is a 403 too: no peer learns which allocs exist.
    expect((await ask(`${srv.url}/v1/client/allocation/nope/snapshot`, { headers: { 'X-Nomad-Token': 'wrong' } })).status).to.equal(403);
    expect(asked, 'lookup never reached').to.deep.equal([]);
    const ok = await ask(route, { headers: { 'X-Nomad-Token': 'the-token' } });
    expect(ok).to.include({ status: 200, body: 'tar bytes' });
    expect(ok.headers?.['content-type']).to.equal('application/x-tar');
    expect(asked).to.deep.equal([ID]);
  });

  it('without a token no header is needed; the route, the method and the id are checked, each with its status', async () => {
    const { srv, asked, route } = await serve();
    expect(await ask(route)).to.include({ status: 200, body: 'tar bytes' });
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD']) {
      const r = await ask(route, { method });
      expect(r.status, method).to.equal(405);
      expect(r.headers?.allow, method).to.equal('GET');
      if (method !== 'HEAD') expect(r.body, method).to.equal('Method not allowed\n');
    }
    // Not the route: 404 whatever the method.
    for (const p of [
      '/',
      '/v1/client/allocation/x',
      '/v1/client/allocation//snapshot',
      '/v1/client/allocation/a/b/snapshot',
      `/x/v1/client/allocation/${ID}/snapshot`,
      `/v1/client/allocation/${ID}/snapshot/`,
    ]) {
      const r = await ask(`${srv.url}${p}`, { method: 'POST' });
      expect(r, p).to.include({ status: 404, body: 'Not found\n' });
    }
    // The id is percent-decoded before the lookup; a malformed one is a 400.
    expect((await ask(`${srv.url}/v1/client/allocation/alloc%2D1/snapshot`)).status).to.equal(200);
    const bad = await ask(`${srv.url}/v1/client/allocation/%E0%A4%A/snapshot`);
    expect(bad).to.include({ status: 400, body: 'Bad allocation id\n' });
    plain(bad);
    const unknown = await ask(`${srv.url}/v1/client/allocation/a%20b/snapshot?x=1`);
    expect(unknown).to.include({ status: 404, body: 'Unknown allocation "a b"\n' });
    expect(asked).to.deep.equal([ID, ID, 'a b']);
  });

  it('a lookup that throws is a 500 with its message; a snapshot that fails is reported and the connection cut', async () => {
    const failures: Array<[string, string]> = [];
    const srv = await createSnapshotServer({
      lookup: (id) => {
        if (id === 'boom') throw new Error('registry broke');
        return { snapshot: async () => Promise.reject(new Error(`disk gone under ${id}`)) };
      },
      onError: (err, id) => failures.push([id, (err as Error).message]),
    });
    servers.push(srv);
    expect(await ask(`${srv.url}/v1/client/allocation/boom/snapshot`)).to.include({ status: 500, body: 'registry broke\n' });
    const cut = await ask(`${srv.url}/v1/client/allocation/a2/snapshot`);
    expect(cut.status === undefined || cut.error !== undefined, JSON.stringify(cut)).to.equal(true);
    expect(failures).to.deep.equal([['a2', 'disk gone under a2']]);
    // Without onError a failed snapshot still only cuts that connection.
    const quiet = await createSnapshotServer({ lookup: () => ({ snapshot: async () => Promise.reject(new Error('x')) }) });
    servers.push(quiet);
    const r = await ask(`${quiet.url}/v1/client/allocation/a/snapshot`);
    expect(r.status === undefined || r.error !== undefined).to.equal(true);
    expect(quiet.server.listening).to.equal(true);
  });

  it('a server error after it listens is not swallowed by the listen step (no stale handler left)', async () => {
    const srv = await createSnapshotServer({ lookup: () => undefined });
    servers.push(srv);
    expect(() => srv.server.emit('error', new Error('accept failed'))).to.throw('accept failed');
  });

  it('a snapshot that throws at once after the headers cuts the connection; one failing after its whole body keeps the body', async () => {
    const failures: string[] = [];
    const body = Buffer.alloc(4 << 20, 1); // more than the socket takes at once: still queued when it fails
    const srv = await createSnapshotServer({
      lookup: (id) =>
        id === 'sync'
          ? {
              snapshot: () => {
                throw new Error('thrown, not rejected');
              },
            }
          : {
              snapshot: async (out) => {
                out.end(body);
                throw new Error('failed after the end');
              },
            },
      onError: (err) => failures.push((err as Error).message),
    });
    servers.push(srv);
    const cut = await ask(`${srv.url}/v1/client/allocation/sync/snapshot`);
    expect(cut.error !== undefined || cut.body === '', JSON.stringify(cut).slice(0, 200)).to.equal(true);
    expect(srv.server.listening).to.equal(true);
    const whole = await ask(`${srv.url}/v1/client/allocation/late/snapshot`);
    expect(whole.status).to.equal(200);
    expect(whole.error).to.equal(undefined);
    expect(whole.body?.length).to.equal(body.length);
    expect(failures).to.deep.equal(['failed after the end']);
  });

  it('names its address: IPv6 in brackets; a port in use is an error, not a hang', async () => {
    const { srv } = await serve({ host: '::1' });
    expect(srv.address.host).to.equal('::1');
    expect(srv.url).to.equal(`http://[::1]:${srv.address.port}`);
    expect((await ask(`${srv.url}/v1/client/allocation/${ID}/snapshot`)).status).to.equal(200);
    let err: unknown;
    await createSnapshotServer({ lookup: () => undefined, host: '::1', port: srv.address.port }).catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException)?.code).to.equal('EADDRINUSE');
    // The bind refusal names the host and what would let it listen.
    await createSnapshotServer({ lookup: () => undefined, host: '10.1.2.3' }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(SnapshotServerBindError);
    expect((err as Error).message).to.match(/^snapshot server: refusing to listen on 10\.1\.2\.3 without a token or TLS/);
    expect((err as Error).message).to.match(/trustedNetwork: true if only trusted peers can reach 10\.1\.2\.3$/);
  });

  describe('over TLS', () => {
    let pkiDir: string;
    let pki: TestPki;
    let tls: SnapshotServerTls;
    before(async () => {
      pkiDir = await mkdtemp(path.join(os.tmpdir(), 'berth-snapsrv-pki-'));
      pki = await makeTestPki(pkiDir);
      tls = { ca: await readFile(pki.caFile), cert: await readFile(pki.serverCertFile), key: await readFile(pki.serverKeyFile) };
    });
    after(() => rm(pkiDir, { recursive: true, force: true }));

    it('serves https only to clients with a certificate of its CA; TLS alone lets it bind beyond loopback', async () => {
      const { srv } = await serve({ tls, host: '0.0.0.0' });
      expect(srv.url).to.equal(`https://0.0.0.0:${srv.address.port}`);
      const route = `https://127.0.0.1:${srv.address.port}/v1/client/allocation/${ID}/snapshot`;
      const ca = await readFile(pki.caFile);
      const mine = { cert: await readFile(pki.clientCertFile), key: await readFile(pki.clientKeyFile) };
      const stranger = { cert: await readFile(pki.strangerCertFile), key: await readFile(pki.strangerKeyFile) };
      expect(await ask(route, { ca, servername: 'client.global.nomad', ...mine })).to.include({ status: 200, body: 'tar bytes' });
      for (const [what, extra] of [
        ['no certificate', {}],
        ['a stranger CA', stranger],
      ] as const) {
        const r = await ask(route, { ca, servername: 'client.global.nomad', ...extra });
        expect(r.status, what).to.equal(undefined);
        expect(r.error, what).to.be.a('string');
      }
      // Plain HTTP to the TLS port gets no snapshot.
      const r = await ask(`http://127.0.0.1:${srv.address.port}/v1/client/allocation/${ID}/snapshot`);
      expect(r.status === 200 && r.body === 'tar bytes').to.equal(false);
    });

    it('serveRuntimeSnapshots reads the TLS files (a missing one is a named error) or serves plain with tls: false', async () => {
      const bus = createBus();
      const registry = new Map();
      const rt = { bus, registry, tls: { caFile: pki.caFile, certFile: pki.serverCertFile, keyFile: pki.serverKeyFile } } as unknown as MigrateEnv;
      const https = await serveRuntimeSnapshots(rt, { token: 't', host: '127.0.0.1' });
      servers.push(https);
      expect(https.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      const plainSrv = await serveRuntimeSnapshots(rt, { tls: false, token: 't' });
      servers.push(plainSrv);
      expect(plainSrv.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await ask(`${plainSrv.url}/v1/client/allocation/x/snapshot`)).to.include({ status: 401 });
      let err: unknown;
      await serveRuntimeSnapshots(rt, { tls: { caFile: pki.caFile, certFile: path.join(pkiDir, 'missing.pem'), keyFile: pki.serverKeyFile } }).catch(
        (e) => (err = e),
      );
      expect(err).to.be.instanceOf(BerthError);
      expect((err as Error).message).to.match(/^cannot read TLS files: .*missing\.pem/);
      expect(((err as Error).cause as NodeJS.ErrnoException).code).to.equal('ENOENT');
      bus.close();
    });
  });

  it('serveRuntimeSnapshots: only allocs not being destroyed, each copy held in copiesOut, failures on the bus', async () => {
    const bus = createBus();
    const errors: string[] = [];
    bus.of('client.error').subscribe((m) => errors.push(`${m.allocId}: ${m.error}`));
    let release!: () => void;
    const copiesOut = new Set<Promise<unknown>>();
    const live = {
      copiesOut,
      destroySignal: new AbortController().signal,
      allocDir: {
        snapshot: (out: NodeJS.WritableStream) =>
          new Promise<void>((resolve) => {
            out.write('part');
            release = () => {
              out.end();
              resolve();
            };
          }),
      },
    };
    const dying = new AbortController();
    dying.abort();
    const registry = new Map<string, unknown>([
      ['live', live],
      ['dying', { ...live, destroySignal: dying.signal }],
      ['broken', { ...live, copiesOut: new Set(), allocDir: { snapshot: () => Promise.reject(new Error('walk failed')) } }],
    ]);
    const srv = await serveRuntimeSnapshots({ bus, registry } as unknown as MigrateEnv, { token: 'tok' });
    servers.push(srv);
    // Host, port and trustedNetwork reach the server: beyond loopback without a token it refuses,
    // unless told the network is trusted; the port asked for is the port bound.
    let err: unknown;
    await serveRuntimeSnapshots({ bus, registry } as unknown as MigrateEnv, { host: '0.0.0.0' }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(SnapshotServerBindError);
    const trusted = await serveRuntimeSnapshots({ bus, registry } as unknown as MigrateEnv, { host: '0.0.0.0', trustedNetwork: true });
    servers.push(trusted);
    expect(trusted.address.host).to.equal('0.0.0.0');
    err = undefined;
    await serveRuntimeSnapshots({ bus, registry } as unknown as MigrateEnv, { port: srv.address.port }).catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException)?.code).to.equal('EADDRINUSE');
    const headers = { 'X-Nomad-Token': 'tok' };
    expect(await ask(`${srv.url}/v1/client/allocation/dying/snapshot`, { headers })).to.include({ status: 404 });
    expect(await ask(`${srv.url}/v1/client/allocation/none/snapshot`, { headers })).to.include({ status: 404 });
    const got = ask(`${srv.url}/v1/client/allocation/live/snapshot`, { headers });
    while (!release) await new Promise((r) => setImmediate(r));
    expect(copiesOut.size, 'the copy is in flight').to.equal(1);
    release();
    expect(await got).to.include({ status: 200, body: 'part' });
    await Promise.all(copiesOut);
    await new Promise((r) => setImmediate(r));
    expect(copiesOut.size).to.equal(0);
    const reported = firstValueFrom(bus.of('client.error'));
    await ask(`${srv.url}/v1/client/allocation/broken/snapshot`, { headers });
    await reported;
    expect(errors).to.deep.equal(['broken: snapshot of allocation broken failed: walk failed']);
    bus.close();
  });
});
