// Nomad's tasksUpdated over a job of two groups with two tasks each: a change anywhere a running
// task sees replaces the allocs of that group only, with the reason the plan annotates; a change
// in nothing a task sees (or in key order alone) is made in place.
import { expect } from 'chai';
import type { Job, Task } from '../../../index.ts';
import { destructiveChange, destructiveTaskChange, same } from '../../../agent/scheduler/updates.ts';

const task = (name: string): Task => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sleep', args: ['1000'], nested: { a: 1, b: [1, 2] } },
  resources: { cpu: 100, memoryMB: 100 },
});

/** `web`: groups `front` and `back`, tasks `main` and `side` in each. */
function base(): Job {
  return {
    id: 'web',
    type: 'service',
    priority: 50,
    version: 1,
    meta: { owner: 'ops' },
    taskGroups: ['front', 'back'].map((name) => ({
      name,
      count: 1,
      tasks: [task('main'), task('side')],
      networks: [{ mode: 'host' as const, reservedPorts: [{ label: 'http', value: 8080, to: 80 }], dynamicPorts: [{ label: 'admin', to: 9000 }] }],
    })),
  };
}

function changed(fn: (j: Job, back: Job['taskGroups'][number], side: Task) => void): Job {
  const j = base();
  const back = j.taskGroups[1]!;
  fn(j, back, back.tasks[1]!);
  return j;
}

