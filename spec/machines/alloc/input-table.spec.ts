import { expect } from 'chai';
import { allocMachineInput, type AllocSources, type SavedAlloc } from '../../../machines/alloc/input.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { Allocation, Task, TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/** allocMachineInput's decisions, one fact at a time (a pure function of alloc, saved record and sources). */
const SOURCES: AllocSources = { now: 10, maxKillTimeoutMs: 30_000, hasUpdateHooks: false };

const handle = (task: Task): TaskHandle => ({ driver: 'mock_driver', id: `x/${task.name}`, config: { task } as never, startedAt: 0, state: {} }) as TaskHandle;
const st = (state: TaskState['state'], over: Partial<TaskState> = {}): TaskState => ({ state, failed: false, restarts: 0, events: [], ...over });

describe('allocMachineInput: each decision (table-driven)', () => {
  it('a restored handle of a task the group still has is no orphan: the group is the server one', () => {
    const a = makeAlloc([mockTask('a'), mockTask('b')]);
    const { input, group } = allocMachineInput(a, { restoredHandles: { b: handle(mockTask('b')) } }, SOURCES);
    expect(group).to.equal(a.job.taskGroups[0]);
    expect(input).to.not.have.property('removedTasks');
    expect(input.roles.map((r) => r.name)).to.deep.equal(['a', 'b']);
    expect(input.restoredHandles).to.deep.equal({ b: handle(mockTask('b')) });
  });

  // Whether a restored alloc is past its wait: only a start (a handle, a start time, a running state) says so.
  const pastWaitCases: Array<[string, SavedAlloc | undefined, Record<string, TaskState> | undefined, boolean]> = [
    ['a new alloc', undefined, { t: st('running', { startedAt: 1 }) }, false],
    ['restored, no handle, no task state', { restoredHandles: {} }, undefined, false],
    ['restored, no handle, a task that started and died', { restoredHandles: {} }, { t: st('dead', { startedAt: 1, finishedAt: 2 }) }, true],
    ['restored, no handle, a task running (no start time saved)', { restoredHandles: {} }, { t: st('running') }, true],
    ['restored, no handle, a task dead without ever starting', { restoredHandles: {} }, { t: st('dead', { finishedAt: 2 }) }, false],
    ['restored, no handle, a task pending', { restoredHandles: {} }, { t: st('pending') }, false],
    ['restored with a handle', { restoredHandles: { t: handle(mockTask('t')) } }, undefined, true],
  ];
  for (const [name, saved, taskStates, past] of pastWaitCases)
    it(`past its wait: ${name} -> ${past}`, () => {
      const a = makeAlloc([mockTask('t')], { previousAllocation: 'p', ...(taskStates ? { taskStates } : {}) });
      const { input, pastWait } = allocMachineInput(a, saved, SOURCES);
      expect(pastWait).to.equal(past);
      expect(input.restoring).to.equal(past);
      // What is past its wait watches nothing; the rest watches its previous alloc.
      expect(input.hasWatched).to.equal(!past);
    });

  const watchedCases: Array<[string, Partial<Allocation>, boolean]> = [
    ['nothing to watch', {}, false],
    ['an empty preempted list', { preemptedAllocations: [] }, false],
    ['a preempted alloc', { preemptedAllocations: ['v'] }, true],
    ['a previous alloc', { previousAllocation: 'p' }, true],
  ];
  for (const [name, over, watched] of watchedCases)
    it(`watches: ${name} -> ${watched}`, () => {
      expect(allocMachineInput(makeAlloc([mockTask('t')], over), undefined, SOURCES).input.hasWatched).to.equal(watched);
    });

  it("a restore keeps the client's own task states and handles; a new alloc drops the servers' states", () => {
    const states = { t: st('dead', { finishedAt: 2 }) };
    const a = makeAlloc([mockTask('t')], { taskStates: states });
    const restored = allocMachineInput(a, { restoredHandles: {} }, SOURCES).input;
    expect(restored.alloc.taskStates).to.deep.equal(states);
    expect(restored.restoredHandles).to.deep.equal({});
    const fresh = allocMachineInput(a, undefined, SOURCES).input;
    expect(fresh.alloc).to.not.have.property('taskStates');
    expect(fresh).to.not.have.property('restoredHandles');
    // The alloc handed in is not changed.
    expect(a.taskStates).to.equal(states);
  });

  it('a destroy begun before the restart is carried on; lost runs are marked on their tasks only', () => {
    const a = makeAlloc([mockTask('t'), mockTask('u')]);
    const { input } = allocMachineInput(a, { restoredHandles: {}, destroyRequested: true, lostRuns: ['t', 'gone'] }, SOURCES);
    expect(input.destroyRequested).to.equal(true);
    expect(input.tasks.t!.lostRun).to.equal(true);
    expect(input.tasks.u).to.not.have.property('lostRun');
    expect(input.tasks).to.not.have.property('gone');
    expect(allocMachineInput(a, { restoredHandles: {} }, SOURCES).input).to.not.have.property('destroyRequested');
  });

  it('watch sources: only the facts that hold, each preempted alloc as local (true) or not (null)', () => {
    const a = makeAlloc([mockTask('t')], { preemptedAllocations: ['v', 'w'] });
    const all = allocMachineInput(a, undefined, {
      ...SOURCES,
      previousRunner: true,
      preemptedRunners: { v: true, w: false },
      rpc: true,
      prevAllocWaitTimeoutMs: 5,
    }).input;
    expect(all.watchSources).to.deep.equal({ previousRunner: true, preemptedRunners: { v: true, w: null }, rpc: true });
    expect(all.prevAllocWaitTimeoutMs).to.equal(5);
    expect(allocMachineInput(a, undefined, { ...SOURCES, previousRunner: false, rpc: false }).input.watchSources).to.deep.equal({});
  });

  it('the sources pass through: now, the kill timeout cap (it caps task settings), update hooks', () => {
    const a = makeAlloc([mockTask('t', {}, { killTimeoutMs: 60_000 })]);
    const { input } = allocMachineInput(a, undefined, { now: 77, maxKillTimeoutMs: 9000, hasUpdateHooks: true });
    expect(input).to.deep.include({ now: 77, maxKillTimeoutMs: 9000, hasUpdateHooks: true });
    expect(input.tasks.t!.killTimeoutMs).to.equal(9000);
  });
});
