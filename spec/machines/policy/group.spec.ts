import { expect } from 'chai';
import { getClientStatus } from '../../../machines/policy/client-status.ts';
import { groupKillEvent, killPhases } from '../../../machines/policy/kill-order.ts';
import { gateOpen, nextCoordinatorState } from '../../../machines/policy/lifecycle-gates.ts';
import { taskRoles } from '../../../machines/policy/task-roles.ts';
import { pickQueuedUpdate } from '../../../machines/policy/update-queue.ts';
import { appendEvent, MAX_TASK_EVENTS, newTaskState, taskEvent } from '../../../machines/policy/task-events.ts';
import type { TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const st = (state: TaskState['state'], failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });

describe('client status priority', () => {
  it('failed > running > pending > complete', () => {
    expect(getClientStatus({ a: st('dead', true), b: st('running') }).status).to.equal('failed');
    expect(getClientStatus({ a: st('running'), b: st('pending'), c: st('dead') }).status).to.equal('running');
    expect(getClientStatus({ a: st('pending'), b: st('dead') }).status).to.equal('pending');
    expect(getClientStatus({ a: st('dead'), b: st('dead') })).to.deep.equal({ status: 'complete', description: 'All tasks have completed' });
    expect(getClientStatus({}).status).to.equal('');
  });
});

describe('kill order', () => {
  const roles = taskRoles([
    mockTask('side', {}, { lifecycle: { hook: 'prestart', sidecar: true } }),
    mockTask('a'),
    mockTask('lead', {}, { leader: true }),
    mockTask('b'),
    mockTask('post', {}, { lifecycle: { hook: 'poststop' } }),
  ]);
  it('leader, then other main tasks, then sidecars; poststop never', () => {
    expect(killPhases(roles)).to.deep.equal([['lead'], ['a', 'b'], ['side']]);
  });
  it('a failed task kills its siblings; a dead leader takes priority', () => {
    expect(groupKillEvent(roles, { a: st('dead', true), lead: st('running'), b: st('running'), side: st('running') })).to.deep.equal({
      type: 'Sibling Task Failed',
      failedSibling: 'a',
    });
    expect(groupKillEvent(roles, { a: st('dead', true), lead: st('dead'), b: st('running'), side: st('running') })).to.deep.equal({ type: 'Leader Task Dead' });
  });
  it('only sidecars left: main tasks dead', () => {
    expect(groupKillEvent(roles, { a: st('dead'), lead: st('dead'), b: st('dead'), side: st('running') })).to.deep.equal({ type: 'Leader Task Dead' });
    const r2 = taskRoles([mockTask('side', {}, { lifecycle: { hook: 'prestart', sidecar: true } }), mockTask('m')]);
    expect(groupKillEvent(r2, { m: st('dead'), side: st('running') })).to.deep.equal({ type: 'Main Tasks Dead' });
    expect(groupKillEvent(r2, { m: st('running'), side: st('running') })).to.equal(undefined);
  });
});

describe('lifecycle gates', () => {
  const roles = taskRoles([
    mockTask('init', {}, { lifecycle: { hook: 'prestart' } }),
    mockTask('side', {}, { lifecycle: { hook: 'prestart', sidecar: true } }),
    mockTask('web'),
    mockTask('after', {}, { lifecycle: { hook: 'poststart' } }),
    mockTask('post', {}, { lifecycle: { hook: 'poststop' } }),
  ]);
  const all = (over: Record<string, TaskState>) => ({
    init: st('pending'),
    side: st('pending'),
    web: st('pending'),
    after: st('pending'),
    post: st('pending'),
    ...over,
  });
  it('opens stages in Nomad order', () => {
    let c = nextCoordinatorState('init', roles, all({}));
    expect(c).to.equal('prestart');
    expect(gateOpen(c, 'main')).to.equal(false);
    c = nextCoordinatorState(c, roles, all({ init: st('dead'), side: st('running') }));
    expect(c).to.equal('main');
    expect(gateOpen(c, 'prestart-ephemeral')).to.equal(false);
    c = nextCoordinatorState(c, roles, all({ init: st('dead'), side: st('running'), web: st('running') }));
    expect(c).to.equal('poststart');
    c = nextCoordinatorState(c, roles, all({ init: st('dead'), side: st('running'), web: st('running'), after: st('dead') }));
    expect(c).to.equal('wait_alloc');
    c = nextCoordinatorState(c, roles, all({ init: st('dead'), side: st('dead'), web: st('dead'), after: st('dead') }));
    expect(c).to.equal('poststop');
    expect(gateOpen(c, 'poststop')).to.equal(true);
    expect(gateOpen(c, 'main')).to.equal(false);
  });
  it('a failed prestart task keeps main closed', () => {
    const c = nextCoordinatorState('prestart', roles, all({ init: st('dead', true), side: st('running') }));
    expect(c).to.equal('prestart');
  });
});

describe('update queue', () => {
  const a = makeAlloc([mockTask('web')]);
  it('a queued update with a strictly higher index wins; equal indexes: the newer call wins', () => {
    const q5 = { ...a, allocModifyIndex: 5 };
    expect(pickQueuedUpdate(q5, { ...a, allocModifyIndex: 3 })).to.equal(q5);
    const n5 = { ...a, allocModifyIndex: 5 };
    expect(pickQueuedUpdate(q5, n5)).to.equal(n5);
    const n7 = { ...a, allocModifyIndex: 7 };
    expect(pickQueuedUpdate(q5, n7)).to.equal(n7);
    expect(pickQueuedUpdate(undefined, n7)).to.equal(n7);
  });
});

describe('task events', () => {
  it('uses Nomad display messages', () => {
    expect(taskEvent('Killing', 1, { details: { kill_timeout: '5s' } }).displayMessage).to.equal('Sent interrupt. Waiting 5s before force killing');
    expect(taskEvent('Terminated', 1, { details: { exit_code: '2', signal: '9', exit_message: 'boom' } }).displayMessage).to.equal(
      'Exit Code: 2, Signal: 9, Exit Message: "boom"',
    );
    expect(taskEvent('Restarting', 1, { details: { start_delay: String(15e9), restart_reason: 'Restart within policy' } }).displayMessage).to.equal(
      'Task restarting in 15s',
    );
    expect(
      taskEvent('Restarting', 1, { details: { start_delay: '0', restart_reason: 'Exceeded allowed attempts, applying a delay' } }).displayMessage,
    ).to.equal('Exceeded allowed attempts, applying a delay - Task restarting in 0s');
    expect(taskEvent('Sibling Task Failed', 1, { details: { failed_sibling: 'web' } }).displayMessage).to.equal('Task\'s sibling "web" failed');
    expect(taskEvent('Leader Task Dead', 1).displayMessage).to.equal('Leader Task in Group dead');
  });
  it('keeps the last 10, fails the task, counts restarts', () => {
    let s = newTaskState(0);
    for (let i = 1; i <= 15; i++) s = appendEvent(s, taskEvent('Task Setup', i, { message: `m${i}` }));
    expect(s.events).to.have.length(MAX_TASK_EVENTS);
    expect(s.events[0]!.time).to.equal(6);
    s = appendEvent(s, taskEvent('Restarting', 99, { details: { start_delay: '0', restart_reason: 'x' } }));
    expect(s.restarts).to.equal(1);
    expect(s.lastRestart).to.equal(99);
    expect(s.failed).to.equal(false);
    s = appendEvent(s, taskEvent('Not Restarting', 100, { details: { fails_task: 'true' } }));
    expect(s.failed).to.equal(true);
  });
});
