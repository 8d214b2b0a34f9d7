import { expect } from 'chai';
import { gateOpen, nextCoordinatorState, type CoordinatorState } from '../../../machines/policy/lifecycle-gates.ts';
import { getClientStatus, reportedClientStatus } from '../../../machines/policy/client-status.ts';
import { groupKillEvent, killPhases } from '../../../machines/policy/kill-order.ts';
import { MAX_RUN_DURATION_REASON, maxRunDeadline, maxRunDurationOf } from '../../../machines/policy/max-run-duration.ts';
import { taskSettingsFor } from '../../../machines/policy/task-settings.ts';
import { stageOf, taskRoles, type TaskRole, type TaskStage } from '../../../machines/policy/task-roles.ts';
import type { Task, TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const ts = (state: TaskState['state'], failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });
const role = (name: string, stage: TaskStage): TaskRole => ({ name, leader: false, stage, sidecar: stage.endsWith('sidecar'), poststop: stage === 'poststop' });

describe('policy: task roles and lifecycle stages', () => {
  it('stageOf: Nomad’s hook and sidecar combinations', () => {
    const cases: Array<[Task['lifecycle'], TaskStage]> = [
      [undefined, 'main'],
      [{ hook: 'prestart' }, 'prestart-ephemeral'],
      [{ hook: 'prestart', sidecar: true }, 'prestart-sidecar'],
      [{ hook: 'poststart' }, 'poststart-ephemeral'],
      [{ hook: 'poststart', sidecar: true }, 'poststart-sidecar'],
      [{ hook: 'poststop' }, 'poststop'],
      [{ hook: 'poststop', sidecar: true }, 'poststop'],
    ];
    for (const [lc, want] of cases) expect(stageOf({ lifecycle: lc }), JSON.stringify(lc)).to.equal(want);
  });

  it('taskRoles: leader, sidecar (a poststop sidecar counts) and poststop per task, in order', () => {
    const roles = taskRoles([
      mockTask('main', undefined, { leader: true }),
      mockTask('side', undefined, { lifecycle: { hook: 'poststop', sidecar: true } }),
      mockTask('init', undefined, { lifecycle: { hook: 'prestart' } }),
    ]);
    expect(roles).to.deep.equal([
      { name: 'main', leader: true, stage: 'main', sidecar: false, poststop: false },
      { name: 'side', leader: false, stage: 'poststop', sidecar: true, poststop: true },
      { name: 'init', leader: false, stage: 'prestart-ephemeral', sidecar: false, poststop: false },
    ]);
  });
});

