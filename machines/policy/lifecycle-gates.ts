/**
 * The task lifecycle coordinator (Nomad `tasklifecycle/coordinator.go`) as a pure function:
 * which stage gates are open given every task's state.
 *
 * ```
 * init ─► prestart ─► main ─► poststart ─► wait_alloc
 *   └──────────┴────────┴──────────┴───────────┴──► poststop (every non-poststop task dead)
 * ```
 * @module
 */
import type { TaskState } from '../../model/types.ts';
import type { TaskRole, TaskStage } from './task-roles.ts';

/** Coordinator state. */
export type CoordinatorState = 'init' | 'prestart' | 'main' | 'poststart' | 'wait_alloc' | 'poststop';

const OPEN: Record<CoordinatorState, TaskStage[]> = {
  init: [],
  prestart: ['prestart-ephemeral', 'prestart-sidecar'],
  main: ['prestart-sidecar', 'main'],
  poststart: ['prestart-sidecar', 'main', 'poststart-ephemeral', 'poststart-sidecar'],
  wait_alloc: ['prestart-sidecar', 'main', 'poststart-sidecar'],
  poststop: ['poststop'],
};

/** True when `stage`'s gate is open in `state`. */
export function gateOpen(state: CoordinatorState, stage: TaskStage): boolean {
  return OPEN[state].includes(stage);
}

/** Evaluates transitions until stable. */
export function nextCoordinatorState(state: CoordinatorState, roles: TaskRole[], states: Record<string, TaskState>): CoordinatorState {
  const st = (n: string) => states[n]?.state ?? 'pending';
  const successful = (n: string) => states[n]?.state === 'dead' && !states[n]?.failed;
  const nonPoststop = roles.filter((r) => !r.poststop);
  for (let i = 0; i < 6; i++) {
    const before = state;
    if (state !== 'poststop' && nonPoststop.every((r) => st(r.name) === 'dead') && state !== 'init') {
      state = 'poststop';
    } else if (state === 'init') {
      if (roles.every((r) => st(r.name) === 'pending')) state = 'prestart';
    } else if (state === 'prestart') {
      const pre = roles.filter((r) => r.stage === 'prestart-ephemeral' || r.stage === 'prestart-sidecar');
      if (pre.length === 0 || pre.every((r) => (r.stage === 'prestart-ephemeral' ? successful(r.name) : st(r.name) === 'running'))) state = 'main';
    } else if (state === 'main') {
      const mains = roles.filter((r) => r.stage === 'main');
      if (mains.length === 0 || mains.every((r) => st(r.name) !== 'pending')) state = 'poststart';
    } else if (state === 'poststart') {
      const post = roles.filter((r) => r.stage === 'poststart-ephemeral' || r.stage === 'poststart-sidecar');
      if (post.length === 0 || post.filter((r) => r.stage === 'poststart-ephemeral').every((r) => st(r.name) === 'dead')) state = 'wait_alloc';
    }
    if (state === before) break;
  }
  return state;
}
