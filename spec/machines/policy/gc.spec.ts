import { expect } from 'chai';
import {
  byTerminalAge,
  defaultGcThresholds,
  gcReason,
  isCollectable,
  isGcTerminal,
  pickVictims,
  refuseForced,
  roundSize,
  terminalTime,
  type GcCandidate,
} from '../../../machines/policy/gc.ts';
import type { TaskState } from '../../../model/types.ts';

const dead = (finishedAt?: number): TaskState => ({
  state: 'dead',
  failed: false,
  restarts: 0,
  events: [],
  ...(finishedAt !== undefined ? { finishedAt } : {}),
});
const running: TaskState = { state: 'running', failed: false, restarts: 0, events: [] };
const cand = (allocId: string, terminalAt: number, over: Partial<GcCandidate> = {}): GcCandidate => ({
  allocId,
  terminalAt,
  terminal: true,
  settled: true,
  inUse: false,
  collecting: false,
  ...over,
});

describe('gc policy', () => {
  it('has Nomad defaults: 80 % disk, 70 % inodes, 50 allocs', () => {
    expect(defaultGcThresholds).to.deep.equal({ diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: 50 });
  });

  describe('isGcTerminal', () => {
    const table: Array<[string, Parameters<typeof isGcTerminal>[0], boolean]> = [
      ['client complete', { clientStatus: 'complete', desiredStatus: 'run' }, true],
      ['client failed', { clientStatus: 'failed', desiredStatus: 'run' }, true],
      ['client lost', { clientStatus: 'lost', desiredStatus: 'run' }, true],
      ['running', { clientStatus: 'running', desiredStatus: 'run', taskStates: { a: running } }, false],
      ['unknown is not terminal', { clientStatus: 'unknown', desiredStatus: 'run' }, false],
      ['desired stop, a task still running', { clientStatus: 'running', desiredStatus: 'stop', taskStates: { a: dead(1), b: running } }, false],
      ['desired stop, every task dead', { clientStatus: 'pending', desiredStatus: 'stop', taskStates: { a: dead(1), b: dead(2) } }, true],
      ['desired evict, every task dead', { clientStatus: 'pending', desiredStatus: 'evict', taskStates: { a: dead(1) } }, true],
      ['desired stop, no task states at all', { clientStatus: 'pending', desiredStatus: 'stop' }, false],
    ];
    for (const [name, alloc, want] of table) it(name, () => expect(isGcTerminal(alloc)).to.equal(want));
  });

  it('terminalTime is the last task finish, else the fallback', () => {
    expect(terminalTime({ taskStates: { a: dead(5), b: dead(9), c: dead() } }, 100)).to.equal(9);
    expect(terminalTime({ taskStates: { a: dead() } }, 100)).to.equal(100);
    expect(terminalTime({}, 7)).to.equal(7);
  });

  describe('gcReason', () => {
    const t = { diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: 3 };
    const table: Array<[string, Parameters<typeof gcReason>[0], number, ReturnType<typeof gcReason>]> = [
      ['all under', { diskUsedPercent: 80, inodesUsedPercent: 70 }, 3, undefined],
      ['disk over (strictly)', { diskUsedPercent: 80.5, inodesUsedPercent: 0 }, 0, 'disk'],
      ['inodes over', { diskUsedPercent: 10, inodesUsedPercent: 71 }, 0, 'inodes'],
      ['count over', { diskUsedPercent: 10, inodesUsedPercent: 10 }, 4, 'count'],
      ['disk wins over inodes and count', { diskUsedPercent: 99, inodesUsedPercent: 99 }, 99, 'disk'],
      ['inodes win over count', { diskUsedPercent: 1, inodesUsedPercent: 99 }, 99, 'inodes'],
      ['usage unreadable: only the count applies', undefined, 4, 'count'],
      ['usage unreadable, count under', undefined, 3, undefined],
    ];
    for (const [name, usage, live, want] of table) it(name, () => expect(gcReason(usage, live, t)).to.equal(want));
  });

  it('a round collects down to maxAllocs for the count, one at a time for usage', () => {
    const t = { diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: 3 };
    expect(roundSize('count', 7, t)).to.equal(4);
    expect(roundSize('disk', 7, t)).to.equal(1);
    expect(roundSize('inodes', 70, t)).to.equal(1);
  });

  it('only terminal, settled allocs that nothing needs are collectable', () => {
    expect(isCollectable(cand('a', 1))).to.equal(true);
    expect(isCollectable(cand('a', 1, { terminal: false }))).to.equal(false);
    expect(isCollectable(cand('a', 1, { settled: false }))).to.equal(false);
    expect(isCollectable(cand('a', 1, { inUse: true }))).to.equal(false);
    expect(isCollectable(cand('a', 1, { collecting: true }))).to.equal(false);
  });

  it('picks the oldest-terminal first, ties by id, skipping what may not go', () => {
    const cs = [cand('c', 30), cand('b', 10), cand('a', 10), cand('held', 1, { inUse: true }), cand('live', 0, { terminal: false }), cand('d', 20)];
    expect(pickVictims(cs)).to.deep.equal(['a', 'b', 'd', 'c']);
    expect(pickVictims(cs, 2)).to.deep.equal(['a', 'b']);
    expect(pickVictims(cs, 0)).to.deep.equal([]);
    expect([cand('x', 2), cand('y', 1)].sort(byTerminalAge).map((c) => c.allocId)).to.deep.equal(['y', 'x']);
    expect(pickVictims(cs, -1), 'a negative count takes none').to.deep.equal([]);
    expect(byTerminalAge(cand('same', 5), cand('same', 5)), 'the same alloc sorts equal').to.equal(0);
    expect(byTerminalAge(cand('b', 5), cand('a', 5))).to.equal(1);
    expect(byTerminalAge(cand('a', 5), cand('b', 5))).to.equal(-1);
  });

  it('terminal time is the latest finish whatever the order; tasks with no finish time are skipped', () => {
    expect(terminalTime({ taskStates: { a: dead(50), b: dead(20), c: dead(undefined) } }, 7)).to.equal(50);
    expect(terminalTime({ taskStates: { a: dead(20), b: dead(50), c: dead(50) } }, 7)).to.equal(50);
  });

  it('desired run with every task dead is not GC-terminal until the client status says so', () => {
    expect(isGcTerminal({ desiredStatus: 'run', clientStatus: 'running', taskStates: { a: dead(1) } })).to.equal(false);
  });

  it('a forced collection refuses a non-terminal or still-needed alloc, not an unsettled one', () => {
    expect(refuseForced(cand('a', 1, { terminal: false }))).to.equal('not-terminal');
    expect(refuseForced(cand('a', 1, { inUse: true }))).to.equal('in-use');
    expect(refuseForced(cand('a', 1, { settled: false }))).to.equal(undefined);
  });
});
