/**
 * The alloc health hook (Nomad's health hook and tracker): while a service alloc runs, watches
 * its task states and check results and decides its health once, by the rules in
 * `machines/policy/alloc-health.ts`. The verdict becomes the alloc's `deploymentStatus`
 * (reported through `updates$`) and an `alloc.health` bus message; an unhealthy deployment alloc
 * gets Nomad's "Alloc Unhealthy" text on each task that caused it.
 *
 * Time is the client's clock: the min_healthy_time and healthy_deadline timers are set on it,
 * and a healthy verdict needs the min_healthy_time timer to fire with nothing broken meanwhile.
 * @module
 */
import { byAlloc, type AllocRoute } from '../../bus/by-alloc.ts';
import { healthNow, healthParams, unhealthyTaskText, type CheckView, type HealthParams } from '../../machines/policy/alloc-health.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { Allocation, TaskGroup, TaskState } from '../../model/types.ts';
import type { RunnerHook } from '../runner/hooks.ts';
import type { RunnerInternals, Runtime } from '../runner/runtime.ts';

/** Nomad's event type for an unhealthy alloc's task. */
export const ALLOC_UNHEALTHY = 'Alloc Unhealthy';

/** The per-alloc routes a health tracker listens on. */
interface HealthRoutes {
  taskState: AllocRoute<'task.state'>;
  checkStatus: AllocRoute<'check.status'>;
  allocState: AllocRoute<'alloc.state'>;
}

/** When the task's current run started (its last "Started"), else its first start. */
function lastStart(s: TaskState): number | undefined {
  for (let i = s.events.length - 1; i >= 0; i--) if (s.events[i]!.type === 'Started') return s.events[i]!.time;
  return s.startedAt;
}

/** Watches one alloc until its health is decided or the watch is stopped; returns the stop. */
function watchHealth(rt: Runtime, routes: HealthRoutes, r: RunnerInternals, group: TaskGroup, p: HealthParams): () => void {
  const allocId = r.allocId;
  let done = false;
  let minTimer: unknown;
  const offs: (() => void)[] = [];
  const checks = (): CheckView[] =>
    rt.services.entriesOf(allocId).flatMap((e) => [...e.checks.values()].map((c) => ({ ...(e.task ? { task: e.task } : {}), status: c.status })));

  const stop = () => {
    done = true;
    if (minTimer !== undefined) rt.clock.clearTimeout(minTimer);
    minTimer = undefined;
    rt.clock.clearTimeout(deadline);
    for (const off of offs) off();
  };

  const decide = (healthy: boolean) => {
    if (done) return;
    stop();
    const now = rt.clock.now();
    const alloc = r.clientAlloc();
    const states = alloc.taskStates ?? {};
    let reason = '';
    if (!healthy) {
      const cs = checks();
      for (const t of group.tasks) {
        const s = states[t.name];
        const started = s && lastStart(s);
        const ranLongEnough = started !== undefined && now - started >= p.minHealthyTimeMs;
        const names = (t.services ?? []).map((sv) => sv.name);
        const text = unhealthyTaskText(t, s, p, ranLongEnough, cs, names);
        if (!text) continue;
        reason ||= text;
        if (p.isDeploy) r.toTask(t.name, { type: 'append', event: taskEvent(ALLOC_UNHEALTHY, now, { message: text }) });
      }
      reason ||= 'alloc not healthy by healthy_deadline';
    }
    const canary = alloc.deploymentStatus?.canary;
    r.setDeploymentStatus({ healthy, timestamp: now, ...(canary !== undefined ? { canary } : {}) });
    rt.bus.publish('alloc.health', { allocId, healthy, reason });
  };

  const evaluate = () => {
    if (done) return;
    const now = healthNow({ group, taskStates: r.clientAlloc().taskStates ?? {}, checks: checks(), useChecks: p.useChecks });
    if (now.failed) return decide(false);
    if (now.holds && minTimer === undefined) {
      minTimer = rt.clock.setTimeout(() => {
        minTimer = undefined;
        decide(true);
      }, p.minHealthyTimeMs);
    } else if (!now.holds && minTimer !== undefined) {
      // Broken before min_healthy_time: it starts again from the next time everything holds.
      rt.clock.clearTimeout(minTimer);
      minTimer = undefined;
    }
  };

  const deadline = rt.clock.setTimeout(() => decide(false), p.healthyDeadlineMs);
  offs.push(routes.taskState.on(allocId, evaluate));
  offs.push(routes.checkStatus.on(allocId, evaluate));
  // A stopping alloc's health is not decided (its tasks are being killed on purpose).
  offs.push(routes.allocState.on(allocId, (m) => (m.to === 'stopping' || m.to === 'destroyed') && stop()));
  evaluate();
  return stop;
}

/**
 * The alloc runner hook that tracks health (prerun starts it; the alloc entering `stopping`, a
 * destroy or a shutdown ends it). An update that moves the running alloc to another deployment
 * starts the tracker again for it, as Nomad's health hook does (the earlier verdict belonged to
 * the earlier deployment and is no longer part of the alloc's view).
 */
export function allocHealthHook(rt: Runtime): RunnerHook {
  // One bus subscription per kind for every tracked alloc (see byAlloc: one each would be quadratic).
  const routes: HealthRoutes = {
    taskState: byAlloc(rt.bus, 'task.state'),
    checkStatus: byAlloc(rt.bus, 'check.status'),
    allocState: byAlloc(rt.bus, 'alloc.state'),
  };
  const watches = new Map<string, { deploymentId: string | undefined; stop: () => void }>();
  const stop = async ({ alloc }: { alloc: { id: string } }) => {
    watches.get(alloc.id)?.stop();
    watches.delete(alloc.id);
  };
  const start = (alloc: Allocation) => {
    const group = taskGroupOf(alloc);
    const p = healthParams(alloc, group);
    const r = rt.registry.get(alloc.id);
    watches.set(alloc.id, { deploymentId: alloc.deploymentId, stop: p && r ? watchHealth(rt, routes, r, group, p) : () => undefined });
  };
  return {
    name: 'alloc_health',
    async prerun({ alloc }) {
      if (!watches.has(alloc.id)) start(alloc);
    },
    async update({ alloc }) {
      const w = watches.get(alloc.id);
      if (!w || w.deploymentId === alloc.deploymentId) return;
      w.stop();
      start(alloc);
    },
    destroy: stop,
    shutdown: stop,
  };
}