describe('policy: lifecycle gates', () => {
  it('which stages may start in each coordinator state', () => {
    const stages: TaskStage[] = ['prestart-ephemeral', 'prestart-sidecar', 'main', 'poststart-ephemeral', 'poststart-sidecar', 'poststop'];
    const open: Record<CoordinatorState, TaskStage[]> = {
      init: [],
      prestart: ['prestart-ephemeral', 'prestart-sidecar'],
      main: ['prestart-sidecar', 'main'],
      poststart: ['prestart-sidecar', 'main', 'poststart-ephemeral', 'poststart-sidecar'],
      wait_alloc: ['prestart-sidecar', 'main', 'poststart-sidecar'],
      poststop: ['poststop'],
    };
    for (const [state, want] of Object.entries(open) as Array<[CoordinatorState, TaskStage[]]>)
      expect(
        stages.filter((s) => gateOpen(state, s)),
        state,
      ).to.deep.equal(want);
  });

  const all = [
    role('init', 'prestart-ephemeral'),
    role('proxy', 'prestart-sidecar'),
    role('web', 'main'),
    role('warm', 'poststart-ephemeral'),
    role('log', 'poststart-sidecar'),
    role('flush', 'poststop'),
  ];

  it('init waits for every task to be pending; a task missing from the states counts as pending', () => {
    expect(nextCoordinatorState('init', all, {})).to.equal('prestart');
    expect(nextCoordinatorState('init', all, { web: ts('running') })).to.equal('init');
  });

  it('prestart opens main once every prestart task succeeded (ephemeral) or runs (sidecar)', () => {
    const pre = { proxy: ts('running') };
    expect(nextCoordinatorState('prestart', all, { ...pre, init: ts('running') })).to.equal('prestart');
    expect(nextCoordinatorState('prestart', all, { ...pre, init: ts('dead', true) }), 'a failed prestart task').to.equal('prestart');
    expect(nextCoordinatorState('prestart', all, { init: ts('dead'), proxy: ts('pending') }), 'a sidecar not running yet').to.equal('prestart');
    expect(nextCoordinatorState('prestart', all, { ...pre, init: ts('dead') })).to.equal('main');
    expect(nextCoordinatorState('prestart', [role('web', 'main')], {}), 'no prestart tasks').to.equal('main');
  });

  it('main opens poststart once no main task is pending', () => {
    const s = { init: ts('dead'), proxy: ts('running') };
    expect(nextCoordinatorState('main', all, { ...s, web: ts('pending') })).to.equal('main');
    expect(nextCoordinatorState('main', all, { ...s, web: ts('running') })).to.equal('poststart');
    expect(nextCoordinatorState('main', [role('web', 'main'), role('other', 'main')], { web: ts('running') }), 'one main still pending').to.equal('main');
  });

  it('poststart reaches wait_alloc once its ephemeral tasks are dead (sidecars need not be)', () => {
    const s = { init: ts('dead'), proxy: ts('running'), web: ts('running'), log: ts('running') };
    expect(nextCoordinatorState('poststart', all, { ...s, warm: ts('running') })).to.equal('poststart');
    expect(nextCoordinatorState('poststart', all, { ...s, warm: ts('dead') })).to.equal('wait_alloc');
    expect(nextCoordinatorState('poststart', [role('web', 'main'), role('log', 'poststart-sidecar')], { web: ts('running') })).to.equal('wait_alloc');
    expect(nextCoordinatorState('poststart', [role('web', 'main')], { web: ts('running') }), 'no poststart tasks').to.equal('wait_alloc');
  });

  it('chains steps in one call: init to main with no prestart task, main to wait_alloc with no poststart task', () => {
    expect(nextCoordinatorState('init', [role('web', 'main')], {})).to.equal('main');
    expect(nextCoordinatorState('main', [role('web', 'main')], { web: ts('running') })).to.equal('wait_alloc');
  });

  it('poststop once every non-poststop task is dead, from any state but init', () => {
    const dead = { init: ts('dead'), proxy: ts('dead'), web: ts('dead'), warm: ts('dead'), log: ts('dead') };
    for (const s of ['prestart', 'main', 'poststart', 'wait_alloc'] as const) expect(nextCoordinatorState(s, all, dead), s).to.equal('poststop');
    expect(nextCoordinatorState('wait_alloc', all, { ...dead, log: ts('running') })).to.equal('wait_alloc');
    expect(nextCoordinatorState('poststop', all, dead)).to.equal('poststop');
    expect(nextCoordinatorState('init', all, dead), 'init never jumps to poststop').to.equal('init');
  });
});

describe('policy: client status', () => {
  it('failed wins, then running, then pending, then complete; nothing known is empty', () => {
    expect(getClientStatus({ a: ts('running'), b: ts('dead', true) })).to.deep.equal({ status: 'failed', description: 'Failed tasks' });
    expect(getClientStatus({ a: ts('pending'), b: ts('running'), c: ts('dead') })).to.deep.equal({ status: 'running', description: 'Tasks are running' });
    expect(getClientStatus({ a: ts('dead'), b: ts('pending') })).to.deep.equal({ status: 'pending', description: 'No tasks have started' });
    expect(getClientStatus({ a: ts('dead') })).to.deep.equal({ status: 'complete', description: 'All tasks have completed' });
    expect(getClientStatus({})).to.deep.equal({ status: '', description: '' });
  });

  it('a decided status is reported only once every task is dead', () => {
    const decided = { status: 'failed' as const, description: 'decided' };
    expect(reportedClientStatus({ a: ts('dead') }, decided)).to.equal(decided);
    expect(reportedClientStatus({ a: ts('running') }, decided)).to.deep.equal({ status: 'running', description: 'Tasks are running' });
    expect(reportedClientStatus({ a: ts('dead') })).to.deep.equal({ status: 'complete', description: 'All tasks have completed' });
  });
});