describe('scheduler: destructive changes, group by group (Nomad’s tasksUpdated)', () => {
  // [name, change to group `back` (its second task `side`), reason for `back`]
  const cases: Array<[string, (j: Job, back: Job['taskGroups'][number], side: Task) => void, string | undefined]> = [
    ['nothing changed', () => {}, undefined],
    ['count and priority (in place)', (j, back) => ((back.count = 5), (j.priority = 90)), undefined],
    ['config keys in another order', (_j, _b, side) => (side.config = { nested: { b: [1, 2], a: 1 }, args: ['1000'], command: '/bin/sleep' }), undefined],
    ['config: an array in another order', (_j, _b, side) => (side.config = { ...side.config, args: ['x', '1000'] }), 'task config'],
    ['config: a nested value', (_j, _b, side) => (side.config = { ...side.config, nested: { a: 2, b: [1, 2] } }), 'task config'],
    ['the second task’s driver', (_j, _b, side) => (side.driver = 'exec'), 'task driver'],
    ['the second task renamed', (_j, _b, side) => (side.name = 'other'), 'task deleted'],
    ['the second task’s memory max', (_j, _b, side) => (side.resources = { ...side.resources, memoryMaxMB: 500 }), 'task memory max'],
    ['the second task’s secrets size', (_j, _b, side) => (side.resources = { ...side.resources, secretsMB: 2 }), 'task secrets'],
    ['the second task’s meta', (_j, _b, side) => (side.meta = { x: '1' }), 'task meta'],
    ['group meta', (_j, back) => (back.meta = { x: '1' }), 'task meta'],
    ['job meta: every group', (j) => (j.meta = { owner: 'dev' }), 'task meta'],
    [
      'the same meta moved from the job to the task',
      (j) => ((j.meta = {}), j.taskGroups.forEach((g) => g.tasks.forEach((t) => (t.meta = { owner: 'ops' })))),
      undefined,
    ],
    ['disk: size', (_j, back) => (back.ephemeralDisk = { sizeMB: 500 }), 'ephemeral disk'],
    ['disk: sticky', (_j, back) => (back.ephemeralDisk = { sticky: true }), 'ephemeral disk'],
    ['disk: migrate', (_j, back) => (back.ephemeralDisk = { migrate: true }), 'ephemeral disk'],
    ['disk: sticky false is no sticky', (_j, back) => (back.ephemeralDisk = { sticky: false, migrate: false }), undefined],
    ['network: a static port', (_j, back) => (back.networks![0]!.reservedPorts[0]!.value = 8081), 'network'],
    ['network: a static port’s to', (_j, back) => (back.networks![0]!.reservedPorts[0]!.to = 81), 'network'],
    ['network: a static port’s host network', (_j, back) => (back.networks![0]!.reservedPorts[0]!.hostNetwork = 'public'), 'network'],
    ['network: a dynamic port’s to', (_j, back) => (back.networks![0]!.dynamicPorts[0]!.to = 9001), 'network'],
    ['network: a dynamic port’s label', (_j, back) => (back.networks![0]!.dynamicPorts[0]!.label = 'ops'), 'network'],
    ['network: a dynamic port’s host network', (_j, back) => (back.networks![0]!.dynamicPorts[0]!.hostNetwork = 'public'), 'network'],
    ['network: the port picked for a dynamic port is not the job’s', (_j, back) => (back.networks![0]!.dynamicPorts[0]!.value = 25000), undefined],
    ['network: none', (_j, back) => (back.networks = undefined), 'network'],
  ];
  for (const [name, change, why] of cases)
    it(name, () => {
      const next = changed(change);
      const front = name.startsWith('job meta') ? why : undefined;
      expect([destructiveChange(base(), next, 'front'), destructiveChange(base(), next, 'back')]).to.deep.equal([front, why]);
    });

  it('a group only one version has is replaced', () => {
    const next = changed((j) => (j.taskGroups = [j.taskGroups[0]!]));
    expect([destructiveChange(base(), next, 'back'), destructiveChange(next, base(), 'back'), destructiveChange(base(), next, 'front')]).to.deep.equal([
      'task group',
      'task group',
      undefined,
    ]);
  });

  it('a group without a disk block compared with itself is in place', () => {
    const j = changed((_j, back) => (back.ephemeralDisk = undefined));
    expect(destructiveChange(j, structuredClone(j), 'back')).to.equal(undefined);
  });

  describe('per task, as the plan diff annotates it', () => {
    const cases: Array<[string, Job, string, string, string | undefined]> = [
      ['the changed task', changed((_j, _b, side) => (side.env = { A: '1' })), 'back', 'side', 'task env'],
      ['its unchanged sibling', changed((_j, _b, side) => (side.env = { A: '1' })), 'back', 'main', undefined],
      ['the same task of the other group', changed((_j, _b, side) => (side.env = { A: '1' })), 'front', 'side', undefined],
      ['a task added', changed((_j, back) => back.tasks.push(task('new'))), 'back', 'new', 'task added or deleted'],
      ['a task deleted', changed((_j, back) => back.tasks.pop()), 'back', 'side', 'task added or deleted'],
      ['a group deleted', changed((j) => j.taskGroups.pop()), 'back', 'main', 'task added or deleted'],
      ['a group added', changed((j) => j.taskGroups.push({ ...j.taskGroups[0]!, name: 'extra' })), 'extra', 'main', 'task added or deleted'],
      ['a task’s meta, not its sibling’s', changed((_j, _b, side) => (side.meta = { k: 'v' })), 'back', 'main', undefined],
    ];
    for (const [name, next, group, t, why] of cases) it(name, () => expect(destructiveTaskChange(base(), next, group, t)).to.equal(why));
  });

  describe('same: JSON values equal whatever the key order', () => {
    const cases: Array<[unknown, unknown, boolean]> = [
      [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
      [{ a: 1, b: 2, c: 3 }, { c: 3, a: 1, b: 2 }, true],
      [{ x: { a: 1, b: 2 } }, { x: { b: 2, a: 1 } }, true],
      [[{ a: 1, b: 2 }], [{ b: 2, a: 1 }], true],
      [[1, 2], [2, 1], false],
      [{ a: 1 }, { a: 2 }, false],
      [{ a: [1] }, { a: { 0: 1 } }, false], // an array is no object with index keys
      [null, null, true],
      [{ a: null }, { a: null }, true],
    ];
    for (const [a, b, equal] of cases) it(`${JSON.stringify(a)} ${equal ? '=' : '≠'} ${JSON.stringify(b)}`, () => expect(same(a, b)).to.equal(equal));
  });
});
