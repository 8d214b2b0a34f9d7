/**
 * Destructive or in-place: which job changes need a new alloc (Nomad's `tasksUpdated`). Anything
 * a running task sees (driver, user, config, env, artifacts, meta, resources, the group's disk and
 * network) is destructive; everything else (count, priority, restart/reschedule/update/migrate
 * blocks, services, kill timeout, shutdown delay, lifecycle) is applied in place.
 * @module
 */
import type { Job, NetworkResource, Task, TaskGroup } from '../../index.ts';

/** Why the group's allocs must be replaced, or undefined when the change can be made in place. */
export function destructiveChange(oldJob: Job, newJob: Job, groupName: string): string | undefined {
  const a = oldJob.taskGroups.find((g) => g.name === groupName);
  const b = newJob.taskGroups.find((g) => g.name === groupName);
  if (!a || !b) return 'task group';
  if (a.tasks.length !== b.tasks.length) return 'number of tasks';
  if (!same(disk(a), disk(b))) return 'ephemeral disk';
  if (!same(networkKey(a.networks), networkKey(b.networks))) return 'network';
  for (const at of a.tasks) {
    const why = taskChange(oldJob, a, at, newJob, b);
    if (why) return why;
  }
  return undefined;
}

/**
 * Why the change to one task of `groupName` needs new allocs (the task's share of
 * {@link destructiveChange}), or undefined when it can be made in place. A task only one version
 * has is always destructive. The plan's diff annotates each changed task with this.
 */
export function destructiveTaskChange(oldJob: Job, newJob: Job, groupName: string, taskName: string): string | undefined {
  const a = oldJob.taskGroups.find((g) => g.name === groupName);
  const b = newJob.taskGroups.find((g) => g.name === groupName);
  const at = a?.tasks.find((t) => t.name === taskName);
  if (!a || !b || !at || !b.tasks.some((t) => t.name === taskName)) return 'task added or deleted';
  return taskChange(oldJob, a, at, newJob, b);
}

function taskChange(oldJob: Job, a: TaskGroup, at: Task, newJob: Job, b: TaskGroup): string | undefined {
  const bt = b.tasks.find((t) => t.name === at.name);
  if (!bt) return 'task deleted';
  if (at.driver !== bt.driver) return 'task driver';
  if ((at.user ?? '') !== (bt.user ?? '')) return 'task user';
  if (!same(at.config ?? {}, bt.config ?? {})) return 'task config';
  if (!same(at.env ?? {}, bt.env ?? {})) return 'task env';
  if (!same(at.artifacts ?? [], bt.artifacts ?? [])) return 'task artifacts';
  // Meta reaches the task as NOMAD_META_*: job, group and task meta combined.
  if (!same(combinedMeta(oldJob, a, at.name), combinedMeta(newJob, b, bt.name))) return 'task meta';
  const ra = at.resources ?? {};
  const rb = bt.resources ?? {};
  if (ra.cpu !== rb.cpu) return 'task cpu';
  if (ra.cores !== rb.cores) return 'task cores';
  if (ra.memoryMB !== rb.memoryMB) return 'task memory';
  if (ra.memoryMaxMB !== rb.memoryMaxMB) return 'task memory max';
  if (ra.secretsMB !== rb.secretsMB) return 'task secrets';
  return undefined;
}

function disk(g: TaskGroup) {
  return { sizeMB: g.ephemeralDisk?.sizeMB, sticky: !!g.ephemeralDisk?.sticky, migrate: !!g.ephemeralDisk?.migrate };
}

/** What of a network a task sees: mode, labels, static values and `to` (not the ports picked). */
function networkKey(networks: NetworkResource[] | undefined) {
  return (networks ?? []).map((n) => ({
    mode: n.mode,
    reserved: n.reservedPorts.map((p) => [p.label, p.value, p.to ?? null, p.hostNetwork ?? null]),
    dynamic: n.dynamicPorts.map((p) => [p.label, p.to ?? null, p.hostNetwork ?? null]),
  }));
}

function combinedMeta(job: Job, group: TaskGroup, task: string): Record<string, string> {
  return { ...job.meta, ...group.meta, ...group.tasks.find((t) => t.name === task)?.meta };
}

/** Structural equality of JSON values, key order ignored. */
export function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : value,
  );
}
