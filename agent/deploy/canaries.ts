/**
 * Canary promotion (Nomad's `UpdateDeploymentPromotion` and the watcher's auto-promote): a
 * deployment whose groups ask for `update { canary = N }` waits, running, until its canaries are
 * promoted by the operator (`deployment promote`) or, with `auto_promote`, once every canary is
 * healthy. Promotion is refused while a group has fewer healthy canaries than it wants.
 *
 * ```
 * canaries placed ──► running "requires manual promotion" (or "pending automatic promotion")
 *     promote (all canaries healthy) ──► promoted: running "Deployment is running", next batch
 *     promote (too few healthy)      ──► refused: Task group "g" has 0/1 healthy allocations
 * ```
 * @module
 */
import type { Allocation } from '../../index.ts';
import type { CanaryState } from '../scheduler/index.ts';
import type { AgentState, Txn } from '../state/store.ts';
import type { Deployment } from '../state/types.ts';

/** Nomad's descriptions of a deployment that waits for its canaries' promotion. */
export const RUNNING_NEEDS_PROMOTION = 'Deployment is running but requires manual promotion';
export const RUNNING_AUTO_PROMOTION = 'Deployment is running pending automatic promotion';
/** Nomad's description of a running deployment. */
export const RUNNING = 'Deployment is running';

type Groups = Deployment['taskGroups'];

/** Some group has canaries still to promote (Nomad's `RequiresPromotion`, status aside). */
export function awaitsPromotion(taskGroups: Groups): boolean {
  return Object.values(taskGroups).some((g) => (g.desiredCanaries ?? 0) > 0 && !g.promoted);
}

/** Every group has its total healthy and nothing left to promote: the deployment is done. */
export function deploymentComplete(taskGroups: Groups): boolean {
  return Object.values(taskGroups).every((g) => g.healthyAllocs >= g.desiredTotal) && !awaitsPromotion(taskGroups);
}

/** Nomad's description of a deployment that completed. */
export const SUCCESSFUL = 'Deployment completed successfully';

/** A running deployment's description: waiting for a manual or an automatic promotion, or just running. */
export function runningDescription(taskGroups: Groups): string {
  if (!awaitsPromotion(taskGroups)) return RUNNING;
  const canaried = Object.values(taskGroups).filter((g) => (g.desiredCanaries ?? 0) > 0);
  return canaried.every((g) => g.autoPromote) ? RUNNING_AUTO_PROMOTION : RUNNING_NEEDS_PROMOTION;
}

/** For the scheduler: the canaries of each deployment under way (or failed), keyed `<jobId>@<version>` then group. */
export function canaryStates(state: AgentState): Record<string, Record<string, CanaryState>> {
  const out: Record<string, Record<string, CanaryState>> = {};
  for (const d of state.deployments.values()) {
    if (d.status !== 'running' && d.status !== 'paused' && d.status !== 'failed') continue;
    const key = `${d.jobId}@${d.jobVersion}`;
    // A version deployed again after a failure (a resubmitted spec) goes by its newest deployment.
    if (d.status === 'failed' && out[key] && !Object.values(out[key]).some((g) => g.failed)) continue;
    const groups: Record<string, CanaryState> = {};
    for (const [name, g] of Object.entries(d.taskGroups))
      groups[name] = {
        desiredCanaries: g.desiredCanaries ?? 0,
        placedCanaries: g.placedCanaries ?? [],
        promoted: g.promoted ?? false,
        ...(d.status === 'failed' ? { failed: true } : {}),
      };
    out[key] = groups;
  }
  return out;
}

/** Which groups a promotion asks for (Nomad's `DeploymentPromoteRequest`: `All`, or `Groups`). */
export interface PromoteRequest {
  all: boolean;
  groups: readonly string[];
}

/**
 * The deployment with the asked groups promoted (pure), or Nomad's refusal when a group has fewer
 * healthy canaries than it wants. `healthy` says whether an alloc id is a live, healthy alloc.
 */
