/**
 * The alloc health rules case by case: which settings apply, when the alloc holds as healthy
 * (task by task, lifecycle by lifecycle, check by check), and which text each task is given.
 */
import { expect } from 'chai';
import {
  desiredChecks,
  healthNow,
  healthParams,
  unhealthyTaskText,
  type CheckView,
  type HealthParams,
  unreportedHealth,
} from '../../../machines/policy/alloc-health.ts';
import type { Allocation, Task, TaskGroup, TaskState } from '../../../model/types.ts';

const check = { type: 'http' as const, intervalMs: 1000, timeoutMs: 1000 };
const task = (name: string, over: Partial<Task> = {}): Task => ({ name, driver: 'raw_exec', config: {}, ...over });
const ts = (state: TaskState['state'], failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });
const update = {
  maxParallel: 1,
  healthCheck: 'checks' as const,
  minHealthyTimeMs: 20_000,
  healthyDeadlineMs: 60_000,
  progressDeadlineMs: 0,
  autoRevert: false,
  autoPromote: false,
  canary: 0,
  staggerMs: 0,
};

function alloc(group: TaskGroup, over: Partial<Allocation> = {}): Allocation {
  return {
    id: 'a',
    nodeId: 'n',
    jobId: 'j',
    job: { id: 'j', type: 'service', taskGroups: [group] },
    taskGroup: group.name,
    desiredStatus: 'run',
    clientStatus: 'running',
    allocModifyIndex: 1,
    ...over,
  };
}

