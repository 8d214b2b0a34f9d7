/**
 * Remote migration against a hostile (or merely careless) peer, and over HTTPS (#10): compression
 * only when declared, the group's ephemeral disk size as a bound, setuid bits removed and said so,
 * TLS with client certificates, tokens compared in constant time.
 */
import { expect } from 'chai';
import crypto from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import { createSnapshotServer, tokenMatches, type SnapshotServer } from '../../../actors/migrate/snapshot-server.ts';
import type { ClientOptions } from '../../../actors/client/types.ts';
import type { Allocation } from '../../../model/types.ts';
import { tarOf } from '../allocdir/helpers.ts';
import { FakeRPC } from '../../support/fake-rpc.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { makeTestPki, type TestPki } from '../../support/test-certs.ts';
import { nextMessage, useTempClients, viewWhere } from '../../support/temp-client.ts';

const PREV = '11111111-2222-3333-4444-555555555555';
const TOKEN = 'hostile-s3cret';

/** A peer that answers the snapshot route with whatever `handler` sends. */
async function hostilePeer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    httpAddr: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function replacement(sizeMB = 300): Allocation {
  return makeAlloc([mockTask('web', { run_for: '10s' })], { previousAllocation: PREV, nodeId: 'node-b', group: { ephemeralDisk: { migrate: true, sizeMB } } });
}

describe('remote migration from a hostile peer (#10)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  async function migrateFrom(handler: (req: IncomingMessage, res: ServerResponse) => void, alloc = replacement(), opts: Partial<ClientOptions> = {}) {
    const peer = await hostilePeer(handler);
    closers.push(peer.close);
    const rpc = new FakeRPC();
    rpc.upsert(makeAlloc([mockTask('web')], { id: PREV, nodeId: 'node-a', clientStatus: 'complete', desiredStatus: 'stop' }));
    rpc.addNode({ id: 'node-a', httpAddr: peer.httpAddr });
    const client = newClient({ rpc, nodeId: 'node-b', retry: { baseMs: 1, staggerMs: 0 }, migrateToken: TOKEN, ...opts });
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === alloc.id);
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === alloc.id);
    const runner = client.addAlloc(alloc);
    const outcome = await Promise.race([done.then((m) => ({ ok: true as const, m })), failed.then((m) => ({ ok: false as const, error: m.error }))]);
    await runner.waitFor('running');
    return { client, runner, outcome };
  }

  const tarBody = (entries: Parameters<typeof tarOf>[0]) => tarOf(entries);

  it('takes a gzip body the response declares (Content-Encoding: gzip, asked for with Accept-Encoding)', async () => {
    let asked: string | undefined;
    const { runner, outcome } = await migrateFrom((req, res) => {
      asked = req.headers['accept-encoding'] as string;
      res.writeHead(200, { 'Content-Type': 'application/x-tar', 'Content-Encoding': 'gzip' });
      res.end(gzipSync(tarBody([{ path: 'alloc/data/f', body: 'zipped data' }])));
    });
    expect(outcome.ok).to.equal(true);
    expect(asked).to.match(/gzip/);
    expect(await readFile(path.join(runner.allocDir.dataDir, 'f'), 'utf8')).to.equal('zipped data');
  });

  it('refuses a gzip body the response does not declare: migration.failed, clean dir', async () => {
    const { runner, outcome } = await migrateFrom((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar' });
      res.end(gzipSync(tarBody([{ path: 'alloc/data/f', body: 'sneaky' }])));
    });
    expect(outcome.ok).to.equal(false);
    expect((outcome as { error: string }).error).to.match(/compressed but was not declared/);
    expect(await import('node:fs/promises').then((fs) => fs.readdir(runner.allocDir.dataDir))).to.deep.equal([]);
  });

  it('caps what a migration writes at the group ephemeral disk size (a 12 MB bomb in 12 KB, sizeMB 10)', async () => {
    let sent = 0;
    const { runner, outcome } = await migrateFrom((_req, res) => {
      const body = gzipSync(tarBody([{ path: 'alloc/data/bomb', body: Buffer.alloc(12 * 1024 * 1024) }]));
      sent = body.length;
      res.writeHead(200, { 'Content-Type': 'application/x-tar', 'Content-Encoding': 'gzip' });
      res.end(body);
    }, replacement(10));
    expect(sent).to.be.lessThan(64 * 1024);
    expect(outcome.ok).to.equal(false);
    expect((outcome as { error: string }).error).to.match(/exceeds 10485760 bytes/);
    expect(await import('node:fs/promises').then((fs) => fs.readdir(runner.allocDir.dataDir))).to.deep.equal([]);
  });

  it('removes setuid/setgid bits and says so in a Task Setup event', async () => {
    const { client, runner, outcome } = await migrateFrom((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar' });
      res.end(tarBody([{ path: 'alloc/data/rootshell', body: '#!/bin/sh\nid -u\n', mode: 0o4755 }]));
    });
    expect(outcome.ok).to.equal(true);
    const st = await stat(path.join(runner.allocDir.dataDir, 'rootshell'));
    expect(st.mode & 0o7777).to.equal(0o755);
    if (process.geteuid?.() === 0) expect(st.uid).to.equal(65534);
    const hasNote = (a: Allocation) => (a.taskStates?.web?.events ?? []).some((e) => e.type === 'Task Setup' && /setuid/.test(e.displayMessage));
    await viewWhere(client, runner, hasNote);
    const events = runner.alloc().taskStates?.web?.events ?? [];
    const setup = events.find((e) => e.type === 'Task Setup' && /setuid/.test(e.displayMessage));
    expect(setup?.displayMessage, JSON.stringify(events)).to.equal('Removed setuid/setgid bits from 1 migrated path: alloc/data/rootshell');
  });

  it("gives each task's migrated local/ to the task's user, alloc/data to nobody (root)", async function () {
    if (process.geteuid?.() !== 0) {
      this.test!.title += ' (skipped: needs root to chown)';
      return this.skip();
    }
    const alloc = makeAlloc([mockTask('web', { run_for: '10s' }, { user: '4242' })], {
      previousAllocation: PREV,
      nodeId: 'node-b',
      group: { ephemeralDisk: { migrate: true } },
    });
    const { runner, outcome } = await migrateFrom((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar' });
      res.end(
        tarBody([
          { path: 'web/local/conf', body: 'c' },
          { path: 'alloc/data/d', body: 'd' },
        ]),
      );
    }, alloc);
    expect(outcome.ok).to.equal(true);
    expect((await stat(path.join(runner.allocDir.dir, 'web', 'local', 'conf'))).uid).to.equal(4242);
    expect((await stat(path.join(runner.allocDir.dataDir, 'd'))).uid).to.equal(65534);
  });

  it('an endless error body is cut after its first 4 KiB, not read to the end', async () => {
    let written = 0;
    let closed = false;
    const { outcome } = await migrateFrom((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'e');
      const pump = () => {
        while (!closed && res.write(chunk)) written += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    expect(outcome.ok).to.equal(false);
    expect((outcome as { error: string }).error).to.match(/unexpected response code: 500 \(e{4096}\)$/);
    expect(written).to.be.lessThan(64 * 1024 * 1024);
  });

  it('refuses an unknown Content-Encoding', async () => {
    const { outcome } = await migrateFrom((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar', 'Content-Encoding': 'br' });
      res.end(Buffer.alloc(10));
    });
    expect(outcome.ok).to.equal(false);
    expect((outcome as { error: string }).error).to.match(/unsupported Content-Encoding "br"/);
  });
});

