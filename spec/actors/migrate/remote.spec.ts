import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { AllocDir, restoreSnapshot } from '../../../actors/allocdir/index.ts';
import { MIGRATE_TMP_DIR, snapshotPath } from '../../../actors/migrate/remote-stream.ts';
import type { ClientOptions } from '../../../actors/client/types.ts';
import type { Allocation } from '../../../model/types.ts';
import { FakeRPC } from '../../support/fake-rpc.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { entries, startPeer, watchDirDestroy, type Peer } from '../../support/migrate-helpers.ts';
import { PEER_FILES, PEER_LOCAL, peerAlloc } from '../../support/migrate-peer.ts';
import { nextMessage, useTempClients, viewWhere } from '../../support/temp-client.ts';

const TOKEN = 'migrate-s3cret';

function replacement(prev: Allocation): Allocation {
  return makeAlloc([mockTask('web', { run_for: '10s' })], { previousAllocation: prev.id, nodeId: 'node-b', group: { ephemeralDisk: { migrate: true } } });
}

function get(url: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request(url, { headers, agent: false }, resolve).on('error', reject).end());
}

describe('migrate_disk: remote migration between two client processes over loopback HTTP', function () {
  this.timeout(30_000);
  const newClient = useTempClients();
  let peer: Peer;

  before(async () => {
    peer = await startPeer({ token: TOKEN });
  });
  after(async () => {
    await peer?.stop();
  });

  /** Client B on node-b, whose fake servers know both of the peer's allocs and node-a. */
  function clientB(opts: Partial<ClientOptions> = {}) {
    const rpc = new FakeRPC();
    rpc.upsert(peer.ok);
    rpc.upsert(peer.broken);
    rpc.addNode({ id: 'node-a', httpAddr: peer.httpAddr });
    const client = newClient({ rpc, nodeId: 'node-b', retry: { baseMs: 1, staggerMs: 0 }, migrateToken: TOKEN, ...opts });
    return { rpc, client, migrateTmp: path.join(client.dataDir, 'alloc', MIGRATE_TMP_DIR) };
  }

  it('the peer stopped its allocs (complete, on node-a)', () => {
    expect(peer.ok.clientStatus).to.equal('complete');
    expect(peer.ok.nodeId).to.equal('node-a');
    expect(peer.broken.clientStatus).to.equal('complete');
  });

  it('the replacement gets the files, dirs, symlink and modes; migration.done mode remote with bytes', async () => {
    const { client, rpc, migrateTmp } = clientB();
    const b = replacement(peer.ok);
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    const msg = await done;
    expect(msg).to.include({ previousAllocId: peer.ok.id, mode: 'remote' });
    expect(msg.bytes).to.be.greaterThan(250_000);
    expect(rpc.nodeRequests).to.deep.equal([{ nodeId: 'node-a' }]);

    for (const [rel, spec] of Object.entries(PEER_FILES)) {
      const p = path.join(rb.allocDir.dataDir, rel);
      const st = await lstat(p);
      if ('dir' in spec) {
        expect(st.isDirectory(), rel).to.equal(true);
        expect(st.mode & 0o7777, rel).to.equal(spec.dir);
      } else if ('link' in spec) {
        expect(st.isSymbolicLink(), rel).to.equal(true);
        expect(await readlink(p)).to.equal(spec.link);
      } else {
        expect(await readFile(p, 'utf8'), rel).to.equal(spec.content);
        expect(st.mode & 0o7777, rel).to.equal(spec.mode);
      }
    }
    const conf = path.join(rb.allocDir.dir, 'web', 'local', 'conf.txt');
    expect(await readFile(conf, 'utf8')).to.equal(PEER_LOCAL.content);
    expect((await lstat(conf)).mode & 0o7777).to.equal(PEER_LOCAL.mode);
    const blob = PEER_FILES['nested/deeper/blob.bin'] as { content: string };
    expect(await readFile(path.join(rb.allocDir.dataDir, 'nested', 'link'), 'utf8')).to.equal(blob.content); // the link resolves inside
    expect(await entries(migrateTmp)).to.deep.equal([]);
    expect(rb.isMigrating()).to.equal(false);
  });

  it('a wrong token is a soft failure: migration.failed (403), the alloc runs with a clean dir', async () => {
    const { client, migrateTmp } = clientB({ migrateToken: 'not-the-token' });
    const b = replacement(peer.ok);
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    expect((await failed).error).to.equal(`error getting snapshot from previous alloc "${peer.ok.id}": unexpected response code: 403 (Permission denied)`);
    expect(await entries(rb.allocDir.dataDir)).to.deep.equal([]);
    expect(await entries(migrateTmp)).to.deep.equal([]);
    await viewWhere(client, rb, (a) => a.clientStatus === 'running');
  });

  it("the remote side's snapshot error entry is a soft failure carrying the remote message", async () => {
    const { client, migrateTmp } = clientB();
    const b = replacement(peer.broken);
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    const { error } = await failed;
    expect(error).to.match(new RegExp(`^error streaming previous alloc "${peer.broken.id}" for new alloc "${b.id}": Error snapshotting: .*ENOENT`));
    // The alloc/data entries streamed before the error entry were undone, then the dir rebuilt.
    expect(await entries(rb.allocDir.dataDir)).to.deep.equal([]);
    expect(await entries(migrateTmp)).to.deep.equal([]);
  });
});

