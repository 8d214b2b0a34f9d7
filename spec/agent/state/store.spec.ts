/**
 * The agent's server state on real SQLite, at its own path: each kind of row survives a reopen
 * (the agent restarting), a commit is all or nothing, and each commit's events go out after it is
 * durable, with its index.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentState, type Txn } from '../../../agent/state/store.ts';
import type { Table } from '../../../agent/state/types.ts';

describe('agent state store (SQLite)', () => {
  let dir: string;
  let path: string;
  const open: AgentState[] = [];
  const state = () => {
    const s = new AgentState(path);
    open.push(s);
    return s;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
    path = join(dir, 'server', 'state.db');
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every kind of row is there again after a reopen, with the index it had', () => {
    const s = state();
    const job = (version: number) => ({ id: 'web', version, modifyIndex: 0 }) as any;
    s.commit((txn) => txn.putJob({ ...job(0), modifyIndex: txn.index }));
    s.commit((txn) => {
      txn.putJob({ ...job(1), modifyIndex: txn.index });
      txn.putEval({ id: 'e1', jobId: 'web', modifyIndex: txn.index } as any);
      txn.putAlloc({ alloc: { id: 'a1', jobId: 'web' }, createIndex: txn.index, modifyIndex: txn.index } as any);
      txn.putDeployment({ id: 'd1', jobId: 'web', status: 'running', modifyIndex: txn.index } as any);
      txn.putNode({ id: 'n1', modifyIndex: txn.index } as any);
      txn.putSchedulerConfig({ preemption: { serviceSchedulerEnabled: true }, modifyIndex: txn.index } as any);
      txn.putMeta('bootstrapped', true);
    });
    const sealed = { keyId: 'k', nonce: 'n', tag: 't', data: 'd' };
    s.commit((txn) => {
      txn.putVar({ namespace: 'default', path: 'a/b', createIndex: txn.index, modifyIndex: txn.index, createTime: 1, modifyTime: 1, sealed });
      txn.putVar({ namespace: 'prod', path: 'gone', createIndex: txn.index, modifyIndex: txn.index, createTime: 1, modifyTime: 1, sealed });
    });
    const varsAt = s.commit((txn) => {
      txn.deleteVar('prod', 'gone');
      return txn.index;
    });
    expect(s.waiters.indexOf(['vars'])).to.equal(varsAt);
    const index = s.waiters.index;
    s.close();

    const again = state();
    expect(again.waiters.index).to.equal(index);
    expect([...again.jobs.keys()]).to.deep.equal(['web']);
    expect(again.jobs.get('web')!.version).to.equal(1);
    expect(again.versions.get('web')!.map((v) => v.version)).to.deep.equal([0, 1]);
    expect([...again.evals.keys(), ...again.allocs.keys(), ...again.deployments.keys()]).to.deep.equal(['e1', 'a1', 'd1']);
    expect(again.node?.id).to.equal('n1');
    // the scheduler configuration a user set is loaded at start, not only saved
    expect(again.schedulerConfig).to.deep.include({ preemption: { serviceSchedulerEnabled: true } });
    expect(again.meta.get('bootstrapped')).to.equal(true);
    expect([...again.vars.keys()]).to.deep.equal(['default/a/b']);
    expect(again.vars.get('default/a/b')!.sealed).to.deep.equal(sealed);
    expect(again.storedIds('var')).to.deep.equal(['default/a/b']);
  });

  it('a throw in a commit writes nothing, in memory or on disk, and sends no event', () => {
    const s = state();
    const events: unknown[] = [];
    s.events$.subscribe((e) => events.push(e));
    const before = s.waiters.index;
    expect(() =>
      s.commit((txn) => {
        txn.putEval({ id: 'e1' } as any);
        txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: 'e1', object: {} } as any);
        throw new Error('no');
      }),
    ).to.throw('no');
    expect([s.evals.size, s.waiters.index, events.length]).to.deep.equal([0, before, 0]);
    s.close();
    expect(state().evals.size).to.equal(0);
  });

  it("a commit's events carry its index and go out once its rows are visible; a purge takes every version with it", () => {
    const s = state();
    const seen: Array<{ index: number; visible: boolean }> = [];
    s.events$.subscribe((e) => seen.push({ index: e.index, visible: s.evals.has('e1') }));
    const index = s.commit((txn) => {
      txn.putEval({ id: 'e1' } as any);
      txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: 'e1', object: {} } as any);
      return txn.index;
    });
    expect(seen).to.deep.equal([{ index, visible: true }]);
    s.commit((txn) => txn.putJob({ id: 'j', version: 0 } as any));
    s.commit((txn) => txn.putJob({ id: 'j', version: 1 } as any));
    s.commit((txn) => txn.deleteJob('j'));
    expect([s.jobs.has('j'), s.versions.has('j')]).to.deep.equal([false, false]);
    s.close();
    const again = state();
    expect([again.jobs.has('j'), again.versions.has('j')]).to.deep.equal([false, false]);
  });
});

describe('agent state store: indexes, versions and the file on disk', () => {
  let dir: string;
  let path: string;
  const open: AgentState[] = [];
  const state = () => {
    const s = new AgentState(path);
    open.push(s);
    return s;
  };
  const job = (id: string, version: number) => ({ id, version, apiJob: { ID: id } }) as any;
  const sealed = { keyId: 'k', nonce: 'n', tag: 't', data: 'd' };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
    path = join(dir, 'server', 'state.db');
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each write and the table whose index it moves (what a blocking query on that table waits for). */
  const writes: Array<[Table, string, (txn: Txn) => void]> = [
    ['jobs', 'putJob', (t) => t.putJob({ ...job('j', 0), modifyIndex: t.index })],
    ['jobs', 'deleteJob', (t) => t.deleteJob('j')],
    ['evals', 'putEval', (t) => t.putEval({ id: 'e', modifyIndex: t.index } as any)],
    ['evals', 'deleteEval', (t) => t.deleteEval('e')],
    ['allocs', 'putAlloc', (t) => t.putAlloc({ alloc: { id: 'a' }, modifyIndex: t.index } as any)],
    ['allocs', 'deleteAlloc', (t) => t.deleteAlloc('a')],
    ['deployments', 'putDeployment', (t) => t.putDeployment({ id: 'd', modifyIndex: t.index } as any)],
    ['deployments', 'deleteDeployment', (t) => t.deleteDeployment('d')],
    ['nodes', 'putNode', (t) => t.putNode({ id: 'n', modifyIndex: t.index } as any)],
    ['scheduler', 'putSchedulerConfig', (t) => t.putSchedulerConfig({ preemption: {}, createIndex: t.index, modifyIndex: t.index } as any)],
    ['vars', 'putVar', (t) => t.putVar({ namespace: 'ns', path: 'p', createIndex: t.index, modifyIndex: t.index, createTime: 1, modifyTime: 1, sealed })],
    ['vars', 'deleteVar', (t) => t.deleteVar('ns', 'p')],
  ];
  const tables: Table[] = ['jobs', 'evals', 'allocs', 'deployments', 'nodes', 'scheduler', 'vars'];

  it("each write moves its own table's index to the commit's, wakes a query on that table, and leaves the others", async () => {
    const s = state();
    for (const [table, what, write] of writes) {
      const before = Object.fromEntries(tables.map((t) => [t, s.waiters.indexOf([t])]));
      const woken = s.waiters.wait([table], before[table]!, Date.now() + 60_000);
      const at = s.commit((txn) => (write(txn), txn.index));
      await woken;
      expect(s.waiters.index, what).to.equal(at);
      expect(Object.fromEntries(tables.map((t) => [t, s.waiters.indexOf([t])])), what).to.deep.equal({ ...before, [table]: at });
    }
    expect(s.waiters.waiting).to.equal(0);
  });

  it("after a reopen every table's index is the one its last stored row carries", () => {
    const s = state();
    const at: Partial<Record<Table, number>> = {};
    for (const [table, , write] of writes.filter(([, w]) => w.startsWith('put'))) at[table] = s.commit((txn) => (write(txn), txn.index));
    s.commit((txn) => txn.putMeta('later', 1)); // moves the index, no table
    const index = s.waiters.index;
    s.close();
    const again = state();
    expect(again.waiters.index).to.equal(index);
    expect(Object.fromEntries(tables.map((t) => [t, again.waiters.indexOf([t])]))).to.deep.equal(at);
    expect(again.waiters.indexOf(['services']), 'a table nothing was written to').to.equal(1);
  });

  it('a commit that writes nothing moves no index; one that only sends an event does, and sends it', () => {
    const s = state();
    const events: Array<{ index: number; key: string }> = [];
    s.events$.subscribe((e) => events.push({ index: e.index, key: e.key }));
    const before = s.waiters.index;
    expect(s.commit(() => 'nothing')).to.equal('nothing');
    expect(s.waiters.index).to.equal(before);
    const at = s.commit((txn) => (txn.event({ topic: 'Node', type: 'NodeEvent', key: 'n', object: {} }), txn.index));
    expect(at).to.equal(before + 1);
    expect(s.waiters.index).to.equal(at);
    expect(events).to.deep.equal([{ index: at, key: 'n' }]);
    s.close();
    expect(state().waiters.index, 'the index is stored even when no row is').to.equal(at);
  });

  it('keeps the newest 6 versions when one commit writes many, replaces a version written again, and starts over after a purge in the same commit', () => {
    const s = state();
    s.commit((txn) => {
      for (let v = 0; v < 9; v++) txn.putJob(job('web', v));
    });
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([3, 4, 5, 6, 7, 8]);
    expect(s.storedIds('jobVersion')).to.deep.equal(['web@3', 'web@4', 'web@5', 'web@6', 'web@7', 'web@8']);
    s.commit((txn) => txn.putJob({ ...job('web', 8), apiJob: { ID: 'web', Meta: { again: '1' } } }));
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([3, 4, 5, 6, 7, 8]);
    expect(s.versions.get('web')!.at(-1)!.apiJob.Meta).to.deep.equal({ again: '1' });
    // An older version put after newer ones still sorts into place (and is the one dropped).
    s.commit((txn) => txn.putJob(job('web', 1)));
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([3, 4, 5, 6, 7, 8]);
    s.commit((txn) => {
      txn.deleteJob('web');
      txn.putJob(job('web', 20));
    });
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([20]);
    expect(s.storedIds('jobVersion')).to.deep.equal(['web@20']);
    expect(s.storedIds('job')).to.deep.equal(['web']);
    s.close();
    expect(
      state()
        .versions.get('web')!
        .map((v) => v.version),
    ).to.deep.equal([20]);
  });

  it('a state written before versions were bounded keeps the newest 6 on open, in version order, and drops the rest from SQLite', () => {
    mkdirSync(join(dir, 'server'));
    const old = new Database(path);
    old.exec('CREATE TABLE objects (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id))');
    const put = old.prepare('INSERT INTO objects VALUES (?, ?, ?)');
    // 12 versions: by id, web@10 and web@11 sort before web@2
    for (let v = 0; v < 12; v++) put.run('jobVersion', `web@${v}`, JSON.stringify(job('web', v)));
    put.run('job', 'web', JSON.stringify(job('web', 11)));
    old.close();
    const s = state();
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([6, 7, 8, 9, 10, 11]);
    expect(s.storedIds('jobVersion')).to.deep.equal(['web@10', 'web@11', 'web@6', 'web@7', 'web@8', 'web@9']);
  });

  it('opens an existing file with incremental auto-vacuum and WAL, and compact() gives freed pages back and empties the WAL', () => {
    mkdirSync(join(dir, 'server'));
    const old = new Database(path);
    old.exec('CREATE TABLE objects (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id))');
    expect(old.pragma('auto_vacuum', { simple: true })).to.equal(0);
    old.close();
    const s = state();
    const big = 'x'.repeat(64 * 1024);
    s.commit((txn) => {
      for (let i = 0; i < 64; i++) txn.putEval({ id: `e${i}`, big } as any);
    });
    const peek = new Database(path, { readonly: true });
    try {
      expect(peek.pragma('auto_vacuum', { simple: true })).to.equal(2);
      expect(peek.pragma('journal_mode', { simple: true })).to.equal('wal');
    } finally {
      peek.close();
    }
    s.compact();
    const full = statSync(path).size;
    s.commit((txn) => {
      for (let i = 0; i < 64; i++) txn.deleteEval(`e${i}`);
    });
    s.compact();
    expect(statSync(path).size).to.be.below(full / 4);
    expect(statSync(`${path}-wal`).size).to.equal(0);
  });

  it('cuts the WAL back to 4 MiB once a large commit is checkpointed', () => {
    const s = state();
    const big = 'x'.repeat(1024 * 1024);
    s.commit((txn) => {
      for (let i = 0; i < 12; i++) txn.putEval({ id: `e${i}`, big } as any);
    });
    expect(statSync(`${path}-wal`).size).to.be.above(8 * 1024 * 1024);
    // The next writes restart the WAL after the automatic checkpoint: the file is cut to the limit.
    for (let i = 0; i < 3; i++) s.commit((txn) => txn.putMeta('tick', i));
    expect(statSync(`${path}-wal`).size).to.be.at.most(4 * 1024 * 1024);
  });

  it('close() wakes a parked query, completes the event stream and is idempotent', async () => {
    const s = state();
    let completed = false;
    s.events$.subscribe({ complete: () => (completed = true) });
    const parked = s.waiters.wait(['allocs'], s.waiters.index, Date.now() + 60_000);
    expect(s.closed).to.equal(false);
    s.close();
    await parked;
    expect([s.closed, completed, s.waiters.waiting]).to.deep.equal([true, true, 0]);
    expect(() => s.close()).to.not.throw();
  });
});