describe('migrations over HTTPS with client certificates (#10)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();
  let pki: TestPki;
  let pkiDir: string;
  let clientAllocDir: string;
  const servers: SnapshotServer[] = [];
  let prevDir: AllocDir;

  before(async () => {
    pkiDir = mkdtempSync(path.join(os.tmpdir(), 'berth-pki-'));
    pki = await makeTestPki(pkiDir);
    clientAllocDir = mkdtempSync(path.join(os.tmpdir(), 'berth-tls-prev-'));
    prevDir = new AllocDir(clientAllocDir, PREV);
    await prevDir.build();
    await writeFile(path.join(prevDir.dataDir, 'secret.db'), 'over tls');
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  after(async () => {
    await prevDir.destroy();
    rmSync(clientAllocDir, { recursive: true, force: true });
    rmSync(pkiDir, { recursive: true, force: true });
  });

  async function tlsPeer(cert = pki.serverCertFile, key = pki.serverKeyFile) {
    const srv = await createSnapshotServer({
      lookup: (id) => (id === PREV ? prevDir : undefined),
      token: TOKEN,
      tls: { ca: await readFile(pki.caFile), cert: await readFile(cert), key: await readFile(key) },
    });
    servers.push(srv);
    return srv;
  }

  async function migrate(srv: SnapshotServer, tls: ClientOptions['tls']) {
    const rpc = new FakeRPC();
    rpc.upsert(makeAlloc([mockTask('web')], { id: PREV, nodeId: 'node-a', clientStatus: 'complete', desiredStatus: 'stop' }));
    rpc.addNode({ id: 'node-a', httpAddr: `127.0.0.1:${srv.address.port}`, tlsEnabled: true });
    const client = newClient({ rpc, nodeId: 'node-b', retry: { baseMs: 1, staggerMs: 0 }, migrateToken: TOKEN, ...(tls ? { tls } : {}) });
    const alloc = replacement();
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === alloc.id).then(() => 'done');
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === alloc.id).then((m) => m.error);
    const runner = client.addAlloc(alloc);
    const outcome = await Promise.race([done, failed]);
    await runner.waitFor('running');
    return { runner, outcome };
  }

  const clientTls = () => ({ caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile, verifyServerHostname: true });

  it('migrates over HTTPS with the CA, the client certificate and client.global.nomad', async () => {
    const srv = await tlsPeer();
    expect(srv.url).to.match(/^https:/);
    const { runner, outcome } = await migrate(srv, clientTls());
    expect(outcome).to.equal('done');
    expect(await readFile(path.join(runner.allocDir.dataDir, 'secret.db'), 'utf8')).to.equal('over tls');
  });

  it('the server refuses a client without a certificate signed by its CA', async () => {
    const srv = await tlsPeer();
    const { outcome } = await migrate(srv, { ...clientTls(), certFile: pki.strangerCertFile, keyFile: pki.strangerKeyFile });
    expect(outcome).to.match(/error getting snapshot from previous alloc/);
    // And a bare HTTPS client (no certificate at all) gets no answer either.
    const bare = await new Promise<string>((resolve) => {
      const req = httpsRequest(
        `${srv.url}/v1/client/allocation/${PREV}/snapshot`,
        { rejectUnauthorized: false, agent: false, headers: { 'X-Nomad-Token': TOKEN } },
        (res) => resolve(`status ${res.statusCode}`),
      );
      req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.end();
    });
    expect(bare).to.match(/^error /);
  });

  it('with verifyServerHostname the peer certificate must name client.<region>.nomad; without it the CA suffices', async () => {
    const srv = await tlsPeer(pki.otherNameCertFile, pki.otherNameKeyFile);
    const strict = await migrate(srv, clientTls());
    expect(strict.outcome).to.match(/client\.global\.nomad/);
    const lax = await migrate(srv, { ...clientTls(), verifyServerHostname: false });
    expect(lax.outcome).to.equal('done');
  });

  it('Client.serveSnapshots serves HTTPS with ClientOptions.tls and verifies client certificates', async () => {
    const client = newClient({ tls: { caFile: pki.caFile, certFile: pki.serverCertFile, keyFile: pki.serverKeyFile } });
    const srv = await client.serveSnapshots({ token: TOKEN });
    try {
      expect(srv.url).to.match(/^https:\/\/127\.0\.0\.1:/);
      const ask = (cert?: string, key?: string) =>
        new Promise<string>((resolve) => {
          const req = httpsRequest(
            `${srv.url}/v1/client/allocation/${PREV}/snapshot`,
            {
              agent: false,
              ca: readFileSync(pki.caFile),
              servername: 'client.global.nomad',
              ...(cert && key ? { cert: readFileSync(cert), key: readFileSync(key) } : {}),
              headers: { 'X-Nomad-Token': TOKEN },
            },
            (res) => {
              res.resume();
              resolve(`status ${res.statusCode}`);
            },
          );
          req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
          req.end();
        });
      expect(await ask(pki.clientCertFile, pki.clientKeyFile)).to.equal('status 404'); // in, and no such alloc here
      expect(await ask()).to.match(/^error /);
      expect(await ask(pki.strangerCertFile, pki.strangerKeyFile)).to.match(/^error /);
    } finally {
      await srv.close();
    }
  });

  it('a plain client (no tls) cannot talk to the HTTPS peer', async () => {
    const srv = await tlsPeer();
    const { outcome } = await migrate(srv, undefined);
    expect(outcome).to.match(/error getting snapshot from previous alloc/);
  });
});

