/**
 * `createClient`: the registry of allocation runners on one node, the bus, the drivers, the state
 * store, and the effect actors every alloc machine runs with.
 * @module
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { map } from 'rxjs';
import { createActor, setup } from 'xstate';
import { createBus } from '../../bus/bus.ts';
import { allocMachine } from '../../machines/alloc.machine.ts';
import { taskMachine } from '../../machines/task.machine.ts';
import { realClock } from '../../model/clock.ts';
import { AllocExistsError, AllocNotFoundError, BerthError, ClientShutdownError, InvalidAllocationError } from '../../model/errors.ts';
import { parseAllocation } from '../../model/parse.ts';
import { isServerTerminal } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';
import { defaultChrootEnv } from '../allocdir/default-chroot.ts';
import { holdMountHelper } from '../allocdir/mounts.ts';
import { createExecDriver } from '../drivers/exec.ts';
import { createMockDriver } from '../drivers/mock.ts';
import { createRawExecDriver } from '../drivers/raw-exec.ts';
import type { Driver } from '../drivers/driver.ts';
import { detectCgroups } from '../cgroups/detect.ts';
import { createCgroupManager } from '../cgroups/manager.ts';
import { allocActors } from '../runner/alloc-actors.ts';
import { startStatsPublisher } from './stats-publisher.ts';
import { AllocRunnerImpl, type AllocRunnerOptions } from '../runner/alloc-runner.ts';
import type { Runtime } from '../runner/runtime.ts';
import { taskActors } from '../runner/task-actors.ts';
import { openStateStore } from '../state/state-store.ts';
import { serveRuntimeSnapshots } from '../migrate/serve.ts';
import type { SnapshotServer } from '../migrate/snapshot-server.ts';
import type { PrevAllocSource } from '../watchers/index.ts';
import { ClientViewers } from '../viewer/client-viewers.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { AllocRunner, Client, ClientOptions } from './types.ts';

/** A tiny statechart for the client itself, so the inspector shows it. */
const clientMachine = setup({
  types: { events: {} as { type: 'alloc.added' | 'alloc.removed' | 'shutdown' }, context: {} as { allocs: number } },
}).createMachine({
  id: 'client',
  context: { allocs: 0 },
  initial: 'running',
  states: {
    running: {
      on: {
        'alloc.added': { actions: ({ context }) => void context.allocs++ },
        'alloc.removed': { actions: ({ context }) => void context.allocs-- },
        shutdown: 'shutdown',
      },
    },
    shutdown: { type: 'final' },
  },
});

/** Checks every task's driver exists and accepts its config; returns `path: problem` lines. */
function driverIssues(alloc: Allocation, drivers: Readonly<Record<string, Driver>>): string[] {
  const issues: string[] = [];
  const gi = alloc.job.taskGroups.findIndex((g) => g.name === alloc.taskGroup);
  const group = alloc.job.taskGroups[gi]!;
  group.tasks.forEach((t, ti) => {
    const path = `job.taskGroups[${gi}].tasks[${ti}]`;
    const d = drivers[t.driver];
    if (!d) {
      issues.push(`${path}.driver: unknown driver ${JSON.stringify(t.driver)} (have ${Object.keys(drivers).sort().join(', ')})`);
      return;
    }
    try {
      d.validateConfig(t);
    } catch (e) {
      issues.push(`${path}.config: ${(e as Error).message}`);
    }
  });
  return issues;
}

/**
 * Creates a client.
 * @example
 * const client = createClient({ dataDir: '/var/lib/berth' });
 * const runner = client.addAlloc(parseAllocation(json));
 * await runner.waitFor('running');
 */
