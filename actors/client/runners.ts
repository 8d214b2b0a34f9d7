/**
 * The client's allocation runners: the machines they run (the alloc and task charts with the
 * client's effect actors), how one is made, registered and started, and the local runners a new
 * alloc watches.
 * @module
 */
import type { AnyActorRef } from 'xstate';
import { allocMachine } from '../../machines/alloc/index.ts';
import { taskMachine } from '../../machines/task/index.ts';
import type { Allocation } from '../../model/types.ts';
import { prestartTaskLogic } from '../artifacts/prestart.ts';
import { allocActors } from '../runner/alloc-actors.ts';
import { AllocRunnerImpl, type AllocRunnerOptions } from '../runner/alloc-runner.ts';
import type { RunnerHook } from '../runner/hooks.ts';
import type { Runtime } from '../runner/runtime.ts';
import { taskActors } from '../runner/task-actors.ts';
import { taskTemplatesLogic, templateEffectsLogic } from '../runner/template-hook.ts';
import { allocHealthHook } from '../services/health.ts';
import { groupServicesHook, taskServicesLogic } from '../services/task-services.ts';
import type { ClientViewers } from '../viewer/client-viewers.ts';
import type { PrevAllocSource } from '../watchers/index.ts';
import type { ClientOptions } from './types.ts';

/** What a runner is started with besides its alloc. */
export type RunnerExtras = Pick<AllocRunnerOptions, 'previousRunner' | 'preemptedRunners' | 'restoredHandles' | 'destroyRequested' | 'lostRuns'>;

/** What every runner of a client runs: the alloc chart provided with the effect actors, and the hooks. */
export interface RunnerLogic {
  logic: AllocRunnerOptions['logic'];
  hooks: readonly RunnerHook[];
}

/**
 * The alloc and task charts provided with the client's effect actors, and the hooks: the
 * built-in ones first (as Nomad's own run before any other: group services, alloc health), then
 * the host's.
 */
export function runnerLogic(rt: Runtime, options: ClientOptions): RunnerLogic {
  const task = taskMachine.provide({
    actors: {
      ...taskActors(rt),
      prestartTask: prestartTaskLogic(rt, options.artifacts),
      taskServices: taskServicesLogic(rt),
      taskTemplates: taskTemplatesLogic(rt),
      templateEffects: templateEffectsLogic(rt),
    },
  });
  const logic = allocMachine.provide({ actors: { ...allocActors(rt), task } });
  return { logic, hooks: [groupServicesHook(rt), allocHealthHook(rt), ...(options.hooks ?? [])] };
}

/** What {@link runnerStarter} makes runners with, registers them in and tells about them. */
export interface RunnerHost extends RunnerLogic {
  rt: Runtime;
  options: ClientOptions;
  runners: Map<string, AllocRunnerImpl>;
  viewers: ClientViewers;
  /** The client's own actor: told of each runner added and removed. */
  clientActor: AnyActorRef;
}

/** A function that creates, registers and starts a runner. */
export function runnerStarter(host: RunnerHost): (alloc: Allocation, extra: RunnerExtras) => AllocRunnerImpl {
  const { rt, options, runners, viewers, clientActor, logic, hooks } = host;
  return (alloc, extra) => {
    const runner = new AllocRunnerImpl({
      rt,
      logic,
      alloc,
      hooks,
      ...extra,
      ...(options.inspect ? { inspect: options.inspect } : {}),
      ...(options.prevAllocWaitTimeoutMs !== undefined ? { prevAllocWaitTimeoutMs: options.prevAllocWaitTimeoutMs } : {}),
      onDestroyed: (r) => {
        if (runners.get(r.allocId) === r) runners.delete(r.allocId);
        clientActor.send({ type: 'alloc.removed' });
      },
    });
    runners.set(alloc.id, runner);
    viewers.attach(runner.actor);
    clientActor.send({ type: 'alloc.added' });
    return runner.start();
  };
}

/**
 * As Nomad's client: the local runner of the previous alloc, and for each preempted alloc its
 * local runner or null (then a remote watcher asks the servers).
 */
export function watchedRunners(
  runners: ReadonlyMap<string, AllocRunnerImpl>,
  alloc: Allocation,
): Pick<AllocRunnerOptions, 'previousRunner' | 'preemptedRunners'> {
  const previousRunner: PrevAllocSource | undefined = alloc.previousAllocation ? runners.get(alloc.previousAllocation) : undefined;
  const preemptedRunners = alloc.preemptedAllocations?.length
    ? Object.fromEntries(alloc.preemptedAllocations.map((id) => [id, runners.get(id) ?? null]))
    : undefined;
  return { ...(previousRunner ? { previousRunner } : {}), ...(preemptedRunners ? { preemptedRunners } : {}) };
}