describe('Client.serveSnapshots', () => {
  const newClient = useTempClients();
  let scratch: string | undefined;
  afterEach(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    scratch = undefined;
  });

  it('a snapshot in flight holds off its alloc’s destroy until the copy is done', async () => {
    const dirDestroy = watchDirDestroy();
    const client = newClient({ hooks: [dirDestroy.hook] });
    const a = peerAlloc();
    const ra = client.addAlloc(a);
    await ra.waitFor('running');
    const body = Buffer.alloc(8 << 20, 5);
    await writeFile(path.join(ra.allocDir.dataDir, 'big.bin'), body);
    const srv = await client.serveSnapshots({ token: 't' });
    expect(srv.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);

    const res = await get(`${srv.url}${snapshotPath(a.id)}`, { 'X-Nomad-Token': 't' });
    expect(res.statusCode).to.equal(200);
    res.pause(); // a slow reader: the snapshot blocks on backpressure
    let destroyed = false;
    dirDestroy.watch(ra.allocDir);
    const destroying = ra.destroy().then(() => (destroyed = true));
    await dirDestroy.hooksRan(a.id); // the destroy got to the step before removing the dir…
    await new Promise((r) => setImmediate(r)); // …so a removal not held off would have begun
    expect(dirDestroy.removing(), 'the dir removal waits for the snapshot').to.equal(false);
    expect(destroyed).to.equal(false);
    expect(existsSync(path.join(ra.allocDir.dataDir, 'big.bin'))).to.equal(true);
    // A new request for an alloc being destroyed is refused.
    const late = await get(`${srv.url}${snapshotPath(a.id)}`, { 'X-Nomad-Token': 't' });
    expect(late.statusCode).to.equal(404);
    late.resume();

    scratch = await mkdtemp(path.join(os.tmpdir(), 'berth-serve-'));
    const dest = new AllocDir(scratch, 'dest');
    await dest.build();
    await restoreSnapshot(res, dest, { prevAllocId: a.id }); // reads it all
    await destroying;
    expect((await readFile(path.join(dest.dataDir, 'big.bin'))).equals(body)).to.equal(true);
    expect(existsSync(ra.allocDir.dir)).to.equal(false);
    await dest.destroy();
  });

  it('404 for an unknown alloc; shutdown() closes the server', async () => {
    const client = newClient();
    const srv = await client.serveSnapshots();
    const res = await get(`${srv.url}${snapshotPath('00000000-0000-0000-0000-000000000000')}`);
    expect(res.statusCode).to.equal(404);
    res.resume();
    await client.shutdown();
    const err = await get(`${srv.url}${snapshotPath('x')}`).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).to.equal('ECONNREFUSED');
    await srv.close(); // idempotent after shutdown
  });
});