describe('policy: max_run_duration', () => {
  const alloc = (type: 'batch' | 'sysbatch' | 'service', ms: number | undefined, createTime?: number) => ({
    ...makeAlloc([mockTask('web')], { jobType: type, group: ms === undefined ? {} : { maxRunDurationMs: ms } }),
    ...(createTime === undefined ? {} : { createTime }),
  });

  it('applies to batch and sysbatch groups with a positive duration only', () => {
    expect(maxRunDurationOf(alloc('batch', 5000))).to.equal(5000);
    expect(maxRunDurationOf(alloc('sysbatch', 5000))).to.equal(5000);
    expect(maxRunDurationOf(alloc('service', 5000))).to.equal(undefined);
    expect(maxRunDurationOf(alloc('batch', 0))).to.equal(undefined);
    expect(maxRunDurationOf(alloc('batch', -1))).to.equal(undefined);
    expect(maxRunDurationOf(alloc('batch', undefined))).to.equal(undefined);
    expect(MAX_RUN_DURATION_REASON).to.equal('allocation exceeded max_run_duration');
  });

  it('the deadline counts from the alloc’s create time', () => {
    expect(maxRunDeadline(alloc('batch', 5000, 1000))).to.equal(6000);
    expect(maxRunDeadline({ ...alloc('batch', 5000), createTime: undefined } as never)).to.equal(undefined);
    expect(maxRunDeadline(alloc('service', 5000, 1000))).to.equal(undefined);
  });
});

describe('policy: task settings', () => {
  it('kill signal SIGINT and kill timeout 5 s by default, capped by the client’s max kill timeout', () => {
    const a = makeAlloc([mockTask('web'), mockTask('slow', undefined, { killTimeoutMs: 60_000, killSignal: 'SIGTERM', shutdownDelayMs: 7 })]);
    const { tasks } = taskSettingsFor(a, 20_000);
    expect(tasks.web).to.include({ killSignal: 'SIGINT', killTimeoutMs: 5000, shutdownDelayMs: 0 });
    expect(tasks.slow).to.include({ killSignal: 'SIGTERM', killTimeoutMs: 20_000, shutdownDelayMs: 7 });
    expect(taskSettingsFor(a).tasks.slow!.killTimeoutMs).to.equal(30_000);
    expect(tasks.web).not.to.have.property('hooks');
  });

  it('a task with artifacts runs the prestart hook (to fetch them); an empty list does not', () => {
    const a = makeAlloc([
      mockTask('fetch', undefined, { artifacts: [{ source: 'https://example.com/x.tgz' }] }),
      mockTask('none', undefined, { artifacts: [] }),
    ]);
    const { tasks } = taskSettingsFor(a);
    expect(tasks.fetch!.hooks).to.deep.equal({ prestart: true });
    expect(tasks.none).not.to.have.property('hooks');
  });
});

describe('policy: group kill event and kill phases (poststop tasks aside)', () => {
  const leader: TaskRole = { ...role('lead', 'main'), leader: true };
  const flush = role('flush', 'poststop');
  const flushSidecar: TaskRole = { ...role('flushlog', 'poststop'), sidecar: true };

  it('a dead poststop task (failed or not) triggers nothing and is never live', () => {
    const roles = [role('web', 'main'), flush];
    expect(groupKillEvent(roles, { web: ts('running'), flush: ts('dead', true) })).to.equal(undefined);
    expect(groupKillEvent([role('web', 'main'), role('api', 'main'), flush], { web: ts('running'), api: ts('dead'), flush: ts('pending') })).to.equal(
      undefined,
    );
  });

  it('nothing live (poststop left aside): no kill', () => {
    expect(groupKillEvent([role('web', 'main'), flush], { web: ts('dead', true), flush: ts('pending') })).to.equal(undefined);
  });

  it('only sidecars left: Main Tasks Dead; a poststop sidecar is not such a sidecar', () => {
    expect(groupKillEvent([role('web', 'main'), role('log', 'poststart-sidecar')], { web: ts('dead'), log: ts('running') })).to.deep.equal({
      type: 'Main Tasks Dead',
    });
    expect(groupKillEvent([role('web', 'main'), role('api', 'main'), flushSidecar], { web: ts('dead'), api: ts('running'), flushlog: ts('pending') })).to.equal(
      undefined,
    );
  });

  it('kill phases: leader, then mains, then sidecars; poststop tasks are not killed; empty phases dropped', () => {
    expect(killPhases([role('log', 'poststart-sidecar'), role('web', 'main'), leader, flush, flushSidecar])).to.deep.equal([['lead'], ['web'], ['log']]);
    expect(killPhases([role('web', 'main'), flush])).to.deep.equal([['web']]);
    expect(killPhases([{ ...flush, leader: true }, role('web', 'main')]), 'a poststop leader is no leader').to.deep.equal([['web']]);
    expect(killPhases([role('log', 'poststart-sidecar')])).to.deep.equal([['log']]);
    expect(killPhases([flush])).to.deep.equal([]);
    expect(killPhases([{ ...role('log', 'poststart-sidecar'), leader: true }, role('web', 'main')]), 'a sidecar leader goes first, once').to.deep.equal([
      ['log'],
      ['web'],
    ]);
  });
});
