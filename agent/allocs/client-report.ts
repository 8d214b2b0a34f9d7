/**
 * What a client's report of an alloc changes in the server's view of it, as a pure decision: the
 * client's fields it carries, the alloc's health (the client's verdict, or the server's "ended
 * with none" for a deployment alloc), whether it decides the deployment's count and whether the
 * alloc ended. The agent's core commits what this answers.
 * @module
 */
import { isClientTerminalStatus, unreportedHealth, type Allocation } from '../../index.ts';
import type { Deployment, ServerAlloc } from '../state/types.ts';

/** The alloc fields a client reports; the server owns every other one. */
export const CLIENT_FIELDS = ['clientStatus', 'clientDescription', 'taskStates'] as const;

/** What one client report changes in the server's alloc. */
export interface ClientChange {
  cur: ServerAlloc;
  report: Allocation;
  /** The alloc's new health, when it changed. */
  health?: Allocation['deploymentStatus'];
  /** The report gives the alloc's first verdict: the deployment counts it. */
  decided: boolean;
  /** The alloc went terminal on the client: capacity may have come free. */
  ended: boolean;
}

/**
 * The alloc's health after the client's report `a`: the client's verdict with the server's
 * canary mark (the client reports health only), or, for an alloc of a running (or paused)
 * deployment that ended failed or lost with no verdict, unhealthy at `now`; undefined when the
 * report says nothing of health.
 */
export function reportedHealth(cur: ServerAlloc, a: Allocation, deployment: Deployment | undefined, now: number): Allocation['deploymentStatus'] {
  const canary = cur.alloc.deploymentStatus?.canary;
  if (a.deploymentStatus) return canary !== undefined ? { ...a.deploymentStatus, canary } : a.deploymentStatus;
  if (!deployment || (deployment.status !== 'running' && deployment.status !== 'paused')) return undefined;
  const group = cur.alloc.job.taskGroups.find((g) => g.name === cur.alloc.taskGroup);
  if (unreportedHealth({ ...cur.alloc, clientStatus: a.clientStatus }, group) !== false) return undefined;
  return { healthy: false, timestamp: now, ...(canary !== undefined ? { canary } : {}) };
}

/**
 * What report `a` changes in `cur` (the server's alloc; `deployment` the one it belongs to);
 * undefined when it changes nothing, so a repeated report costs no commit.
 */
export function clientChange(cur: ServerAlloc, a: Allocation, deployment: Deployment | undefined, now: number): ClientChange | undefined {
  const changed = CLIENT_FIELDS.some((k) => JSON.stringify(cur.alloc[k]) !== JSON.stringify(a[k]));
  const health = reportedHealth(cur, a, deployment, now);
  const healthChanged = health !== undefined && JSON.stringify(health) !== JSON.stringify(cur.alloc.deploymentStatus);
  if (!changed && !healthChanged) return undefined;
  return {
    cur,
    report: a,
    ...(healthChanged ? { health } : {}),
    decided: healthChanged && health?.healthy !== undefined && cur.alloc.deploymentStatus?.healthy === undefined,
    ended: !isClientTerminalStatus(cur.alloc.clientStatus) && isClientTerminalStatus(a.clientStatus),
  };
}

/** The server's alloc after change `c`: the client's fields as reported (a field left out is cleared), its health, `now` as its modify time. */
export function mergedAlloc(c: ClientChange, now: number): Allocation {
  const alloc: Allocation = { ...c.cur.alloc };
  for (const k of CLIENT_FIELDS) {
    if (c.report[k] === undefined) delete alloc[k];
    else (alloc as unknown as Record<string, unknown>)[k] = c.report[k];
  }
  if (c.health) alloc.deploymentStatus = c.health;
  alloc.modifyTime = now;
  return alloc;
}
