import { expect } from 'chai';
import { MAX_TASK_EVENTS, appendEvent, details, newTaskState, runOpen, taskEvent } from '../../../machines/policy/task-events.ts';
import type { TaskState } from '../../../model/types.ts';

const shown = (type: string, d: Record<string, string> = {}, message?: string) => taskEvent(type, 0, { details: d, message }).displayMessage;

describe('task events: display messages as Nomad writes them', () => {
  const cases: Array<[string, Record<string, string>, string, string?]> = [
    ['Received', {}, 'Task received by client'],
    ['Started', {}, 'Task started by client'],
    ['Task Setup', {}, 'Building Task Directory', 'Building Task Directory'],
    ['Task Setup', {}, ''],
    ['Setup Failure', { setup_error: 'no dir' }, 'no dir'],
    ['Setup Failure', {}, 'Task setup failed'],
    ['Driver Failure', { driver_error: 'no such binary' }, 'no such binary'],
    ['Driver Failure', {}, 'Failed to start task'],
    ['Failed Validation', { validation_error: 'bad config' }, 'bad config'],
    ['Failed Validation', {}, 'Validation of task failed'],
    ['Killing', { kill_reason: 'because', kill_timeout: '5s' }, 'because'],
    ['Killing', { kill_timeout: '5s' }, 'Sent interrupt. Waiting 5s before force killing'],
    ['Killing', { kill_timeout: '0s' }, 'Sent interrupt'],
    ['Killing', {}, 'Sent interrupt'],
    ['Killed', { kill_error: 'EPERM' }, 'EPERM'],
    ['Killed', {}, 'Task successfully killed'],
    ['Terminated', { exit_code: '3', signal: '0' }, 'Exit Code: 3'],
    ['Terminated', {}, 'Exit Code: 0'],
    ['Terminated', { exit_code: '137', signal: '9', exit_message: 'oom' }, 'Exit Code: 137, Signal: 9, Exit Message: "oom"'],
    ['Restarting', { start_delay: '15000000000', restart_reason: 'Restart within policy' }, 'Task restarting in 15s'],
    ['Restarting', { start_delay: '1500000000', restart_reason: 'Unhealthy' }, 'Unhealthy - Task restarting in 1.5s'],
    ['Restarting', {}, 'Task restarting in 0s'],
    ['Not Restarting', { restart_reason: 'Exceeded allowed attempts 2 in interval 30m0s' }, 'Exceeded allowed attempts 2 in interval 30m0s'],
    ['Not Restarting', {}, 'Task exceeded restart policy'],
    ['Sibling Task Failed', { failed_sibling: 'db' }, 'Task\'s sibling "db" failed'],
    ['Sibling Task Failed', {}, "Task's sibling failed"],
    ['Restart Signaled', { restart_reason: 'User requested restart' }, 'User requested restart'],
    ['Restart Signaled', {}, 'Task signaled to restart'],
    ['Leader Task Dead', {}, 'Leader Task in Group dead'],
    ['Main Tasks Dead', {}, 'Main tasks in the group died'],
    ['Reconnected', {}, 'Client reconnected'],
    ['Downloading Artifacts', {}, 'Client is downloading artifacts'],
    ['Failed Artifact Download', { download_error: '404' }, '404'],
    ['Failed Artifact Download', {}, 'Failed to download artifacts'],
    ['Signaling', {}, 'Task being sent a signal'],
    ['Signaling', { task_signal_reason: 'reload' }, 'reload'],
    ['Signaling', { task_signal: 'SIGHUP' }, 'Task being sent signal SIGHUP'],
    ['Signaling', { task_signal: 'SIGHUP', task_signal_reason: 'reload' }, 'Task being sent signal SIGHUP: reload'],
    ['Task hook message', {}, 'hook said', 'hook said'],
    ['Task hook message', {}, ''],
  ];
  for (const [type, d, want, message] of cases) {
    it(`${type} ${JSON.stringify(d)}${message ? ` message ${JSON.stringify(message)}` : ''} -> ${JSON.stringify(want)}`, () => {
      expect(shown(type, d, message)).to.equal(want);
    });
  }

  it('keeps a given display message and message, and copies the details', () => {
    const d = { kill_reason: 'x' };
    const ev = taskEvent('Killing', 7, { displayMessage: 'custom', message: 'm', details: d });
    expect(ev).to.deep.equal({ type: 'Killing', time: 7, displayMessage: 'custom', message: 'm', details: { kill_reason: 'x' } });
    d.kill_reason = 'changed';
    expect(ev.details.kill_reason).to.equal('x');
  });

  it('leaves message out when none is given', () => {
    expect(taskEvent('Started', 1)).to.deep.equal({ type: 'Started', time: 1, displayMessage: 'Task started by client', details: {} });
    expect(taskEvent('Started', 1, { message: '' })).not.to.have.property('message');
  });
});

