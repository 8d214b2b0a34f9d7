/**
 * The task chart's last run (the alloc being destroyed) and its revival by an alloc-level
 * restartAll: what the restart policy may still do, and what a revived run inherits.
 */
import { expect } from 'chai';
import type { RestartPolicy } from '../../model/types.ts';
import { flush } from './support/charts.ts';
import { taskHandle, taskHarness, stopTaskHarnesses } from './support/task-harness.ts';

const twice: RestartPolicy = { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' };
const never: RestartPolicy = { attempts: 0, intervalMs: 60_000, delayMs: 1000, mode: 'fail' };

async function runningHarness(policy: RestartPolicy) {
  const h = taskHarness({}, policy);
  h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
  await flush();
  expect(h.value()).to.equal('running');
  return h;
}

describe('task chart: the last run and a revival (stub effects, simulated clock)', () => {
  afterEach(stopTaskHarnesses);

  it('a last run that the policy would restart ends dead, not failed, with no Restarting', async () => {
    const h = await runningHarness(twice);
    h.send({ type: 'finalRun' });
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 8 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().slice(-1)).to.deep.equal(['Terminated']);
    expect(h.state()).to.include({ state: 'dead', failed: false, finishedAt: 8 });
    expect(h.reports.at(-1)!.state.state).to.equal('dead');
  });

  it('a last run past its attempts still says Not Restarting and fails the task', async () => {
    const h = await runningHarness(never);
    h.send({ type: 'finalRun' });
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 8 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().slice(-2)).to.deep.equal(['Terminated', 'Not Restarting']);
    expect(h.state()).to.include({ failed: true, finishedAt: 8 });
  });

  it('without a last run the same exit restarts', async () => {
    const h = await runningHarness(twice);
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 8 });
    await flush();
    expect(h.value()).to.equal('restarting');
  });

  it('a last run declared while a restart waits ends the task there, and stays declared', async () => {
    const h = await runningHarness(twice);
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 8 });
    await flush();
    expect(h.value()).to.equal('restarting');
    h.send({ type: 'finalRun' });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.state()).to.include({ state: 'dead', finishedAt: 8 });
    expect(h.reports.at(-1)!.state.state).to.equal('dead');
    expect(h.ctx().finalRun).to.equal(true);
    h.clock.increment(10_000);
    await flush();
    expect(h.start.calls, 'the waiting restart never starts').to.have.length(1);
  });

  it('a revived task starts afresh: pending, not failed, no finish, the reason on its Restart Signaled, and its kill says Killing', async () => {
    const h = await runningHarness(never);
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 2 });
    await flush();
    expect(h.state()).to.include({ state: 'dead', failed: true });
    h.send({ type: 'gate', open: false });
    h.send({ type: 'restartAll', time: 3, reason: 'operator asked' });
    await flush();
    expect(h.value()).to.equal('pending');
    expect(h.last('Restart Signaled')).to.deep.include({ time: 3, details: { restart_reason: 'operator asked' } });
    expect(h.state()).to.include({ state: 'pending', failed: false });
    expect(h.state().finishedAt).to.equal(undefined);
    h.send({ type: 'gate', open: true });
    await flush();
    h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 4 });
    await flush();
    h.send({ type: 'kill', time: 5 });
    await flush();
    expect(h.events().at(-1)).to.equal('Killing');
  });

  it('a kill that met a restart in its last life does not follow the revived run', async () => {
    const h = await runningHarness(twice);
    h.send({ type: 'restart', time: 2 });
    await flush();
    h.send({ type: 'kill', time: 3 });
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 4 });
    await flush();
    expect(h.value()).to.equal('dead');
    h.send({ type: 'gate', open: false });
    h.send({ type: 'restartAll', time: 5 });
    h.send({ type: 'gate', open: true });
    await flush();
    h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 6 });
    await flush();
    h.send({ type: 'restart', time: 7 });
    await flush();
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 8 });
    await flush();
    expect(h.value(), 'a plain restart, not the old kill').to.equal('restarting');
  });
});
