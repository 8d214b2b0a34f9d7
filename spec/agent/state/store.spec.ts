/**
 * The agent's server state on real SQLite, at its own path: each kind of row survives a reopen
 * (the agent restarting), a commit is all or nothing, and each commit's events go out after it is
 * durable, with its index.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentState } from '../../../agent/state/store.ts';

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