describe('snapshot token check (#10)', () => {
  /** Records every crypto.timingSafeEqual call (the ESM binding follows after syncBuiltinESMExports). */
  function spyTimingSafeEqual(): { calls: Array<[number, number]>; restore: () => void } {
    const calls: Array<[number, number]> = [];
    const real = crypto.timingSafeEqual;
    crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push([a.byteLength, b.byteLength]);
      return real(a, b);
    };
    syncBuiltinESMExports();
    return {
      calls,
      restore: () => {
        crypto.timingSafeEqual = real;
        syncBuiltinESMExports();
      },
    };
  }

  it('compares in constant time whatever the lengths: one timingSafeEqual over two 32-byte hashes, right told from wrong', () => {
    const spy = spyTimingSafeEqual();
    try {
      const cases: Array<[string, string, boolean]> = [
        ['abc', 'abc', true],
        ['abc', 'abd', false],
        ['a', 'a much longer token', false],
        ['', 'x', false],
        ['x'.repeat(10_000), 'x', false],
      ];
      for (const [given, want, match] of cases) {
        const before = spy.calls.length;
        expect(tokenMatches(given, want), `${given.length} vs ${want.length}`).to.equal(match);
        expect(spy.calls.slice(before), `${given.length} vs ${want.length}`).to.deep.equal([[32, 32]]);
      }
    } finally {
      spy.restore();
    }
  });

  it('the snapshot server compares a token of the wrong length in constant time too (403, one timingSafeEqual)', async () => {
    const srv = await createSnapshotServer({ lookup: () => undefined, token: 'the-right-token' });
    const spy = spyTimingSafeEqual();
    try {
      for (const given of ['x', 'the-right-tokeN', 'much longer than the right token']) {
        const before = spy.calls.length;
        const res = await fetch(`${srv.url}/v1/client/allocation/abc/snapshot`, { headers: { 'X-Nomad-Token': given } });
        await res.body?.cancel();
        expect(res.status, given).to.equal(403);
        expect(spy.calls.slice(before), given).to.deep.equal([[32, 32]]);
      }
    } finally {
      spy.restore();
      await srv.close();
    }
  });
});
