/**
 * The task chart reattaching a saved handle: which handle it then uses, whether the run gets its
 * Started, and what a kill that meets the reattach leaves on record.
 */
import { expect } from 'chai';
import type { TaskState } from '../../model/types.ts';
import { flush } from './support/charts.ts';
import { ev, taskHandle, taskHarness, stopTaskHarnesses } from './support/task-harness.ts';

const saved = (state: TaskState['state'], types: string[], over: Partial<TaskState> = {}): TaskState => ({
  state,
  failed: false,
  restarts: 0,
  events: types.map((t) => ev(t)),
  ...over,
});

describe('task chart: reattaching a saved handle (stub effects)', () => {
  afterEach(stopTaskHarnesses);

  it('asks the recovery for the saved handle and then watches the handle it got back', async () => {
    const h = taskHarness({ restoredHandle: taskHandle(1), initialState: saved('running', ['Received', 'Task Setup', 'Started']) });
    expect(h.value()).to.equal('recovering');
    expect(h.recover.last().input).to.deep.equal({ allocId: 'a', taskName: 'web', handle: taskHandle(1) });
    h.recover.last().resolve({ ok: true, time: 5, handle: taskHandle(2) });
    await flush();
    expect(h.value()).to.equal('running');
    expect(h.wait.last().input).to.deep.equal({ allocId: 'a', taskName: 'web', handle: taskHandle(2) });
    // Without a new handle the saved one is kept.
    const same = taskHarness({ restoredHandle: taskHandle(1), initialState: saved('running', ['Received', 'Task Setup', 'Started']) });
    same.recover.last().resolve({ ok: true, time: 5 });
    await flush();
    expect(same.wait.last().input.handle).to.deep.equal(taskHandle(1));
  });

  // [what was saved, the state and events saved, events after the reattach, startedAt after]
  const table: Array<[string, TaskState, string[], number | undefined]> = [
    ['a running run', saved('running', ['Received', 'Task Setup', 'Started'], { startedAt: 2 }), ['Received', 'Task Setup', 'Started'], 2],
    ['a run shown running without its Started', saved('running', ['Received', 'Task Setup']), ['Received', 'Task Setup'], undefined],
    [
      'a run waiting out its shutdown delay',
      saved('pending', ['Received', 'Task Setup', 'Started', 'Waiting for shutdown delay'], { startedAt: 2 }),
      ['Received', 'Task Setup', 'Started', 'Waiting for shutdown delay'],
      2,
    ],
    ['a start the last host never reported', saved('pending', ['Received', 'Task Setup']), ['Received', 'Task Setup', 'Started'], 7],
    [
      'a restart the last host never reported',
      saved('pending', ['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Task Setup'], { startedAt: 2 }),
      ['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Task Setup', 'Started'],
      2,
    ],
    ['a handle with no run on record', saved('pending', ['Received']), ['Received'], undefined],
  ];
  for (const [what, initialState, events, startedAt] of table) {
    it(`reattached, ${what}: running, with a Started only when the run had none`, async () => {
      const h = taskHarness({ restoredHandle: taskHandle(), initialState, gateOpen: false });
      h.recover.last().resolve({ ok: true, time: 7, handle: taskHandle(2) });
      await flush();
      expect(h.value()).to.equal('running');
      expect(h.state().state).to.equal('running');
      expect(h.events()).to.deep.equal(events);
      expect(h.state().startedAt).to.equal(startedAt);
      expect(h.reports.at(-1)!.state.state).to.equal('running');
      if (events.at(-1) === 'Started' && events.length > initialState.events.length) expect(h.last('Started')!.time).to.equal(7);
    });
  }

  it('a kill that meets a reattach that worked kills the handle it got back, after a Started for the run', async () => {
    const h = taskHarness({ restoredHandle: taskHandle(1), initialState: saved('pending', ['Received', 'Task Setup']) });
    h.send({ type: 'kill', time: 3 });
    await flush();
    h.recover.last().resolve({ ok: true, time: 4, handle: taskHandle(2) });
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.kill.last().input).to.deep.include({ handle: taskHandle(2) });
    expect(h.reports.at(-1)!.state.state, 'reported running until the kill ends it').to.equal('running');
    expect(h.events()).to.deep.equal(['Received', 'Task Setup', 'Killing', 'Started']);
  });

  it('a kill that meets a failed reattach: a started run ends with Terminated (the reattach error), then Killed', async () => {
    const h = taskHarness({ restoredHandle: taskHandle(), initialState: saved('running', ['Received', 'Task Setup', 'Started']) });
    h.send({ type: 'kill', time: 3 });
    h.recover.last().resolve({ ok: false, time: 6, error: 'process gone' });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events()).to.deep.equal(['Received', 'Task Setup', 'Started', 'Killing', 'Terminated', 'Killed']);
    expect(h.last('Terminated')).to.deep.include({ time: 6, details: { exit_code: '-1', signal: '0', exit_message: 'process gone' } });
    expect(h.last('Killed')!.time).to.equal(6);
    expect(h.state()).to.include({ state: 'dead', finishedAt: 6 });
    expect(h.reports.at(-1)).to.deep.include({ eventSeq: 6 });
    expect(h.reports.at(-1)!.state.state).to.equal('dead');
    // No run on record: nothing to end, only Killed.
    const idle = taskHarness({ restoredHandle: taskHandle(), initialState: saved('pending', ['Received']) });
    idle.send({ type: 'kill', time: 3 });
    idle.recover.last().resolve({ ok: false, time: 6, error: 'process gone' });
    await flush();
    expect(idle.events()).to.deep.equal(['Received', 'Killing', 'Killed']);
  });

  it('a failed reattach says why on its Failed Restoring Task', async () => {
    const h = taskHarness({ restoredHandle: taskHandle(), initialState: saved('running', ['Received', 'Task Setup', 'Started']) });
    h.recover.last().resolve({ ok: false, time: 6, error: 'no such process' });
    await flush();
    expect(h.last('Failed Restoring Task')).to.deep.include({ time: 6, message: 'no such process' });
  });

  it('a run open without a handle is Failed Restoring Task with a message saying it starts again', async () => {
    const h = taskHarness({ initialState: saved('running', ['Received', 'Task Setup', 'Started']), gateOpen: false });
    await flush();
    expect(h.last('Failed Restoring Task')!.displayMessage).to.match(/^failed to restore task: .*starting it again$/);
  });
});
