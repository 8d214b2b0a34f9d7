import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Allocation, TaskGroup } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { entries, watchDirDestroy } from '../../support/migrate-helpers.ts';
import { nextMessage, record, useTempClients, viewWhere } from '../../support/temp-client.ts';

const tasks = () => [mockTask('web', { run_for: '10s' })];
const sticky = (): Partial<TaskGroup> => ({ ephemeralDisk: { sticky: true } });

/** Stops `alloc` on `client` and waits until its client status is complete. */
async function stop(client: ReturnType<ReturnType<typeof useTempClients>>, alloc: Allocation): Promise<void> {
  const r = client.runner(alloc.id)!;
  client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: alloc.allocModifyIndex + 1 });
  await viewWhere(client, r, (a) => a.clientStatus === 'complete');
}

describe('migrate_disk: local previous allocation', () => {
  const newClient = useTempClients();

  it('sticky: alloc/data and each task local/ are moved (same inodes), logs stay behind', async () => {
    const client = newClient();
    const a = makeAlloc(tasks(), { group: sticky() });
    const ra = client.addAlloc(a);
    await ra.waitFor('running');
    await mkdir(path.join(ra.allocDir.dataDir, 'nested'), { recursive: true });
    await writeFile(path.join(ra.allocDir.dataDir, 'db.sqlite'), 'rows');
    await writeFile(path.join(ra.allocDir.dataDir, 'nested', 'wal'), 'wal');
    await writeFile(path.join(ra.allocDir.dir, 'web', 'local', 'conf'), 'conf');
    await writeFile(path.join(ra.allocDir.logsDir, 'old.log'), 'log line');
    const ino = (await stat(path.join(ra.allocDir.dataDir, 'db.sqlite'))).ino;
    await stop(client, a);

    const started = record(client, 'migration.started');
    const b = makeAlloc(tasks(), { previousAllocation: a.id, group: sticky() });
    const done = nextMessage(client, 'migration.done', (m) => m.allocId === b.id);
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    const msg = await done;
    expect(msg).to.include({ allocId: b.id, previousAllocId: a.id, mode: 'local' });
    expect(msg.bytes).to.equal(undefined);
    expect(started.items.map((m) => m.mode)).to.deep.equal(['local']);

    const moved = path.join(rb.allocDir.dataDir, 'db.sqlite');
    expect(await readFile(moved, 'utf8')).to.equal('rows');
    expect((await stat(moved)).ino).to.equal(ino); // a rename, not a copy
    expect(await readFile(path.join(rb.allocDir.dataDir, 'nested', 'wal'), 'utf8')).to.equal('wal');
    expect(await readFile(path.join(rb.allocDir.dir, 'web', 'local', 'conf'), 'utf8')).to.equal('conf');
    expect(existsSync(ra.allocDir.dataDir)).to.equal(false);
    expect(existsSync(path.join(ra.allocDir.dir, 'web', 'local'))).to.equal(false);
    expect(await readFile(path.join(ra.allocDir.logsDir, 'old.log'), 'utf8')).to.equal('log line'); // logs never move
    expect(existsSync(path.join(rb.allocDir.logsDir, 'old.log'))).to.equal(false);
    expect(rb.isMigrating()).to.equal(false);
  });

  it('not sticky: migration.skipped, nothing moves', async () => {
    const client = newClient();
    const a = makeAlloc(tasks());
    const ra = client.addAlloc(a);
    await ra.waitFor('running');
    await writeFile(path.join(ra.allocDir.dataDir, 'db.sqlite'), 'rows');
    await stop(client, a);
    const b = makeAlloc(tasks(), { previousAllocation: a.id });
    const skipped = nextMessage(client, 'migration.skipped', (m) => m.allocId === b.id);
    const started = record(client, 'migration.started');
    const rb = client.addAlloc(b);
    await rb.waitFor('running');
    expect((await skipped).reason).to.equal('ephemeral disk is neither sticky nor migrate');
    expect(started.items).to.deep.equal([]);
    expect(await entries(rb.allocDir.dataDir)).to.deep.equal([]);
    expect(await readFile(path.join(ra.allocDir.dataDir, 'db.sqlite'), 'utf8')).to.equal('rows');
  });

  it('a previous alloc being migrated from is not destroyed until the copy is done', async () => {
    const dirDestroy = watchDirDestroy();
    const client = newClient({ hooks: [dirDestroy.hook] });
    const a = makeAlloc(tasks(), { group: sticky() });
    const ra = client.addAlloc(a);
    await ra.waitFor('running');
    const body = Buffer.alloc(1 << 20, 3);
    await writeFile(path.join(ra.allocDir.dataDir, 'db.sqlite'), body);
    await stop(client, a);

    // Something else is copying out of A (a snapshot nobody reads yet): the move must wait for it.
    const hold = new PassThrough({ highWaterMark: 1024 });
    const snapshot = ra.allocDir.snapshot(hold);
    const b = makeAlloc(tasks(), { previousAllocation: a.id, group: sticky() });
    const order: string[] = [];
    const started = nextMessage(client, 'migration.started', (m) => m.allocId === b.id);
    client.bus.of('migration.done').subscribe(() => order.push('migration.done'));
    const rb = client.addAlloc(b);
    await started;

    dirDestroy.watch(ra.allocDir);
    const destroyed = ra.destroy().then(() => order.push('previous destroyed'));
    await dirDestroy.hooksRan(a.id); // A's destroy got to the step before removing its dir…
    await new Promise((r) => setImmediate(r)); // …so a removal not held off would have begun
    expect(dirDestroy.removing(), 'the dir removal waits for the copies').to.equal(false);
    expect(rb.isMigrating()).to.equal(true);
    expect(ra.isDestroyed()).to.equal(false);
    expect(order).to.deep.equal([]);
    expect(existsSync(path.join(ra.allocDir.dataDir, 'db.sqlite'))).to.equal(true);

    hold.resume(); // the other copy finishes; the move runs; only then is A destroyed
    await snapshot;
    await destroyed;
    await rb.waitFor('running');
    expect(order).to.deep.equal(['migration.done', 'previous destroyed']);
    expect((await readFile(path.join(rb.allocDir.dataDir, 'db.sqlite'))).equals(body)).to.equal(true);
    expect(existsSync(ra.allocDir.dir)).to.equal(false);
  });

  it("a prerun hook of the replacement sees the previous alloc's data, in state running before any task starts", async () => {
    const seen: Record<string, { data: string | undefined; state: string | undefined; web: string | undefined }> = {};
    const client = newClient({
      hooks: [
        {
          name: 'reader',
          prerun: async ({ alloc, allocDir }) => {
            const data = await readFile(path.join(allocDir.dataDir, 'db.sqlite'), 'utf8').catch(() => undefined);
            const r = client.runner(alloc.id);
            seen[alloc.id] = { data, state: r?.state(), web: r?.alloc().taskStates?.web?.state };
          },
        },
      ],
    });
    const a = makeAlloc(tasks(), { group: sticky() });
    const ra = client.addAlloc(a);
    await ra.waitFor('running');
    await writeFile(path.join(ra.allocDir.dataDir, 'db.sqlite'), 'rows');
    await stop(client, a);
    const b = makeAlloc(tasks(), { previousAllocation: a.id, group: sticky() });
    const rb = client.addAlloc(b);
    await viewWhere(client, rb, (x) => x.taskStates?.web?.state === 'running');
    expect(seen[b.id]).to.deep.equal({ data: 'rows', state: 'running', web: 'pending' });
  });
});
