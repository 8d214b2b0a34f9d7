/**
 * Nomad's alloc health tracker as pure rules: which settings apply, whether the alloc is
 * healthy right now, and the per-task texts an unhealthy deployment alloc is given.
 *
 * ```
 *  deployment alloc: the group's update block (manual: not tracked)
 *  other service alloc: the group's migrate block (default checks, 10s, 5m)
 *  any task failed ──────────────────────────────────────────► unhealthy, at once
 *  every task running (and, for "checks", every check passing)
 *     held for min_healthy_time without a break ──────────────► healthy
 *  healthy_deadline passes first ─────────────────────────────► unhealthy
 * ```
 * @module
 */
import { formatGoDuration } from '../../model/duration.ts';
import type { Allocation, Task, TaskGroup, TaskState } from '../../model/types.ts';

/** How one alloc's health is judged (durations in ms). */
export interface HealthParams {
  useChecks: boolean;
  minHealthyTimeMs: number;
  healthyDeadlineMs: number;
  /** The alloc belongs to a deployment (unhealthy texts go on its tasks). */
  isDeploy: boolean;
}

/** Nomad's migrate defaults: checks, 10 s, 5 m. */
export const DEFAULT_MIGRATE_HEALTH = { healthCheck: 'checks', minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000 } as const;

/**
 * The parameters for this alloc, or undefined when its health is not tracked: not a service
 * job, already decided, or a deployment whose health is set by hand (`manual`).
 */
export function healthParams(alloc: Allocation, group: TaskGroup): HealthParams | undefined {
  if (alloc.job.type !== 'service') return undefined;
  if (alloc.deploymentStatus?.healthy !== undefined) return undefined;
  const isDeploy = !!alloc.deploymentId;
  if (isDeploy) {
    const u = group.update;
    if (!u || u.healthCheck === 'manual' || u.maxParallel === 0) return undefined;
    return { useChecks: u.healthCheck === 'checks', minHealthyTimeMs: u.minHealthyTimeMs, healthyDeadlineMs: u.healthyDeadlineMs, isDeploy };
  }
  const m = group.migrate ?? DEFAULT_MIGRATE_HEALTH;
  return { useChecks: m.healthCheck === 'checks', minHealthyTimeMs: m.minHealthyTimeMs, healthyDeadlineMs: m.healthyDeadlineMs, isDeploy };
}

/** One check's status as the tracker sees it. */
export interface CheckView {
  task?: string;
  status: 'passing' | 'warning' | 'critical';
}

/** What the tracker looks at now. */
export interface HealthInput {
  group: TaskGroup;
  taskStates: Record<string, TaskState>;
  /** Every registered check of the alloc (group and task services). */
  checks: CheckView[];
  useChecks: boolean;
}

/** The checks the group's services declare (group and task level). */
export function desiredChecks(group: TaskGroup): number {
  const count = (svcs: { checks?: unknown[] }[] | undefined) => (svcs ?? []).reduce((n, s) => n + (s.checks?.length ?? 0), 0);
  return count(group.services) + group.tasks.reduce((n, t) => n + count(t.services), 0);
}

/** A task that must be running for the alloc to be healthy (poststop tasks never are; ephemeral hooks may have exited well). */
function taskOk(task: Task, s: TaskState | undefined): boolean {
  if (!s) return false;
  const lc = task.lifecycle;
  if (lc?.hook === 'poststop') return true;
  if (lc && !lc.sidecar && s.state === 'dead') return !s.failed;
  return s.state === 'running';
}

/** `failed`: a task failed (unhealthy now); `holds`: every condition for health holds now. */
export function healthNow(input: HealthInput): { failed?: string; holds: boolean } {
  for (const t of input.group.tasks) if (input.taskStates[t.name]?.failed) return { failed: t.name, holds: false };
  const tasksOk = input.group.tasks.every((t) => taskOk(t, input.taskStates[t.name]));
  if (!tasksOk) return { holds: false };
  if (!input.useChecks) return { holds: true };
  const want = desiredChecks(input.group);
  const passing = input.checks.filter((c) => c.status === 'passing').length;
  return { holds: passing >= want && input.checks.every((c) => c.status === 'passing') };
}

/**
 * Nomad's per-task text for an alloc found unhealthy at its deadline (the "Alloc Unhealthy"
 * event), or undefined for a task that did not contribute.
 */
export function unhealthyTaskText(
  task: Task,
  s: TaskState | undefined,
  p: HealthParams,
  ranLongEnough: boolean,
  checks: CheckView[],
  serviceNames: string[],
): string | undefined {
  const deadline = formatGoDuration(p.healthyDeadlineMs);
  if (s) {
    if (s.failed) return 'Unhealthy because of failed task';
    if (s.state === 'pending') return `Task not running by healthy_deadline of ${deadline}`;
    if (s.state === 'dead' && (!task.lifecycle || task.lifecycle.sidecar)) return 'Unhealthy because of dead task';
    if (s.state === 'running' && !ranLongEnough) {
      return `Task not running for min_healthy_time of ${formatGoDuration(p.minHealthyTimeMs)} by healthy_deadline of ${deadline}`;
    }
  }
  const desired = (task.services ?? []).reduce((n, sv) => n + (sv.checks?.length ?? 0), 0);
  if (!p.useChecks || desired === 0) return undefined;
  const mine = checks.filter((c) => c.task === task.name);
  if (mine.some((c) => c.status !== 'passing')) return `Services not healthy by deadline: ${serviceNames.join(', ')}`;
  if (mine.length < desired) return `Only ${mine.filter((c) => c.status === 'passing').length} out of ${desired} checks registered and passing`;
  return undefined;
}

/**
 * The server's one health rule of its own (Nomad's server counts what the client reports): a
 * deployment alloc that ends failed or lost with no verdict from its client (the client lost it,
 * or it failed before its tracker could decide) counts unhealthy. Undefined otherwise: the
 * client's verdict, or none yet, stands. A `manual` group's health is set by hand only.
 */
export function unreportedHealth(alloc: Allocation, group: TaskGroup | undefined): false | undefined {
  if (!alloc.deploymentId || !group || alloc.deploymentStatus?.healthy !== undefined) return undefined;
  if (group.update?.healthCheck === 'manual') return undefined;
  return alloc.clientStatus === 'failed' || alloc.clientStatus === 'lost' ? false : undefined;
}