export function createClient(options: ClientOptions): Client {
  if (!options || typeof options.dataDir !== 'string' || options.dataDir === '') throw new BerthError('createClient: options.dataDir is required');
  const dataDir = resolve(options.dataDir);
  const clientAllocDir = resolve(options.allocDir ?? join(dataDir, 'alloc'));
  mkdirSync(clientAllocDir, { recursive: true });
  const clock = options.clock ?? realClock;
  const bus = createBus(() => clock.now());
  // Throws for a forced mode (v1, v2) this machine cannot give; 'auto' falls back to none.
  const detected = detectCgroups(options.cgroups);
  const cgroups = detected.ok ? createCgroupManager(detected.layout, { ...(options.cgroups?.pidsLimit ? { pidsLimit: options.cgroups.pidsLimit } : {}) }) : { unavailable: detected.reason };
  const drivers: Record<string, Driver> = {
    mock_driver: createMockDriver({ clock }),
    raw_exec: createRawExecDriver({ cgroups }),
    exec: createExecDriver({ cgroups }),
    ...(options.drivers ?? {}),
  };
  // Published once the caller had the chance to subscribe (the bus drops unheard messages).
  queueMicrotask(() => bus.publish('cgroups.detected', detected.ok
    ? { version: detected.layout.version, controllers: detected.layout.controllers, parent: Object.values(detected.layout.parents)[0]!, message: detected.summary }
    : { version: null, controllers: [], message: `no cgroups: ${detected.reason}` }));
  const chrootEnv = options.chrootEnv && Object.keys(options.chrootEnv).length > 0 ? options.chrootEnv : defaultChrootEnv;
  const rt: Runtime = {
    bus,
    clock,
    random: options.random ?? Math.random,
    drivers,
    chrootEnv,
    dataDir,
    clientAllocDir,
    nodeId: options.nodeId ?? 'local',
    maxKillTimeoutMs: options.maxKillTimeoutMs ?? 30_000,
    migrateTimeoutMs: options.migrateTimeoutMs ?? 600_000,
    store: openStateStore(join(dataDir, 'client', 'state.db'), { onError: (err) => bus.publish('client.error', { error: err.message }) }),
    ...(options.rpc ? { rpc: options.rpc } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.migrateToken ? { migrateToken: options.migrateToken } : {}),
    ...(options.tls ? { tls: { ...options.tls } } : {}),
    registry: new Map(),
  };
  const task = taskMachine.provide({ actors: taskActors(rt) });
  const logic = allocMachine.provide({ actors: { ...allocActors(rt), task } });
  const runners = new Map<string, AllocRunnerImpl>();
  const hooks = [...(options.hooks ?? [])];
  const clientActor = createActor(clientMachine, { id: 'client', ...(options.inspect ? { inspect: options.inspect } : {}) }).start();
  let shut = false;
  const releaseMountHelper = holdMountHelper();
  const snapshotServers = new Set<SnapshotServer>();
  const stopStats = options.statsIntervalMs && options.statsIntervalMs > 0
    ? startStatsPublisher({ bus, clock, intervalMs: options.statsIntervalMs, runners: () => [...runners.values()] })
    : undefined;
  // berth's own viewer and recorder: nothing is hooked until one is asked for.
  const viewers = new ClientViewers({
    bus,
    now: () => clock.now(),
    roots: () => [clientActor, ...[...runners.values()].map((r) => r.actor)],
    logSource: (id) => {
      const r = runners.get(id);
      return r && { logsDir: r.allocDir.logsDir, tasks: taskGroupOf(r.alloc()).tasks.map((t) => t.name), logs: (task, stream, o) => r.logs(task, stream, o) };
    },
  });
  if (options.record !== undefined) {
    try {
      viewers.record(options.record);
    } catch (e) {
      // Nothing half-made: the client never existed.
      clientActor.stop();
      rt.store.close();
      bus.close();
      throw e;
    }
  }

  /** Creates, registers and starts a runner. */
  const startRunner = (alloc: Allocation, extra: Pick<AllocRunnerOptions, 'previousRunner' | 'preemptedRunners' | 'restoredHandles'>) => {
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

  const client: Client = {
    bus,
    updates$: bus.of('alloc.updated').pipe(map((m) => m.alloc)),
    addAlloc(input) {
      if (shut) throw new ClientShutdownError();
      const alloc = parseAllocation(input);
      const issues = driverIssues(alloc, drivers);
      if (issues.length) throw new InvalidAllocationError(issues);
      if (runners.has(alloc.id)) throw new AllocExistsError(alloc.id);
      // As Nomad's client: pass the local runner of the previous alloc, and for each preempted
      // alloc its local runner or null (then a remote watcher asks the servers).
      const previousRunner: PrevAllocSource | undefined = alloc.previousAllocation ? runners.get(alloc.previousAllocation) : undefined;
      const preemptedRunners = alloc.preemptedAllocations?.length
        ? Object.fromEntries(alloc.preemptedAllocations.map((id) => [id, runners.get(id) ?? null]))
        : undefined;
      return startRunner(alloc, {
        ...(previousRunner ? { previousRunner } : {}),
        ...(preemptedRunners ? { preemptedRunners } : {}),
      });
    },
    updateAlloc(input) {
      if (shut) throw new ClientShutdownError();
      const alloc = parseAllocation(input);
      const r = runners.get(alloc.id);
      if (!r) throw new AllocNotFoundError(alloc.id);
      r.update(alloc);
    },
    async destroyAlloc(allocId) {
      const r = runners.get(allocId);
      if (!r) throw new AllocNotFoundError(allocId);
      await r.destroy();
    },
    async restore() {
      if (shut) throw new ClientShutdownError();
      const restored: AllocRunner[] = [];
      for (const saved of rt.store.load()) {
        if (runners.has(saved.alloc.id)) continue;
        let alloc: Allocation;
        try {
          alloc = parseAllocation(saved.alloc);
        } catch (e) {
          bus.publish('client.error', { allocId: saved.alloc?.id, error: `cannot restore allocation: ${(e as Error).message}` });
          continue;
        }
        const handles = { ...saved.handles };
        if (isServerTerminal(alloc)) {
          // It was being stopped when the last client went away: finish the job on its tasks.
          await Promise.all(Object.entries(handles).map(async ([task, h]) => {
            const d = drivers[h.driver];
            await d?.recover(h).then(() => d.stop(h, rt.maxKillTimeoutMs, 'SIGINT')).catch(() => {});
            await d?.destroy(h, true).catch(() => {});
            rt.store.deleteHandle(alloc.id, task);
            delete handles[task];
          }));
        }
        restored.push(startRunner(alloc, { restoredHandles: handles }));
      }
      return restored;
    },
    runner: (id) => runners.get(id),
    runners: () => [...runners.values()] as AllocRunner[],
    async serveSnapshots(opts) {
      if (shut) throw new ClientShutdownError();
      const srv = await serveRuntimeSnapshots(rt, opts);
      snapshotServers.add(srv);
      if (shut) await srv.close(); // shut down while binding
      return {
        url: srv.url,
        close: async () => {
          snapshotServers.delete(srv);
          await srv.close();
        },
      };
    },
    async serveViewer(opts) {
      if (shut) throw new ClientShutdownError();
      return viewers.serve(opts);
    },
    async shutdown() {
      if (shut) return;
      shut = true;
      await stopStats?.();
      await Promise.all([...snapshotServers].map((s) => s.close()));
      snapshotServers.clear();
      for (const r of runners.values()) r.stopActor();
      runners.clear();
      rt.registry.clear();
      clientActor.send({ type: 'shutdown' });
      clientActor.stop();
      await viewers.close();
      rt.store.close();
      bus.close();
      await Promise.all(Object.values(drivers).map((d) => (d as { shutdown?: () => Promise<void> }).shutdown?.()));
      await releaseMountHelper();
    },
  };
  return client;
}
