/**
 * The task runner's service hooks: `taskServices`, the callback actor the task chart invokes
 * while a task runs (poststart: register its services and run their checks; stopped when the
 * task leaves `running`: deregister, before any shutdown delay or kill), and the alloc runner
 * hook for group services (prerun: register; the alloc entering `stopping` (seen on the bus),
 * destroy, shutdown: deregister; no preKill or postrun hook, so a stop waits on nothing of ours).
 * A check_restart restarts its task through the task chart ("Restart Signaled", a failure); a
 * group service's restarts the alloc's running tasks, as Nomad's group service hook hands its
 * check watcher the alloc runner (`Restart`: the group's delay, the preTaskRestart hooks, then
 * every running task, each a failure), whether or not the check names a task.
 * @module
 */
import { byAlloc } from '../../bus/by-alloc.ts';
import { fromCallback } from 'xstate';
import type { TaskMachineEvent } from '../../machines/task/index.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { Allocation, Service, Task } from '../../model/types.ts';
import { buildTaskEnv, interpolateEnv } from '../drivers/env.ts';
import { taskEnvironment } from '../runner/task-actors.ts';
import type { RunnerHook } from '../runner/hooks.ts';
import type { Runtime } from '../runner/runtime.ts';
import { startServiceSet, type ServiceSetDeps } from './service-set.ts';

function depsOf(rt: Runtime): ServiceSetDeps {
  return {
    clock: rt.clock,
    bus: rt.bus,
    catalog: rt.services,
    node: { nodeId: rt.nodeId, datacenter: rt.datacenter ?? 'dc1', address: rt.serviceAddress },
  };
}

/**
 * The environment a group service is interpolated with, as Nomad builds it for the alloc
 * without a task: the alloc's, job's and group's variables, the ports, job and group meta, the
 * node's attributes; no task name, task dirs, limits or task env.
 */
export function groupEnvironment(rt: Runtime, alloc: Allocation): Record<string, string> {
  const noTask: Task = { name: '', driver: '', config: {} };
  const env = buildTaskEnv({
    alloc,
    task: noTask,
    taskDir: { dir: '', localDir: '', secretsDir: '' },
    allocDir: { dir: '', sharedDir: '' },
    nodeId: rt.nodeId,
    nodeName: rt.nodeName,
    datacenter: rt.datacenter,
    region: rt.region,
  });
  for (const k of ['NOMAD_TASK_NAME', 'NOMAD_TASK_DIR', 'NOMAD_SECRETS_DIR', 'NOMAD_ALLOC_DIR']) delete env[k];
  return env;
}

/** A service with `${VAR}` replaced from its task's (or, for a group service, the alloc's) environment, as Nomad interpolates it. */
export function interpolateService(s: Service, env: Record<string, string>): Service {
  const i = (t: string) => interpolateEnv(t, env);
  return {
    ...s,
    name: i(s.name),
    ...(s.tags ? { tags: s.tags.map(i) } : {}),
    ...(s.meta ? { meta: Object.fromEntries(Object.entries(s.meta).map(([k, v]) => [k, i(v)])) } : {}),
    ...(s.portLabel ? { portLabel: i(s.portLabel) } : {}),
    ...(s.address ? { address: i(s.address) } : {}),
    ...(s.checks
      ? {
          checks: s.checks.map((c) => ({
            ...c,
            ...(c.path ? { path: i(c.path) } : {}),
            ...(c.command ? { command: i(c.command) } : {}),
            ...(c.args ? { args: c.args.map(i) } : {}),
            ...(c.header ? { header: Object.fromEntries(Object.entries(c.header).map(([k, vs]) => [k, vs.map(i)])) } : {}),
          })),
        }
      : {}),
  };
}

/** The `taskServices` actor of a runtime (see the module doc). */
export function taskServicesLogic(rt: Runtime) {
  return fromCallback<TaskMachineEvent, { allocId: string; taskName: string; startedAt: number }>(({ input, sendBack }) => {
    const r = rt.registry.get(input.allocId);
    if (!r) return undefined;
    const alloc = r.serverAlloc();
    const group = taskGroupOf(alloc);
    const task = group.tasks.find((t) => t.name === input.taskName);
    if (!task?.services?.length) return undefined;
    const taskDir = r.allocDir.taskDir(task.name);
    const chroot = rt.drivers[task.driver]?.capabilities.fsIsolation === 'chroot';
    const env = taskDir ? taskEnvironment(rt, alloc, task, taskDir, r.allocDir, chroot) : {};
    const set = startServiceSet(depsOf(rt), {
      alloc,
      owner: { task: task.name, group: group.name },
      services: task.services.map((s) => interpolateService(s, env)),
      startedAt: rt.clock.now(),
      exec: (name, argv, o) => r.exec(name, argv, o),
      restart: (reason) => sendBack({ type: 'restart', time: rt.clock.now(), reason, failure: true }),
    });
    return () => set.stop();
  });
}

/**
 * The alloc runner hook that runs the group's services (see the module doc). As Nomad's group
 * service hook deregisters before the group's shutdown_delay, the services go as soon as the
 * alloc starts stopping (its chart's `stopping` state, seen on the bus), before that delay.
 */
export function groupServicesHook(rt: Runtime): RunnerHook {
  const sets = new Map<string, { stop(): void }>();
  // One bus subscription for every alloc's services (see byAlloc).
  const allocStates = byAlloc(rt.bus, 'alloc.state');
  const stop = async ({ alloc }: { alloc: { id: string } }) => {
    sets.get(alloc.id)?.stop();
    sets.delete(alloc.id);
  };
  return {
    name: 'group_services',
    async prerun({ alloc }) {
      const group = taskGroupOf(alloc);
      if (!group.services?.length || sets.has(alloc.id)) return;
      const r = rt.registry.get(alloc.id);
      const env = groupEnvironment(rt, alloc);
      const set = startServiceSet(depsOf(rt), {
        alloc,
        owner: { group: group.name },
        services: group.services.map((s) => interpolateService(s, env)),
        startedAt: rt.clock.now(),
        ...(r
          ? {
              exec: (name, argv, o) => r.exec(name, argv, o),
              // As Nomad's group service hook, whose restarter is the alloc runner: every running task.
              restart: (reason) => r.restartRunningFailed(reason),
            }
          : {}),
      });
      const off = allocStates.on(alloc.id, (m) => {
        if (m.to === 'stopping' || m.to === 'destroyed') void stop({ alloc });
      });
      sets.set(alloc.id, {
        stop: () => {
          off();
          set.stop();
        },
      });
    },
    destroy: stop,
    shutdown: stop,
  };
}
