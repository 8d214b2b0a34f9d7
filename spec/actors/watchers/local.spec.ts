import { expect } from 'chai';
import { watchLocalAlloc } from '../../../actors/watchers/local.ts';
import { FakeRunner, makeAlloc } from '../../support/fake-rpc.ts';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('actors/watchers/local: watchLocalAlloc', () => {
  it('returns at once when the alloc is already terminated, and closes its listener', async () => {
    const runner = new FakeRunner(makeAlloc({ clientStatus: 'complete' }));
    const out = await watchLocalAlloc(runner, new AbortController().signal);
    expect(out).to.deep.equal({ reason: 'terminated', clientStatus: 'complete' });
    expect(runner.listeners).to.have.length(1);
    expect(runner.openListeners).to.equal(0);
  });

  it('waits for a terminated client status; desired stop alone does not release it', async () => {
    const runner = new FakeRunner(makeAlloc());
    let settled = false;
    const p = watchLocalAlloc(runner, new AbortController().signal).then((o) => ((settled = true), o));
    await tick();
    runner.update({ desiredStatus: 'stop' });
    await tick();
    runner.update({ clientStatus: 'pending' });
    await tick();
    expect(settled).to.equal(false);
    runner.update({ clientStatus: 'failed' });
    expect(await p).to.deep.equal({ reason: 'terminated', clientStatus: 'failed' });
    expect(runner.openListeners).to.equal(0);
  });

  it('a failed status with a task still alive does not release it: only every task dead does (the wait channel)', async () => {
    const dead = { state: 'dead' as const, failed: true, restarts: 0, events: [] };
    const live = { state: 'running' as const, failed: false, restarts: 0, events: [] };
    const runner = new FakeRunner(makeAlloc());
    let settled = false;
    const p = watchLocalAlloc(runner, new AbortController().signal).then((o) => ((settled = true), o));
    await tick();
    runner.update({ clientStatus: 'failed', taskStates: { web: dead, sidecar: live } });
    await tick();
    expect(settled).to.equal(false);
    runner.update({ clientStatus: 'failed', taskStates: { web: dead, sidecar: { ...live, state: 'dead', failed: false } } });
    expect(await p).to.deep.equal({ reason: 'terminated', clientStatus: 'failed' });
  });

  it('sees a terminal update broadcast before the wait (primed listener), even if alloc() lags', async () => {
    const runner = new FakeRunner(makeAlloc());
    runner.broadcaster.send({ ...runner.alloc(), clientStatus: 'lost', allocModifyIndex: 99 });
    expect(await watchLocalAlloc(runner, new AbortController().signal)).to.deep.equal({ reason: 'terminated', clientStatus: 'lost' });
  });

  it('is released with listener-closed when the listener ends', async () => {
    const runner = new FakeRunner(makeAlloc());
    const p = watchLocalAlloc(runner, new AbortController().signal);
    await tick();
    runner.broadcaster.close();
    expect(await p).to.deep.equal({ reason: 'listener-closed' });
  });

  it('rejects with the abort reason and closes its listener when aborted', async () => {
    const runner = new FakeRunner(makeAlloc());
    const ac = new AbortController();
    const p = watchLocalAlloc(runner, ac.signal);
    await tick();
    ac.abort(new Error('stopped'));
    const err = await p.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('stopped');
    expect(runner.openListeners).to.equal(0);
  });

  it('schedules no timer while waiting (no polling)', async () => {
    const runner = new FakeRunner(makeAlloc());
    const real = globalThis.setTimeout;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => (timers++, real(...args))) as typeof setTimeout;
    try {
      const p = watchLocalAlloc(runner, new AbortController().signal);
      for (let i = 0; i < 5; i++) {
        runner.update({ clientStatus: 'running' });
        await tick();
      }
      runner.update({ clientStatus: 'complete' });
      await p;
    } finally {
      globalThis.setTimeout = real;
    }
    expect(timers).to.equal(0);
  });
});
