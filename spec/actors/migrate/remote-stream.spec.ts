import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ClientOptions } from '../../../actors/client/types.ts';
import { getNodeAddr, NodeNotFoundError } from '../../../actors/migrate/node-addr.ts';
import { MIGRATE_TMP_DIR } from '../../../actors/migrate/remote-stream.ts';
import type { Allocation } from '../../../model/types.ts';
import { FakeRPC, ManualClock } from '../../support/fake-rpc.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { entries, gatedServer, snapshotBytes, until, type GatedServer } from '../../support/migrate-helpers.ts';
import { nextMessage, record, useTempClients } from '../../support/temp-client.ts';

const BIG = Buffer.alloc(2 << 20, 7);

/** The previous alloc, on node-g, already complete as far as the servers know. */
function previous(): Allocation {
  return makeAlloc([mockTask('web')], { nodeId: 'node-g', clientStatus: 'complete', group: { ephemeralDisk: { migrate: true } } });
}
function replacement(prev: Allocation): Allocation {
  return makeAlloc([mockTask('web', { run_for: '10s' })], { previousAllocation: prev.id, group: { ephemeralDisk: { migrate: true } } });
}

describe('migrate_disk: remote previous allocation (in-process snapshot server)', () => {
  const newClient = useTempClients();
  let tar: Buffer;
  let holdAt: number;
  const servers: GatedServer[] = [];

  before(async () => {
    tar = await snapshotBytes({ 'big.bin': BIG, 'small.txt': 'small' }, { conf: 'conf' });
    holdAt = tar.indexOf(BIG.subarray(0, 512)) + (1 << 20); // in the middle of big.bin's body
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  async function setup(opts: Partial<ClientOptions> & { rpc?: FakeRPC; node?: boolean } = {}) {
    const gated = await gatedServer(tar, holdAt);
    servers.push(gated);
    const { node = true, ...clientOpts } = opts;
    const rpc = opts.rpc ?? new FakeRPC();
    const prev = previous();
    rpc.upsert(prev);
    if (node) rpc.addNode({ id: 'node-g', httpAddr: gated.httpAddr });
    const client = newClient({ retry: { baseMs: 1, staggerMs: 0 }, ...clientOpts, rpc });
    const migrateTmp = path.join(client.dataDir, 'alloc', MIGRATE_TMP_DIR);
    return { gated, rpc, prev, client, migrateTmp, b: replacement(prev) };
  }

  it('isMigrating() is true while the snapshot streams, false after; the token is sent', async () => {
    const { gated, client, b, migrateTmp } = await setup({ migrateToken: 'tok' });
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await gated.requested;
    await until(() => existsSync(path.join(migrateTmp, b.previousAllocation!, b.id)), 5000, 'the temp dir');
    expect(rb.isMigrating()).to.equal(true);
    expect(rb.isWaiting()).to.equal(false);
    expect(rb.state()).to.equal('waiting-prev');
    expect(gated.requests[0]!['x-nomad-token']).to.equal('tok');

    gated.release();
    await rb.waitFor('running');
    expect(rb.isMigrating()).to.equal(false);
    const msg = await done;
    expect(msg).to.include({ mode: 'remote', bytes: tar.length });
    expect((await readFile(path.join(rb.allocDir.dataDir, 'big.bin'))).equals(BIG)).to.equal(true);
    expect(await readFile(path.join(rb.allocDir.dataDir, 'small.txt'), 'utf8')).to.equal('small');
    expect(await readFile(path.join(rb.allocDir.dir, 'web', 'local', 'conf'), 'utf8')).to.equal('conf');
    expect(await entries(migrateTmp)).to.deep.equal([]);
  });

  it('destroying the new alloc mid-stream aborts promptly: request cut, temp dir gone, no failure reported', async () => {
    const { gated, client, b, migrateTmp } = await setup();
    const settled = record(client, 'migration.failed');
    const finished = record(client, 'migration.done');
    const rb = client.addAlloc(b);
    // The restore writes into its staging dir inside the temp alloc dir (.restore-XXXXXX/t/...).
    const tmpAlloc = path.join(migrateTmp, b.previousAllocation!, b.id);
    const partialFile = () => {
      const staging = existsSync(tmpAlloc) ? readdirSync(tmpAlloc).find((n) => n.startsWith('.restore-')) : undefined;
      return staging && path.join(tmpAlloc, staging, 't', 'alloc', 'data', 'big.bin');
    };
    await until(
      async () => {
        const partial = partialFile();
        return !!partial && existsSync(partial) && (await stat(partial)).size > 0;
      },
      5000,
      'a partly written file',
    );
    expect(rb.isMigrating()).to.equal(true);

    await rb.destroy(); // the server never finishes: only a cancelled migration lets this resolve
    await gated.cut; // the HTTP request was destroyed
    expect(await entries(migrateTmp)).to.deep.equal([]);
    expect(existsSync(rb.allocDir.dir)).to.equal(false);
    expect(settled.items).to.deep.equal([]);
    expect(finished.items).to.deep.equal([]);
  });

  it('migrateTimeoutMs bounds it: soft failure with the timeout message, the alloc runs with a clean dir', async () => {
    const { gated, client, b, migrateTmp } = await setup({ migrateTimeoutMs: 300 });
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    expect((await failed).error).to.equal('migration timed out after 300ms');
    await rb.waitFor('running');
    await gated.cut;
    expect(await entries(rb.allocDir.dataDir)).to.deep.equal([]);
    expect(existsSync(path.join(rb.allocDir.dir, 'web', 'local', 'conf'))).to.equal(false);
    expect(await entries(migrateTmp)).to.deep.equal([]);
  });

  it('an unknown node is a soft failure', async () => {
    const { client, b, rpc } = await setup({ node: false });
    const failed = nextMessage(client, 'migration.failed', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    expect((await failed).error).to.equal('node "node-g" not found');
    await rb.waitFor('running');
    expect(rb.alloc().clientStatus).to.not.equal('failed');
    expect(rpc.nodeRequests).to.deep.equal([{ nodeId: 'node-g' }]);
  });

  it('node lookup errors are retried (injected retry timing)', async () => {
    class FlakyRPC extends FakeRPC {
      fails = 2;
      override async getNode(req: { nodeId: string }, signal: AbortSignal) {
        if (this.fails-- > 0) {
          this.nodeRequests.push({ ...req });
          throw new Error('rpc error: No cluster leader');
        }
        return super.getNode(req, signal);
      }
    }
    const rpc = new FlakyRPC();
    const { gated, client, b } = await setup({ rpc });
    gated.release();
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    expect((await done).bytes).to.equal(tar.length);
    expect(rpc.nodeRequests.length).to.equal(3);
  });

  it('no server RPC at all: the remote watcher cannot start, so the alloc fails setup (not a hang)', async () => {
    // Without rpc the previous alloc cannot even be watched; migrate never runs.
    const client = newClient({ retry: { baseMs: 1, staggerMs: 0 } });
    const rb = client.addAlloc(replacement(previous()));
    await rb.waitFor('stopping');
    expect(rb.alloc().clientStatus).to.equal('failed');
  });
});

describe('getNodeAddr', () => {
  const signal = () => new AbortController().signal;

  it('http or https by tlsEnabled', async () => {
    const rpc = new FakeRPC();
    rpc.addNode({ id: 'a', httpAddr: '10.0.0.1:4646' });
    rpc.addNode({ id: 't', httpAddr: 'node-t:4646', tlsEnabled: true });
    expect(await getNodeAddr('a', { rpc, signal: signal() })).to.equal('http://10.0.0.1:4646');
    expect(await getNodeAddr('t', { rpc, signal: signal() })).to.equal('https://node-t:4646');
  });

  it('a missing node is NodeNotFoundError', async () => {
    const err = await getNodeAddr('gone', { rpc: new FakeRPC(), signal: signal() }).catch((e) => e);
    expect(err).to.be.instanceOf(NodeNotFoundError);
    expect(err.message).to.equal('node "gone" not found');
  });

  it('retries errors after base + random()*stagger on the clock; cancellable while waiting', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const rpc = new FakeRPC();
    rpc.addNode({ id: 'a', httpAddr: 'h:1' });
    const flaky = {
      getAlloc: rpc.getAlloc.bind(rpc),
      getNode: async (req: { nodeId: string }, s: AbortSignal) => (++calls <= 2 ? Promise.reject(new Error('boom')) : rpc.getNode(req, s)),
    };
    const retries: Array<[string, number]> = [];
    const p = getNodeAddr('a', {
      rpc: flaky,
      signal: signal(),
      clock,
      random: () => 0.25,
      retry: { baseMs: 30_000, staggerMs: 30_000 },
      onRetry: (e, d) => retries.push([e, d]),
    });
    await clock.waitForScheduled(1);
    clock.advance(37_500);
    await clock.waitForScheduled(2);
    clock.advance(37_500);
    expect(await p).to.equal('http://h:1');
    expect(clock.scheduled).to.deep.equal([37_500, 37_500]);
    expect(retries).to.deep.equal([
      ['boom', 37_500],
      ['boom', 37_500],
    ]);

    const ac = new AbortController();
    const q = getNodeAddr('a', { rpc: { ...flaky, getNode: () => Promise.reject(new Error('down')) }, signal: ac.signal, clock });
    await clock.waitForScheduled(3);
    ac.abort(new Error('stop'));
    expect((await q.catch((e) => e)).message).to.equal('stop');
    expect(clock.pending).to.equal(0);
  });
});
