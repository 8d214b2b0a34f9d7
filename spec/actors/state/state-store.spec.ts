import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStateStore } from '../../../actors/state/state-store.ts';
import type { TaskHandle } from '../../../actors/drivers/driver.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

describe('state store (SQLite)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-state-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('persists allocs and task handles across reopen, coalescing writes', () => {
    const path = join(dir, 'client', 'state.db');
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc({ ...a, clientStatus: 'pending' });
    s.putAlloc({ ...a, clientStatus: 'running' }); // replaces the pending write
    const config = { allocId: a.id, taskName: 'web', stateDir: join(dir, 'web'), task: mockTask('web') };
    const handle = { driver: 'raw_exec', id: `${a.id}/web/1`, startedAt: 1, pid: 42, state: { x: 1 }, config } as unknown as TaskHandle;
    s.putHandle(a.id, 'web', handle);
    s.close();
    const s2 = openStateStore(path);
    const loaded = s2.load();
    expect(loaded).to.have.length(1);
    expect(loaded[0]!.alloc.clientStatus).to.equal('running');
    expect(loaded[0]!.handles.web!.pid).to.equal(42);
    s2.deleteHandle(a.id, 'web');
    expect(s2.load()[0]!.handles).to.deep.equal({});
    s2.deleteAlloc(a.id);
    expect(s2.load()).to.deep.equal([]);
    s2.close();
    s2.close(); // idempotent
  });

  it('a deleted alloc drops its queued handle writes too', () => {
    const s = openStateStore(':memory:');
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.putHandle(a.id, 'web', { driver: 'mock_driver', id: 'x', startedAt: 0, state: {}, config: {} } as unknown as TaskHandle);
    s.deleteAlloc(a.id);
    expect(s.load()).to.deep.equal([]);
    s.close();
  });

  it('a handle put in the same tick as the alloc is deleted leaves no row behind on disk (nor does a later reopen find one)', () => {
    const path = join(dir, 'client', 'state.db');
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.flush();
    s.putHandle(a.id, 'web', { driver: 'mock_driver', id: 'x', startedAt: 0, state: {}, config: {} } as unknown as TaskHandle);
    s.deleteAlloc(a.id);
    s.close();
    const db = new Database(path, { readonly: true });
    try {
      const rows = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      expect([rows('allocs'), rows('task_handles'), rows('task_states')]).to.deep.equal([0, 0, 0]);
    } finally {
      db.close();
    }
  });
});