describe('task events: task state bookkeeping', () => {
  it('a new task state is pending with its Received event', () => {
    expect(newTaskState(5)).to.deep.equal({
      state: 'pending',
      failed: false,
      restarts: 0,
      events: [{ type: 'Received', time: 5, displayMessage: 'Task received by client', details: {} }],
    });
  });

  it(`keeps the last ${MAX_TASK_EVENTS} events, newest last, without changing the input`, () => {
    let s = newTaskState(0);
    for (let i = 1; i < MAX_TASK_EVENTS; i++) s = appendEvent(s, taskEvent('Task Setup', i));
    expect(s.events).to.have.length(MAX_TASK_EVENTS);
    expect(s.events[0]!.type).to.equal('Received');
    const before = s;
    const next = appendEvent(s, taskEvent('Started', 99));
    expect(next.events).to.have.length(MAX_TASK_EVENTS);
    expect(next.events.map((e) => e.time)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 99]);
    expect(before.events[0]!.type).to.equal('Received');
    expect(before.events).to.have.length(MAX_TASK_EVENTS);
  });

  it('fails the task only on fails_task=true', () => {
    const s = newTaskState(0);
    expect(appendEvent(s, taskEvent('Driver Failure', 1, { details: { fails_task: 'false' } })).failed).to.equal(false);
    expect(appendEvent(s, taskEvent('Driver Failure', 1, { details: { fails_task: 'true' } })).failed).to.equal(true);
  });

  it('a Terminated event sets the typed exit fields; other events do not', () => {
    const s = newTaskState(0);
    const t = appendEvent(s, taskEvent('Terminated', 1, { details: details.exit(137, 9, undefined, true) }));
    expect(t).to.include({ exitCode: 137, signal: 9, oomKilled: true });
    const plain = appendEvent(s, taskEvent('Terminated', 1, { details: {} }));
    expect(plain).to.include({ exitCode: 0, signal: 0, oomKilled: false });
    const other = appendEvent(s, taskEvent('Killed', 1, { details: details.exit(1, 2, undefined, true) }));
    expect(other).not.to.have.any.keys('exitCode', 'signal', 'oomKilled');
  });

  it('a Restarting event counts a restart and records its time', () => {
    const s = appendEvent(newTaskState(0), taskEvent('Restarting', 42, { details: details.restart(1000, 'r') }));
    expect(s).to.include({ restarts: 1, lastRestart: 42 });
    expect(appendEvent(s, taskEvent('Started', 50))).to.include({ restarts: 1, lastRestart: 42 });
  });

  it('runOpen: the latest Started after the latest end event, else the state', () => {
    const st = (state: TaskState['state'], ...types: string[]): TaskState => ({
      state,
      failed: false,
      restarts: 0,
      events: types.map((t, i) => taskEvent(t, i)),
    });
    expect(runOpen(st('dead', 'Received', 'Started'))).to.equal(true);
    for (const end of ['Terminated', 'Failed Restoring Task', 'Driver Failure']) {
      expect(runOpen(st('running', 'Started', end)), end).to.equal(false);
      expect(runOpen(st('dead', end, 'Started')), `${end} then Started`).to.equal(true);
    }
    expect(runOpen(st('running', 'Received'))).to.equal(true);
    expect(runOpen(st('pending', 'Received'))).to.equal(false);
    expect(runOpen(st('running'))).to.equal(true);
    expect(runOpen(st('dead', 'Started', 'Killing'))).to.equal(true);
  });
});

describe('task events: details helpers', () => {
  it('name and format the values as Nomad does', () => {
    expect(details.killTimeout(5000)).to.deep.equal({ kill_timeout: '5s' });
    expect(details.exit(2, 0)).to.deep.equal({ exit_code: '2', signal: '0' });
    expect(details.exit(2, 15, 'bye', true)).to.deep.equal({ exit_code: '2', signal: '15', exit_message: 'bye', oom_killed: 'true' });
    expect(details.restart(1500, 'why')).to.deep.equal({ start_delay: '1500000000', restart_reason: 'why' });
  });
});
