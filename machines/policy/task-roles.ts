/**
 * How a task takes part in its group: leader, main, sidecar, lifecycle stage.
 * @module
 */
import type { Task } from '../../model/types.ts';

/** Lifecycle stage of a task (Nomad's coordinator stages). */
export type TaskStage = 'prestart-ephemeral' | 'prestart-sidecar' | 'main' | 'poststart-ephemeral' | 'poststart-sidecar' | 'poststop';

/** A task's role, as plain data. */
export interface TaskRole {
  name: string;
  leader: boolean;
  stage: TaskStage;
  /** Nomad's IsSidecarTask: lifecycle.sidecar (a poststop sidecar counts too). */
  sidecar: boolean;
  poststop: boolean;
}

/** The stage a task belongs to. */
export function stageOf(task: Pick<Task, 'lifecycle'>): TaskStage {
  const lc = task.lifecycle;
  if (!lc) return 'main';
  if (lc.hook === 'poststop') return 'poststop';
  if (lc.hook === 'prestart') return lc.sidecar ? 'prestart-sidecar' : 'prestart-ephemeral';
  return lc.sidecar ? 'poststart-sidecar' : 'poststart-ephemeral';
}

/** Roles of a group's tasks, in the group's order. */
export function taskRoles(tasks: Task[]): TaskRole[] {
  return tasks.map((t) => {
    const stage = stageOf(t);
    return { name: t.name, leader: !!t.leader, stage, sidecar: !!t.lifecycle?.sidecar, poststop: stage === 'poststop' };
  });
}