describe('agent state store: what a commit shows in memory at once', () => {
  let dir: string;
  let s: AgentState;
  const sealed = { keyId: 'k', nonce: 'n', tag: 't', data: 'd' };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
    s = new AgentState(join(dir, 'state.db'));
  });
  afterEach(() => {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each put and delete is visible in the maps as soon as its commit returns', () => {
    s.commit((txn) => {
      txn.putAlloc({ alloc: { id: 'a' }, modifyIndex: txn.index } as any);
      txn.putDeployment({ id: 'd', modifyIndex: txn.index } as any);
      txn.putNode({ id: 'n', modifyIndex: txn.index } as any);
      txn.putSchedulerConfig({ preemption: { batchSchedulerEnabled: true }, createIndex: txn.index, modifyIndex: txn.index } as any);
      txn.putVar({ namespace: 'ns', path: 'p', createIndex: txn.index, modifyIndex: txn.index, createTime: 1, modifyTime: 1, sealed });
    });
    expect([s.allocs.has('a'), s.deployments.has('d'), s.node?.id, s.schedulerConfig?.preemption, s.vars.get('ns/p')?.sealed]).to.deep.equal([
      true,
      true,
      'n',
      { batchSchedulerEnabled: true },
      sealed,
    ]);
    s.commit((txn) => {
      txn.deleteAlloc('a');
      txn.deleteDeployment('d');
      txn.deleteVar('ns', 'p');
    });
    expect([s.allocs.size, s.deployments.size, s.vars.size]).to.deep.equal([0, 0, 0]);
  });

  it('the first version of a new job is its only version', () => {
    s.commit((txn) => txn.putJob({ id: 'new', version: 0, apiJob: { ID: 'new' } } as any));
    expect(s.versions.get('new')).to.deep.equal([s.jobs.get('new')]);
  });

  it('versions an older state stored out of order are sorted on open', () => {
    s.close();
    const path = join(dir, 'old.db');
    const old = new Database(path);
    old.exec('CREATE TABLE objects (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id))');
    const put = old.prepare('INSERT INTO objects VALUES (?, ?, ?)');
    for (const v of [3, 1, 2]) put.run('jobVersion', `web@${v}`, JSON.stringify({ id: 'web', version: v }));
    old.close();
    s = new AgentState(path);
    expect(s.versions.get('web')!.map((v) => v.version)).to.deep.equal([1, 2, 3]);
  });
});