export function promotedDeployment(d: Deployment, req: PromoteRequest, healthy: (allocId: string) => boolean): Deployment | string {
  const asked = (g: string) => req.all || req.groups.includes(g);
  const problems: string[] = [];
  for (const [name, g] of Object.entries(d.taskGroups)) {
    const need = g.desiredCanaries ?? 0;
    if (!asked(name) || need === 0) continue;
    const have = (g.placedCanaries ?? []).filter(healthy).length;
    if (have < need) problems.push(`Task group "${name}" has ${have}/${need} healthy allocations`);
  }
  // Nomad answers a go-multierror: its count, then each error on its own line.
  if (problems.length) return `${problems.length} error${problems.length === 1 ? '' : 's'} occurred:\n${problems.map((p) => `\t* ${p}`).join('\n')}\n\n`;
  const taskGroups: Groups = Object.fromEntries(Object.entries(d.taskGroups).map(([name, g]) => [name, asked(name) ? { ...g, promoted: true } : g]));
  // Canaries that were all the group wanted leave nothing to replace: promoting them completes it.
  if (d.status === 'running' && deploymentComplete(taskGroups)) return { ...d, taskGroups, status: 'successful', statusDescription: SUCCESSFUL };
  const statusDescription = d.status === 'running' && !awaitsPromotion(taskGroups) ? RUNNING : d.statusDescription;
  return { ...d, taskGroups, statusDescription };
}

/**
 * `auto_promote` (Nomad's `autoPromoteDeployment`): every group with canaries asks for it, has
 * placed them all and every one is healthy.
 */
export function autoPromotes(d: Deployment, healthy: (allocId: string) => boolean): boolean {
  if (d.status !== 'running' || !awaitsPromotion(d.taskGroups)) return false;
  return Object.values(d.taskGroups).every((g) => {
    const want = g.desiredCanaries ?? 0;
    if (want === 0) return true;
    const placed = g.placedCanaries ?? [];
    return !!g.autoPromote && placed.length >= want && placed.filter(healthy).length >= want;
  });
}

/** Whether an alloc of the state (or `current`, its newer copy in this commit) is live and healthy. */
export function healthyIn(state: AgentState, current?: Allocation): (id: string) => boolean {
  return (id) => {
    const a = id === current?.id ? current : state.allocs.get(id)?.alloc;
    return !!a && a.desiredStatus === 'run' && a.clientStatus !== 'failed' && a.clientStatus !== 'lost' && a.deploymentStatus?.healthy === true;
  };
}

/**
 * Inside a commit: stores the promoted deployment and takes the canary mark off its promoted
 * canaries, as Nomad's state store does. `current` is the newer copy of one alloc this commit wrote.
 */
export function commitPromotion(state: AgentState, before: Deployment, next: Deployment, txn: Txn, now: number, current?: Allocation): Deployment {
  const fresh = Object.entries(next.taskGroups).filter(([name, g]) => g.promoted && !before.taskGroups[name]?.promoted);
  const taskGroups = { ...next.taskGroups };
  // Promotion starts the group's progress clock again (Nomad resets `RequireProgressBy`).
  for (const [name, g] of fresh)
    if (g.requireProgressBy !== undefined && g.progressDeadlineMs > 0) taskGroups[name] = { ...g, requireProgressBy: now + g.progressDeadlineMs };
  const stored: Deployment = { ...next, taskGroups, modifyIndex: txn.index, modifyTime: now };
  txn.putDeployment(stored);
  txn.event({ topic: 'Deployment', type: 'DeploymentPromotion', key: stored.id, object: stored });
  for (const [, g] of fresh) {
    for (const id of g.placedCanaries ?? []) {
      const s = state.allocs.get(id);
      if (!s) continue;
      const alloc = id === current?.id ? current : s.alloc;
      if (!alloc.deploymentStatus?.canary) continue;
      const promoted = { ...s, alloc: { ...alloc, deploymentStatus: { ...alloc.deploymentStatus, canary: false } }, modifyIndex: txn.index };
      txn.putAlloc(promoted);
      txn.event({ topic: 'Allocation', type: 'AllocationUpdated', key: id, object: promoted });
    }
  }
  return stored;
}
