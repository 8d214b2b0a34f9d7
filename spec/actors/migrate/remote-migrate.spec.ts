/**
 * remoteMigrate without a client: a real alloc dir and temp dir, a peer on loopback, the node
 * lookup faked. Which token goes out, which TLS name is checked, how much may be written, the
 * temp dir gone whatever happens, and the Task Setup note about stripped setuid bits.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import type { MigrateEnv, MigrationTarget } from '../../../actors/migrate/env.ts';
import { MIGRATE_TMP_DIR, remoteMigrate } from '../../../actors/migrate/remote-stream.ts';
import { createBus } from '../../../bus/bus.ts';
import { realClock } from '../../../model/clock.ts';
import { BerthError, SnapshotLimitError } from '../../../model/errors.ts';
import type { TaskEvent } from '../../../model/types.ts';
import { FakeRPC } from '../../support/fake-rpc.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { makeTestPki, type TestPki } from '../../support/test-certs.ts';
import { tarOf, type TarEntry } from '../allocdir/helpers.ts';

const PREV = 'prev-alloc';

describe('remoteMigrate: token, TLS name, bound, temp dir and notes', function () {
  this.timeout(20_000);
  let root: string;
  let pkiDir: string;
  let pki: TestPki;
  const servers: Server[] = [];
  before(async () => {
    pkiDir = await mkdtemp(path.join(os.tmpdir(), 'berth-rm-pki-'));
    pki = await makeTestPki(pkiDir);
  });
  after(() => rm(pkiDir, { recursive: true, force: true }));
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berth-remote-migrate-'));
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await rm(root, { recursive: true, force: true });
  });

  /** A peer serving `tar`; the requests it saw are kept. */
  const peer = async (tar: Buffer, tls = false) => {
    const seen: IncomingMessage[] = [];
    const server = tls
      ? createHttpsServer({
          ca: await readFile(pki.caFile),
          cert: await readFile(pki.serverCertFile),
          key: await readFile(pki.serverKeyFile),
          requestCert: true,
          rejectUnauthorized: true,
        })
      : createServer();
    server.on('request', (req, res) => {
      seen.push(req);
      res.end(tar);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { httpAddr: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  };

  /** The env and target of one migration into a freshly built alloc dir. */
  const setup = async (
    httpAddr: string,
    o: { envToken?: string; allocToken?: string; region?: string; sizeMB?: number; tls?: boolean; tlsEnabled?: boolean } = {},
  ) => {
    const rpc = new FakeRPC();
    rpc.addNode({ id: 'node-a', httpAddr, tlsEnabled: o.tlsEnabled ?? o.tls ?? false });
    const clientAllocDir = path.join(root, 'alloc');
    await mkdir(clientAllocDir);
    const tasks = [mockTask('web'), mockTask('db')];
    const alloc = makeAlloc(tasks, {
      group: o.sizeMB !== undefined ? { ephemeralDisk: { migrate: true, sizeMB: o.sizeMB } } : {},
      ...(o.allocToken ? { migrateToken: o.allocToken } : {}),
    });
    if (o.region) alloc.job.region = o.region;
    const dir = new AllocDir(clientAllocDir, alloc.id);
    for (const t of tasks) dir.newTaskDir(t.name);
    await dir.build();
    const bus = createBus();
    const rt = {
      bus,
      clock: realClock,
      random: () => 0,
      clientAllocDir,
      migrateTimeoutMs: 10_000,
      rpc,
      retry: { baseMs: 1, staggerMs: 0 },
      registry: new Map(),
      ...(o.envToken ? { migrateToken: o.envToken } : {}),
      ...(o.tls ? { tls: { caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile } } : {}),
    } as MigrateEnv;
    const setupNotes = new Map<string, TaskEvent[]>([['web', [{ type: 'Earlier' } as TaskEvent]]]);
    const r = {
      allocId: alloc.id,
      allocDir: dir,
      group: alloc.job.taskGroups[0]!,
      serverAlloc: () => alloc,
      copiesOut: new Set(),
      destroySignal: new AbortController().signal,
      setupNotes,
    } as unknown as MigrationTarget;
    const run = () => remoteMigrate(rt, r, PREV, 'node-a', new AbortController().signal);
    const tempRoot = path.join(clientAllocDir, MIGRATE_TMP_DIR, PREV);
    return { rt, r, dir, run, tempRoot, setupNotes, bus, clientAllocDir };
  };
  const snapshot = (...entries: TarEntry[]) => tarOf([{ path: 'alloc/data', type: 'Directory' }, ...entries]);
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => expect.fail('it did not fail'),
      (e: Error) => e,
    );

  it("sends the alloc's own migrate token, else the client's, else none; moves the data in and removes the temp dir", async () => {
    const tar = snapshot({ path: 'alloc/data/db', body: 'rows' }, { path: 'web/local/conf', body: 'c' });
    const p = await peer(tar);
    const both = await setup(p.httpAddr, { envToken: 'client-token', allocToken: 'alloc-token' });
    expect(await both.run()).to.equal(tar.length);
    expect(await readFile(path.join(both.dir.dataDir, 'db'), 'utf8')).to.equal('rows');
    expect(await readFile(path.join(both.dir.dir, 'web', 'local', 'conf'), 'utf8')).to.equal('c');
    expect(existsSync(both.tempRoot), 'temp dir removed').to.equal(false);
    expect(await readdir(path.join(both.clientAllocDir, MIGRATE_TMP_DIR))).to.deep.equal([]);
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const clientOnly = await setup(p.httpAddr, { envToken: 'client-token' });
    await clientOnly.run();
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const none = await setup(p.httpAddr);
    await none.run();
    expect(p.seen.map((q) => q.headers['x-nomad-token'])).to.deep.equal(['alloc-token', 'client-token', undefined]);
    expect(p.seen[0]!.url).to.equal(`/v1/client/allocation/${PREV}/snapshot`);
    // No setuid bits removed: no note added.
    expect(none.setupNotes.get('web')).to.have.length(1);
    expect(none.setupNotes.has('db')).to.equal(false);
  });

  it('leftovers of an earlier attempt are cleared first, and the temp dir goes after', async () => {
    const p = await peer(snapshot({ path: 'alloc/data/new', body: 'n' }));
    const m = await setup(p.httpAddr);
    const leftover = path.join(m.tempRoot, m.r.allocId, 'alloc', 'data');
    await mkdir(leftover, { recursive: true });
    await writeFile(path.join(leftover, 'stale'), 'from a crash');
    await m.run();
    expect((await readdir(m.dir.dataDir)).sort()).to.deep.equal(['new']);
    expect(existsSync(m.tempRoot)).to.equal(false);
  });

  it("bounds what it writes by the group's ephemeral disk size", async () => {
    const p = await peer(snapshot({ path: 'alloc/data/big', body: Buffer.alloc(1024 * 1024 + 1) }));
    const m = await setup(p.httpAddr, { sizeMB: 1 });
    const err = await failure(m.run());
    expect(err).to.be.instanceOf(SnapshotLimitError);
    expect(err.message).to.equal(`snapshot exceeds ${1024 * 1024} bytes (the ephemeral disk size) at alloc/data/big`);
    expect(await readdir(m.dir.dataDir)).to.deep.equal([]);
    expect(existsSync(m.tempRoot)).to.equal(false);
  });

  it('tells every task which migrated paths lost setuid/setgid: all of one, or the first five and a count', async () => {
    const one = await peer(snapshot({ path: 'alloc/data/s', body: 'x', mode: 0o4755 }));
    const m1 = await setup(one.httpAddr);
    await m1.run();
    const note = (m: typeof m1, task: string) => m.setupNotes.get(task)!.at(-1)!;
    expect(note(m1, 'web')).to.deep.include({ type: 'Task Setup' });
    expect(note(m1, 'web').message).to.equal('Removed setuid/setgid bits from 1 migrated path: alloc/data/s');
    expect(m1.setupNotes.get('web')).to.have.length(2);
    expect(m1.setupNotes.get('db')).to.have.length(1);
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const seven = await peer(snapshot(...names.map((n) => ({ path: `alloc/data/${n}`, body: 'x', mode: 0o2755 }))));
    const m7 = await setup(seven.httpAddr);
    await m7.run();
    expect(note(m7, 'db').message).to.equal(
      'Removed setuid/setgid bits from 7 migrated paths: alloc/data/a, alloc/data/b, alloc/data/c, alloc/data/d, alloc/data/e, and 2 more',
    );
    const five = names.slice(0, 5);
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const p5 = await peer(snapshot(...five.map((n) => ({ path: `alloc/data/${n}`, body: 'x', mode: 0o4700 }))));
    const m5 = await setup(p5.httpAddr);
    await m5.run();
    expect(note(m5, 'web').message).to.equal(
      'Removed setuid/setgid bits from 5 migrated paths: alloc/data/a, alloc/data/b, alloc/data/c, alloc/data/d, alloc/data/e',
    );
  });

  it("over HTTPS checks the peer's name against client.<the job's region>.nomad, with the client's certificate", async () => {
    const p = await peer(snapshot({ path: 'alloc/data/t', body: 'tls' }), true);
    const global = await setup(p.httpAddr, { tls: true });
    await global.run();
    expect(await readFile(path.join(global.dir.dataDir, 't'), 'utf8')).to.equal('tls');
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    // The test certificate names client.global.nomad: a job in region eu expects client.eu.nomad.
    const eu = await setup(p.httpAddr, { tls: true, region: 'eu' });
    const err = await failure(eu.run());
    expect(err).to.be.instanceOf(BerthError);
    expect(err.message).to.match(/client\.eu\.nomad/);
    expect(existsSync(eu.tempRoot)).to.equal(false);
    // A node that says TLS while the client has none: the peer is not trusted.
    await rm(root, { recursive: true, force: true });
    await mkdir(root);
    const plain = await setup(p.httpAddr, { tlsEnabled: true });
    expect(await failure(plain.run())).to.be.instanceOf(BerthError);
  });

  it('a temp dir that cannot be built is an error naming the previous alloc, with its cause; a removal that fails is reported', async () => {
    const p = await peer(snapshot({ path: 'alloc/data/db', body: 'rows' }));
    const m = await setup(p.httpAddr);
    await writeFile(path.join(m.clientAllocDir, MIGRATE_TMP_DIR), 'a file where the temp dirs go');
    const errors: Array<{ allocId?: string; error: string }> = [];
    const sub = m.bus.of('client.error').subscribe((e) => errors.push(e));
    const err = await failure(m.run());
    sub.unsubscribe();
    expect(err).to.be.instanceOf(BerthError);
    expect(err.message).to.match(new RegExp(`^error building alloc dir for previous alloc "${PREV}": `));
    expect(err.message).to.include('ENOTDIR');
    expect(err.cause).to.be.instanceOf(Error);
    expect(err.message.endsWith((err.cause as Error).message.split('\n').at(-1)!)).to.equal(true);
    expect(p.seen).to.have.length(0);
    // The removal in the end fails the same way: not thrown over the first error, but told.
    const tmpDir = path.join(m.tempRoot, m.r.allocId);
    expect(errors.map((e) => e.allocId)).to.deep.equal([m.r.allocId]);
    expect(errors[0]!.error.startsWith(`failed to remove temporary migration dir ${JSON.stringify(tmpDir)}: `), errors[0]!.error).to.equal(true);
    expect(errors[0]!.error).to.include('ENOTDIR');
  });

  it('without a server RPC it says why it cannot find the node', async () => {
    const m = await setup('127.0.0.1:1');
    const err = await failure(remoteMigrate({ ...m.rt, rpc: undefined }, m.r, PREV, 'node-a', new AbortController().signal));
    expect(err).to.be.instanceOf(BerthError);
    expect(err.message).to.equal(`cannot migrate previous alloc "${PREV}" from node "node-a": this client has no server RPC to find the node`);
  });
});
