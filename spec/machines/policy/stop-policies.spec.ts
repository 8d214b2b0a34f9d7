import { expect } from 'chai';
import { reportedClientStatus } from '../../../machines/policy/client-status.ts';
import { MAX_RUN_DURATION_REASON, maxRunDeadline, maxRunDurationOf } from '../../../machines/policy/max-run-duration.ts';
import { shutdownDelayEvent, skipsShutdownDelay, taskShutdownWaitMs } from '../../../machines/policy/shutdown-delay.ts';
import { missingTaskEvent, taskChanges, UPDATE_MISSING_TASK } from '../../../machines/policy/task-changes.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

describe('policy: shutdown delay', () => {
  it("uses Nomad's event types and display messages", () => {
    const wait = shutdownDelayEvent(5000, false, 1);
    expect(wait).to.include({ type: 'Waiting for shutdown delay', displayMessage: 'Waiting for shutdown_delay of 5s before killing the task.' });
    const skip = shutdownDelayEvent(1500, true, 1);
    expect(skip).to.include({ type: 'Skipping shutdown delay', displayMessage: 'Skipping shutdown_delay of 1.5s before killing the task.' });
  });

  it('waits only when there is a delay and the servers did not ask to skip it', () => {
    expect(taskShutdownWaitMs(2000, false)).to.equal(2000);
    expect(taskShutdownWaitMs(2000, true)).to.equal(0);
    expect(taskShutdownWaitMs(undefined, false)).to.equal(0);
    expect(skipsShutdownDelay({ desiredTransition: { noShutdownDelay: true } })).to.equal(true);
    expect(skipsShutdownDelay({})).to.equal(false);
  });
});

describe('policy: max_run_duration', () => {
  it('applies to batch and sysbatch only, from createTime', () => {
    const batch = makeAlloc([mockTask('t')], { jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 500 } });
    expect(maxRunDurationOf(batch)).to.equal(500);
    expect(maxRunDeadline(batch)).to.equal(1500);
    expect(maxRunDeadline({ ...batch, createTime: undefined })).to.equal(undefined);
    const service = makeAlloc([mockTask('t')], { jobType: 'service', createTime: 1000, group: { maxRunDurationMs: 500 } });
    expect(maxRunDeadline(service)).to.equal(undefined);
    const sys = makeAlloc([mockTask('t')], { jobType: 'sysbatch', createTime: 1000, group: { maxRunDurationMs: 500 } });
    expect(maxRunDeadline(sys)).to.equal(1500);
    expect(MAX_RUN_DURATION_REASON).to.equal('allocation exceeded max_run_duration');
  });
});

describe('policy: task changes on update', () => {
  it('finds the dropped tasks (killed) and the added ones (ignored)', () => {
    const next = makeAlloc([mockTask('web'), mockTask('new')]).job.taskGroups[0]!;
    expect(taskChanges(['web', 'gone'], next)).to.deep.equal({ removed: ['gone'], added: ['new'] });
    const ev = missingTaskEvent(7);
    expect(ev).to.include({ type: 'Killed', displayMessage: 'Task successfully killed' });
    expect(ev.details).to.deep.equal({ kill_reason: UPDATE_MISSING_TASK, fails_task: 'true' });
  });
});

describe('policy: reconnect', () => {
  it("is Nomad's condition: unknown, a higher index, not server-terminal", async () => {
    const { isReconnect } = await import('../../../machines/policy/reconnect.ts');
    const cur = makeAlloc([mockTask('t')], { allocModifyIndex: 4 });
    expect(isReconnect(cur, { ...cur, clientStatus: 'unknown', allocModifyIndex: 5 })).to.equal(true);
    expect(isReconnect(cur, { ...cur, clientStatus: 'unknown', allocModifyIndex: 4 })).to.equal(false);
    expect(isReconnect(cur, { ...cur, clientStatus: 'running', allocModifyIndex: 5 })).to.equal(false);
    expect(isReconnect(cur, { ...cur, clientStatus: 'unknown', allocModifyIndex: 5, desiredStatus: 'stop' })).to.equal(false);
  });
});

describe('policy: reported client status', () => {
  const st = (state: 'pending' | 'running' | 'dead', failed = false) => ({ state, failed, restarts: 0, events: [] });

  it("is Nomad's getClientStatus at every moment: failed while a sibling is still being killed", () => {
    expect(reportedClientStatus({ web: st('dead', true), side: st('running') })).to.deep.equal({ status: 'failed', description: 'Failed tasks' });
    expect(reportedClientStatus({ web: st('dead'), side: st('running') }).status).to.equal('running');
  });

  it('a status the chart decided speaks once every task is dead', () => {
    const decided = { status: 'complete' as const, description: 'allocation exceeded max_run_duration' };
    expect(reportedClientStatus({ web: st('running') }, decided).status).to.equal('running');
    expect(reportedClientStatus({ web: st('dead', true) }, decided)).to.deep.equal(decided);
  });
});