describe('policy: alloc health, case by case', () => {
  it('parameters: a deployment without an update block or with max_parallel 0 is not tracked; task_states turns checks off', () => {
    const g: TaskGroup = { name: 'g', tasks: [task('web')] };
    expect(healthParams(alloc(g, { deploymentId: 'd' }), g), 'no update block').to.equal(undefined);
    const zero = { ...g, update: { ...update, maxParallel: 0 } };
    expect(healthParams(alloc(zero, { deploymentId: 'd' }), zero), 'max_parallel 0').to.equal(undefined);
    const states = { ...g, update: { ...update, healthCheck: 'task_states' as const } };
    expect(healthParams(alloc(states, { deploymentId: 'd' }), states)).to.deep.equal({
      useChecks: false,
      minHealthyTimeMs: 20_000,
      healthyDeadlineMs: 60_000,
      isDeploy: true,
    });
    const migrate = { ...g, migrate: { maxParallel: 1, healthCheck: 'task_states' as const, minHealthyTimeMs: 5_000, healthyDeadlineMs: 30_000 } };
    expect(healthParams(alloc(migrate), migrate)).to.deep.equal({ useChecks: false, minHealthyTimeMs: 5_000, healthyDeadlineMs: 30_000, isDeploy: false });
  });

  it('desired checks: group and task services, a service without checks counts none', () => {
    const g: TaskGroup = {
      name: 'g',
      services: [{ name: 'plain' }, { name: 'g', checks: [check] }],
      tasks: [task('web', { services: [{ name: 'bare' }, { name: 'web', checks: [check, check] }] }), task('sidecar')],
    };
    expect(desiredChecks(g)).to.equal(3);
  });

  const web = task('web');
  const api = task('api');
  const init = task('init', { lifecycle: { hook: 'prestart' } });
  const proxy = task('proxy', { lifecycle: { hook: 'prestart', sidecar: true } });
  const flush = task('flush', { lifecycle: { hook: 'poststop' } });
  // [case, tasks, states, holds]
  const table: Array<[string, Task[], Record<string, TaskState>, boolean]> = [
    ['every main task running', [web, api], { web: ts('running'), api: ts('running') }, true],
    ['one main task still pending', [web, api], { web: ts('running'), api: ts('pending') }, false],
    ['a main task with no state yet', [web, api], { web: ts('running') }, false],
    ['a main task that exited well', [web], { web: ts('dead') }, false],
    ['a prestart task that exited well', [init, web], { init: ts('dead'), web: ts('running') }, true],
    ['a prestart task still pending', [init, web], { init: ts('pending'), web: ts('running') }, false],
    ['a prestart task still running', [init, web], { init: ts('running'), web: ts('running') }, true],
    ['a prestart sidecar running', [proxy, web], { proxy: ts('running'), web: ts('running') }, true],
    ['a prestart sidecar that exited well', [proxy, web], { proxy: ts('dead'), web: ts('running') }, false],
    ['a poststop task not yet run', [web, flush], { web: ts('running'), flush: ts('pending') }, true],
  ];
  for (const [what, tasks, taskStates, holds] of table) {
    it(`holds by task states: ${what} → ${holds}`, () => {
      expect(healthNow({ group: { name: 'g', tasks }, taskStates, checks: [], useChecks: false })).to.deep.equal({ holds });
    });
  }

  it('a failed task is named, whichever the order and whatever is missing', () => {
    expect(healthNow({ group: { name: 'g', tasks: [web, api] }, taskStates: { api: ts('dead', true) }, checks: [], useChecks: false })).to.deep.equal({
      failed: 'api',
      holds: false,
    });
  });

  it('checks: every one registered must pass, and at least as many as desired', () => {
    const g: TaskGroup = { name: 'g', tasks: [task('web', { services: [{ name: 'web', checks: [check] }] })] };
    const now = (checks: CheckView[]) => healthNow({ group: g, taskStates: { web: ts('running') }, checks, useChecks: true }).holds;
    expect(now([{ task: 'web', status: 'passing' }])).to.equal(true);
    expect(now([{ task: 'web', status: 'passing' }, { status: 'passing' }])).to.equal(true);
    expect(now([{ task: 'web', status: 'passing' }, { status: 'critical' }]), 'one of two failing').to.equal(false);
    expect(now([{ task: 'web', status: 'warning' }, { status: 'passing' }]), 'one of two warning').to.equal(false);
    expect(now([])).to.equal(false);
  });

  describe('unhealthy texts', () => {
    const p: HealthParams = { useChecks: true, minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000, isDeploy: true };
    const two = task('web', { services: [{ name: 'bare' }, { name: 'web', checks: [check, check] }] });
    const side = task('proxy', { lifecycle: { hook: 'poststart', sidecar: true } });
    // [case, task, state, params, ran long enough, checks, service names, text]
    const table: Array<[string, Task, TaskState | undefined, HealthParams, boolean, CheckView[], string[], string | undefined]> = [
      ['a main task that died', web, ts('dead'), p, true, [], [], 'Unhealthy because of dead task'],
      ['a sidecar that died', side, ts('dead'), p, true, [], [], 'Unhealthy because of dead task'],
      ['a prestart task that exited well, not long ago', init, ts('dead'), p, false, [], [], undefined],
      ['a task with no state and no check registered', two, undefined, p, true, [], ['web'], 'Only 0 out of 2 checks registered and passing'],
      [
        'one of two checks registered',
        two,
        ts('running'),
        p,
        true,
        [{ task: 'web', status: 'passing' }],
        ['web'],
        'Only 1 out of 2 checks registered and passing',
      ],
      [
        'checks of another task failing',
        two,
        ts('running'),
        p,
        true,
        [{ task: 'api', status: 'critical' }],
        ['web'],
        'Only 0 out of 2 checks registered and passing',
      ],
      [
        'a failing check, several services',
        two,
        ts('running'),
        p,
        true,
        [{ task: 'web', status: 'critical' }],
        ['web', 'admin'],
        'Services not healthy by deadline: web, admin',
      ],
      ['checks not used', two, ts('running'), { ...p, useChecks: false }, true, [], ['web'], undefined],
      [
        'a task that declares no checks',
        task('web', { services: [{ name: 'bare' }] }),
        ts('running'),
        p,
        true,
        [{ task: 'web', status: 'critical' }],
        ['bare'],
        undefined,
      ],
    ];
    for (const [what, t, s, params, ranLongEnough, checks, names, text] of table) {
      it(`${what} → ${text ?? 'nothing'}`, () => {
        expect(unhealthyTaskText(t, s, params, ranLongEnough, checks, names)).to.equal(text);
      });
    }
  });
});

describe('policy: unreported health (the server counts what the client reports)', () => {
  const g: TaskGroup = { name: 'g', update, tasks: [task('t')] };
  const manual: TaskGroup = { ...g, update: { ...update, healthCheck: 'manual' } };
  const rows: [string, Partial<Allocation>, TaskGroup | undefined, false | undefined][] = [
    ['failed, no verdict: unhealthy', { clientStatus: 'failed' }, g, false],
    ['lost, no verdict: unhealthy', { clientStatus: 'lost' }, g, false],
    ['running, no verdict: the client decides', {}, g, undefined],
    ['complete, no verdict: not a failure', { clientStatus: 'complete' }, g, undefined],
    ['failed after a healthy verdict: the verdict stands', { clientStatus: 'failed', deploymentStatus: { healthy: true } }, g, undefined],
    ['failed, manual health: set by hand only', { clientStatus: 'failed' }, manual, undefined],
    ['failed, group gone', { clientStatus: 'failed' }, undefined, undefined],
  ];
  for (const [name, over, group, want] of rows) {
    it(name, () => expect(unreportedHealth(alloc(g, { deploymentId: 'd', ...over }), group)).to.equal(want));
  }
  it('failed, not in a deployment: nothing to count', () => expect(unreportedHealth(alloc(g, { clientStatus: 'failed' }), g)).to.equal(undefined));
});
