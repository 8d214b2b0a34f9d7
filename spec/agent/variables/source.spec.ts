/**
 * The VariableSource the agent hands its client, over the real store, on an agent with ACLs on:
 * Nomad's implicit workload access (its job's, group's and own variables under nomad/jobs; another job's and anything
 * deeper refused with VariableAccessError; a list filtered to what it may read), decrypted items,
 * and blocking reads that park in the state's one waiter set: answered on a change past
 * `minIndex`, rejected at once with the signal's reason on abort, leaving nothing waiting.
 */
import { expect } from 'chai';
import { VariableAccessError, type WorkloadIdentity } from '../../../index.ts';
import { startVarAgent, stopVarAgent, varDataDir, waitersAt, type VarAgent } from './support.ts';

const web: WorkloadIdentity = { namespace: 'default', jobId: 'web', group: 'frontend', task: 'nginx', allocId: 'a1' };

describe('agent: the variable source for templates', function () {
  this.timeout(60_000);
  let a: VarAgent;
  let dir: string;
  before(async () => {
    dir = varDataDir();
    // ACLs on: Nomad holds a task to its implicit workload rule only then (off, every read is allowed).
    a = await startVarAgent(dir, { acl: { enabled: true } });
    for (const p of [
      'nomad/jobs',
      'nomad/jobs/web',
      'nomad/jobs/web/frontend',
      'nomad/jobs/web/frontend/nginx',
      'nomad/jobs/web/frontend/nginx/deeper',
      'nomad/jobs/db',
      'app/config',
    ])
      expect((await a.req('PUT', `/v1/var/${p}`, { Items: { at: p } })).status).to.equal(200);
    await a.req('PUT', '/v1/var/nomad/jobs/web?namespace=prod', { Items: { at: 'prod' } });
  });
  after(() => stopVarAgent(a, dir));
  const source = () => a.agent.variables.source;

  it("reads its own job's, group's and task's variables, decrypted", async () => {
    for (const p of ['nomad/jobs', 'nomad/jobs/web', 'nomad/jobs/web/frontend', 'nomad/jobs/web/frontend/nginx']) {
      const { index, variable } = await source().get(p, web);
      expect(variable!.items, p).to.deep.equal({ at: p });
      expect(variable).to.include({ namespace: 'default', path: p, modifyIndex: index });
    }
    // Its namespace's, not another's.
    expect((await source().get('nomad/jobs/web', { ...web, namespace: 'prod' })).variable!.items).to.deep.equal({ at: 'prod' });
    // A path it may read with no variable there: none, and the variables' index.
    const none = await source().get('nomad/jobs/web/backend', { ...web, group: 'backend' });
    expect(none.variable).to.equal(undefined);
    expect(none.index).to.equal(a.agent.variables.store.index());
  });

  it("refuses another job's variables, anything deeper than its task, and paths outside nomad/jobs", async () => {
    for (const p of ['nomad/jobs/db', 'nomad/jobs/web/frontend/nginx/deeper', 'nomad/jobs/web/backend', 'app/config', 'nomad']) {
      let err: unknown;
      try {
        await source().get(p, web);
      } catch (e) {
        err = e;
      }
      expect(err, p).to.be.instanceOf(VariableAccessError);
      expect((err as VariableAccessError).path).to.equal(p);
    }
  });

  it('lists only what it may read', async () => {
    const { index, variables } = await source().list('nomad/', web);
    expect(variables.map((v) => v.path)).to.deep.equal(['nomad/jobs', 'nomad/jobs/web', 'nomad/jobs/web/frontend', 'nomad/jobs/web/frontend/nginx']);
    expect(index).to.equal(a.agent.variables.store.index());
    expect((await source().list('app/', web)).variables).to.deep.equal([]);
  });

  it('a blocking get answers when its variable changes past minIndex, not for another one', async () => {
    const { waiters } = a.agent.core.state;
    const { index } = await source().get('nomad/jobs/web', web);
    let answered = false;
    const parked = source()
      .get('nomad/jobs/web', web, { minIndex: index })
      .then((r) => ((answered = true), r));
    await waitersAt(a.agent, 1);
    await a.req('PUT', '/v1/var/nomad/jobs/db', { Items: { at: 'changed' } });
    await waitersAt(a.agent, 1);
    expect(answered).to.equal(false);
    await a.req('PUT', '/v1/var/nomad/jobs/web', { Items: { at: 'changed' } });
    const r = await parked;
    expect(r.index).to.be.greaterThan(index);
    expect(r.variable!.items).to.deep.equal({ at: 'changed' });
    expect([waiters.waiting, waiters.timers]).to.deep.equal([0, 0]);
  });

  it('a blocking list answers on a change; a deleted variable answers a get with none', async () => {
    const { index } = await source().list('nomad/jobs/web', web);
    const parked = source().list('nomad/jobs/web', web, { minIndex: index });
    await waitersAt(a.agent, 1);
    await a.req('DELETE', '/v1/var/nomad/jobs/web/frontend');
    const r = await parked;
    expect(r.index).to.be.greaterThan(index);
    expect(r.variables.map((v) => v.path)).to.deep.equal(['nomad/jobs/web', 'nomad/jobs/web/frontend/nginx']);

    const { index: at } = await source().get('nomad/jobs/web/frontend/nginx', web);
    const gone = source().get('nomad/jobs/web/frontend/nginx', web, { minIndex: at });
    await waitersAt(a.agent, 1);
    await a.req('DELETE', '/v1/var/nomad/jobs/web/frontend/nginx');
    expect((await gone).variable).to.equal(undefined);
  });

  it('rejects at once with the signal reason on abort, and leaves nothing waiting', async () => {
    const { waiters } = a.agent.core.state;
    const { index } = await source().get('nomad/jobs/web', web);
    const ac = new AbortController();
    const get = source().get('nomad/jobs/web', web, { minIndex: index, signal: ac.signal });
    const list = source().list('nomad/', web, { minIndex: a.agent.variables.store.index(), signal: ac.signal });
    await waitersAt(a.agent, 2);
    const reason = new Error('template stopped');
    ac.abort(reason);
    for (const p of [get, list]) {
      let err: unknown;
      try {
        await p;
      } catch (e) {
        err = e;
      }
      expect(err).to.equal(reason);
    }
    expect([waiters.waiting, waiters.timers]).to.deep.equal([0, 0]);
    // An already aborted signal rejects without parking.
    let err: unknown;
    try {
      await source().get('nomad/jobs/web', web, { minIndex: index, signal: ac.signal });
    } catch (e) {
      err = e;
    }
    expect(err).to.equal(reason);
    expect(waiters.waiting).to.equal(0);
    // Access is checked before any wait.
    let denied: unknown;
    try {
      await source().get('nomad/jobs/db', web, { minIndex: index, signal: new AbortController().signal });
    } catch (e) {
      denied = e;
    }
    expect(denied).to.be.instanceOf(VariableAccessError);
    expect(waiters.waiting).to.equal(0);
  });
});
