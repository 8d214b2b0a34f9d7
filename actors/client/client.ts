/**
 * `createClient`: the registry of allocation runners on one node, the bus, the drivers, the state
 * store, and the effect actors every alloc machine runs with.
 * @module
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { map } from 'rxjs';
import { createActor, setup, type AnyActorRef } from 'xstate';
import { createBus } from '../../bus/bus.ts';
import { allocMachine } from '../../machines/alloc/index.ts';
import { taskMachine } from '../../machines/task/index.ts';
import { realClock } from '../../model/clock.ts';
import { AllocExistsError, AllocNotFoundError, BerthError, ClientShutdownError, InvalidAllocationError, unsupportedText } from '../../model/errors.ts';
import { checkAllocation, parseAllocation } from '../../model/parse.ts';
import type { Allocation } from '../../model/types.ts';
import { AllocDir } from '../allocdir/alloc-dir.ts';
import { defaultChrootEnv } from '../allocdir/default-chroot.ts';
import { holdMountHelper } from '../allocdir/mounts.ts';
import { realHostFs } from '../runner/host-fs.ts';
import { createExecDriver } from '../drivers/exec.ts';
import { createMockDriver } from '../drivers/mock.ts';
import { createRawExecDriver } from '../drivers/raw-exec.ts';
import { createDockerDriver, type DockerDriver } from '../drivers/docker/docker-driver.ts';
import type { Driver, DriverFingerprint } from '../drivers/driver.ts';
import { detectCgroups, parentCgroupName } from '../cgroups/detect.ts';
import { createCgroupManager } from '../cgroups/manager.ts';
import { allocActors } from '../runner/alloc-actors.ts';
import { startStatsPublisher } from './stats-publisher.ts';
import { AllocRunnerImpl, type AllocRunnerOptions } from '../runner/alloc-runner.ts';
import type { Runtime } from '../runner/runtime.ts';
import { taskActors } from '../runner/task-actors.ts';
import { openStateStore, quarantineStateStore, StateStoreError, type StoredAlloc } from '../state/state-store.ts';
import { stopUnownedExecutors } from './restore-audit.ts';
import { prestartTaskLogic } from '../artifacts/prestart.ts';
import { ServiceCatalog } from '../services/catalog.ts';
import { taskTemplatesLogic, templateEffectsLogic, templateRuntime } from '../runner/template-hook.ts';
import { allocHealthHook } from '../services/health.ts';
import { groupServicesHook, taskServicesLogic } from '../services/task-services.ts';
import { serveRuntimeSnapshots } from '../migrate/serve.ts';
import type { SnapshotServer } from '../migrate/snapshot-server.ts';
import type { PrevAllocSource } from '../watchers/index.ts';
import { ClientViewers } from '../viewer/client-viewers.ts';
import { seedMessages } from '../viewer/seed.ts';
import { checkRecordTarget } from '../viewer/recording.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { AllocRunner, Client, ClientOptions } from './types.ts';
import { AllocGarbageCollector, resolveGcOptions } from '../gc/index.ts';
import { errorText } from '../../model/error-text.ts';

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
      issues.push(`${path}.config: ${errorText(e)}`);
    }
  });
  return issues;
}

/** Saved allocs ordered so that each comes after the allocs it replaced or preempted. */
function watchedFirst<T extends { alloc: Allocation }>(saved: T[]): T[] {
  const byId = new Map(saved.map((s) => [s.alloc?.id, s]));
  const out: T[] = [];
  const seen = new Set<T>();
  const visit = (s: T) => {
    if (seen.has(s)) return;
    seen.add(s);
    for (const id of [s.alloc?.previousAllocation, ...(s.alloc?.preemptedAllocations ?? [])]) {
      const dep = id ? byId.get(id) : undefined;
      if (dep) visit(dep);
    }
    out.push(s);
  };
  saved.forEach(visit);
  return out;
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
  const gcSettings = resolveGcOptions(options); // before anything touches the disk
  if (options.record !== undefined) checkRecordTarget(options.record);
  const clock = options.clock ?? realClock;
  const bus = createBus(() => clock.now());
  // Throws for a forced mode (v1, v2) this machine cannot give; 'auto' falls back to none.
  const detected = detectCgroups(options.cgroups);
  const cgroups = detected.ok
    ? createCgroupManager(detected.layout, { ...(options.cgroups?.pidsLimit ? { pidsLimit: options.cgroups.pidsLimit } : {}) })
    : { unavailable: detected.reason };
  const drivers: Record<string, Driver> = {
    mock_driver: createMockDriver({ clock }),
    // One supervisor for both (its socket and log in the client's data dir).
    raw_exec: createRawExecDriver({ cgroups, supervisorDir: join(dataDir, 'client', 'supervisor') }),
    exec: createExecDriver({ cgroups, supervisorDir: join(dataDir, 'client', 'supervisor') }),
    docker: createDockerDriver({ ...options.docker, clock, onError: (error) => bus.publish('client.error', { error }) }),
    ...(options.drivers ?? {}),
  };
  // Published once the caller had the chance to subscribe (the bus drops unheard messages).
  queueMicrotask(() =>
    bus.publish(
      'cgroups.detected',
      detected.ok
        ? {
            version: detected.layout.version,
            controllers: detected.layout.controllers,
            parent: Object.values(detected.layout.parents)[0]!,
            message: detected.summary,
          }
        : { version: null, controllers: [], message: `no cgroups: ${detected.reason}`, ...(detected.detail ? { detail: detected.detail } : {}) },
    ),
  );
  // Only now, with every option checked (a forced cgroup mode this host lacks throws above).
  mkdirSync(clientAllocDir, { recursive: true });
  const storePath = join(dataDir, 'client', 'state.db');
  const repairs: string[] = []; // damaged stores moved aside by the open, told on the bus
  const chrootEnv = options.chrootEnv && Object.keys(options.chrootEnv).length > 0 ? options.chrootEnv : defaultChrootEnv;
  const catalog = new ServiceCatalog();
  const rt: Runtime = {
    bus,
    clock,
    random: options.random ?? Math.random,
    drivers,
    chrootEnv,
    dataDir,
    clientAllocDir,
    nodeId: options.nodeId ?? 'local',
    ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    ...(options.datacenter ? { datacenter: options.datacenter } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(detected.ok ? { parentCgroup: parentCgroupName(detected.layout) } : {}),
    maxKillTimeoutMs: options.maxKillTimeoutMs ?? 30_000,
    migrateTimeoutMs: options.migrateTimeoutMs ?? 600_000,
    store: (options.seams?.openStore ?? openStateStore)(storePath, {
      onError: (err) => bus.publish('client.error', { error: err.message }),
      ...(options.repairStateStore ? { repair: true, onRepair: (to: string) => repairs.push(to) } : {}),
    }),
    allocDirs: options.seams?.allocDirs ?? ((root, id) => new AllocDir(root, id)),
    fs: options.seams?.fs ?? realHostFs,
    ...(options.rpc ? { rpc: options.rpc } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.migrateToken ? { migrateToken: options.migrateToken } : {}),
    ...(options.tls ? { tls: { ...options.tls } } : {}),
    registry: new Map(),
    services: catalog,
    serviceAddress: options.serviceAddress ?? '127.0.0.1',
    templates: templateRuntime(options, clock, catalog),
  };
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
  const runners = new Map<string, AllocRunnerImpl>();
  // Built-in hooks first (as Nomad's own run before any other): group services, alloc health.
  const hooks = [groupServicesHook(rt), allocHealthHook(rt), ...(options.hooks ?? [])];
  const clientActor = createActor(clientMachine, { id: 'client', ...(options.inspect ? { inspect: options.inspect } : {}) }).start();
  let shut = false;
  const releaseMountHelper = holdMountHelper();
  const snapshotServers = new Set<SnapshotServer>();
  const stopStats =
    options.statsIntervalMs && options.statsIntervalMs > 0
      ? startStatsPublisher({ bus, clock, intervalMs: options.statsIntervalMs, runners: () => [...runners.values()] })
      : undefined;
  // A host's own actors (attachActor), shown until they stop.
  const hostActors = new Map<AnyActorRef, { unsubscribe(): void }>();
  // berth's own viewer and recorder: nothing is hooked until one is asked for.
  const viewers = new ClientViewers({
    bus,
    now: () => clock.now(),
    roots: () => [clientActor, ...[...runners.values()].map((r) => r.actor), ...hostActors.keys()],
    logSource: (id) => {
      const r = runners.get(id);
      return (
        r && {
          logsDir: r.allocDir.logsDir,
          tasks: taskGroupOf(r.alloc()).tasks.map((t) => t.name),
          logs: (task, stream, o) => r.logs(task, stream, o),
          ended: r.streamsEnded,
        }
      );
    },
    seed: () => seedMessages([...runners.values()], (id) => runners.get(id)?.alloc(), clock.now()),
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

  const gc = new AllocGarbageCollector({
    bus,
    clock,
    allocDir: clientAllocDir,
    ...gcSettings,
    host: {
      runner: (id) => runners.get(id),
      count: () => runners.size,
      isCopyingOut: (id) => (rt.registry.get(id)?.copiesOut.size ?? 0) > 0,
      flush: () => rt.store.flush(),
    },
  });

  /** Creates, registers and starts a runner. */
  const startRunner = (
    alloc: Allocation,
    extra: Pick<AllocRunnerOptions, 'previousRunner' | 'preemptedRunners' | 'restoredHandles' | 'destroyRequested' | 'lostRuns'>,
  ) => {
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

  /**
   * As Nomad's client: the local runner of the previous alloc, and for each preempted alloc its
   * local runner or null (then a remote watcher asks the servers).
   */
  const watchedRunners = (alloc: Allocation): Pick<AllocRunnerOptions, 'previousRunner' | 'preemptedRunners'> => {
    const previousRunner: PrevAllocSource | undefined = alloc.previousAllocation ? runners.get(alloc.previousAllocation) : undefined;
    const preemptedRunners = alloc.preemptedAllocations?.length
      ? Object.fromEntries(alloc.preemptedAllocations.map((id) => [id, runners.get(id) ?? null]))
      : undefined;
    return { ...(previousRunner ? { previousRunner } : {}), ...(preemptedRunners ? { preemptedRunners } : {}) };
  };

  const client: Client = {
    bus,
    updates$: bus.of('alloc.updated').pipe(map((m) => m.alloc)),
    services: () => rt.services.list(),
    async fingerprintDrivers() {
      const entries = await Promise.all(
        Object.entries(drivers).map(async ([name, d]): Promise<[string, DriverFingerprint]> => [
          name,
          d.fingerprint
            ? await d.fingerprint().catch((e: unknown) => ({ detected: false, healthy: false, healthDescription: errorText(e), attributes: {} }))
            : { detected: true, healthy: true, healthDescription: 'Healthy', attributes: { [`driver.${name}`]: '1' } },
        ]),
      );
      return Object.fromEntries(entries);
    },
    checks(allocId) {
      const r = runners.get(allocId);
      return r ? rt.services.checksOf(allocId, r.alloc().taskGroup) : [];
    },
    addAlloc(input) {
      if (shut) throw new ClientShutdownError();
      // A missing node id is this client's; a driver the client lacks is an issue of the parse.
      const { alloc, warnings } = checkAllocation(input, {
        nodeId: rt.nodeId,
        drivers: Object.keys(drivers),
        unsupported: options.unsupported,
        nodeCores: availableParallelism(),
      });
      const issues = driverIssues(alloc, drivers);
      if (issues.length) throw new InvalidAllocationError(issues);
      if (runners.has(alloc.id)) throw new AllocExistsError(alloc.id);
      for (const w of warnings) bus.publish('alloc.unsupported', { allocId: alloc.id, ...w, message: unsupportedText(w) });
      const runner = startRunner(alloc, watchedRunners(alloc));
      gc.added(runner); // what it waits on is never collected while it waits
      return runner;
    },
    updateAlloc(input) {
      if (shut) throw new ClientShutdownError();
      const alloc = parseAllocation(input, { nodeId: rt.nodeId, unsupported: options.unsupported });
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
      const destroying: Promise<void>[] = [];
      for (const to of repairs.splice(0)) bus.publish('client.error', { error: `state store ${storePath} was damaged: moved aside to ${to}` });
      let stored: StoredAlloc[];
      try {
        stored = rt.store.load();
      } catch (e) {
        // Damaged under a running client: move it aside (when allowed) and keep what the
        // executors prove; otherwise a typed error naming the file and what to do.
        if (!(e instanceof StateStoreError) || !options.repairStateStore || options.seams?.openStore) throw e;
        rt.store.close();
        const to = quarantineStateStore(storePath);
        bus.publish('client.error', { error: `state store ${storePath} was damaged: moved aside to ${to}` });
        rt.store = openStateStore(storePath, { onError: (err) => bus.publish('client.error', { error: err.message }) });
        stored = [];
      }
      const parsed: Array<{ saved: StoredAlloc; alloc: Allocation }> = [];
      for (const saved of watchedFirst(stored)) {
        if (runners.has(saved.alloc.id)) continue;
        try {
          parsed.push({ saved, alloc: parseAllocation(saved.alloc) });
        } catch (e) {
          bus.publish('client.error', { allocId: saved.alloc?.id, error: `cannot restore allocation: ${errorText(e)}` });
        }
      }
      // Every live executor is accounted for before any alloc starts: adopted through its handle,
      // or stopped and reported (never left unowned, never started beside itself).
      const stopped = await stopUnownedExecutors(
        dataDir,
        parsed.map((p) => ({ allocId: p.alloc.id, handles: p.saved.handles })),
        (id) => runners.has(id),
        (allocId, error) => bus.publish('client.error', { allocId, error }),
      );
      // A stopped task of an alloc the store does not know leaves its alloc dir (and its
      // secrets and private mounts) with no runner to destroy it: destroyed here, best effort.
      const known = new Set([...parsed.map((p) => p.alloc.id), ...runners.keys()]);
      for (const allocId of new Set(stopped.map((e) => e.allocId))) {
        if (known.has(allocId)) continue;
        try {
          await rt.allocDirs(clientAllocDir, allocId).destroy();
          bus.publish('client.error', { allocId, error: `removed the alloc dir of allocation ${allocId}, which the state store does not know` });
        } catch (e) {
          bus.publish('client.error', { allocId, error: `cannot remove the alloc dir of unknown allocation ${allocId}: ${errorText(e)}` });
        }
      }
      for (const { saved, alloc } of parsed) {
        // What the restored alloc does with its handles (reattach, kill, finish a destroy) is
        // its chart's decision; a destroy that had begun is finished before restore returns.
        // An alloc restored before its tasks ever started waits for its victims again: it gets
        // their runners (restored first) as addAlloc would.
        const lostRuns = stopped.filter((e) => e.allocId === alloc.id).map((e) => e.task);
        const runner = startRunner(alloc, {
          ...watchedRunners(alloc),
          restoredHandles: { ...saved.handles },
          ...(lostRuns.length ? { lostRuns } : {}),
          ...(saved.destroying ? { destroyRequested: true } : {}),
        });
        if (saved.destroying) destroying.push(runner.destroy());
        else restored.push(runner);
      }
      await Promise.all(destroying);
      // Nomad's dangling container reconciler, once every alloc is back: a container berth's
      // labels name for an alloc this client does not hold is removed (its alloc was lost with
      // a state store, or collected). Only for a host that configured the docker plugin
      // (`ClientOptions.docker`): others never talk to an Engine at restore.
      const docker = drivers.docker as Partial<DockerDriver> | undefined;
      if (options.docker && docker?.removeDangling && docker.plugin?.gc.danglingContainers && (await docker.fingerprint!()).detected) {
        const owned = new Set([...parsed.map((p) => p.alloc.id), ...runners.keys()]);
        for (const id of await docker.removeDangling(owned))
          bus.publish('client.error', { error: `docker: removed dangling container ${id.slice(0, 12)} (no alloc of this client owns it)` });
      }
      return restored;
    },
    runner: (id) => runners.get(id),
    gc: () => (shut ? Promise.reject(new ClientShutdownError()) : gc.collectAll()),
    gcAlloc: (allocId) => (shut ? Promise.reject(new ClientShutdownError()) : gc.collect(allocId)),
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
    attachActor(actor) {
      if (shut || hostActors.has(actor)) return () => undefined;
      const detach = () => {
        hostActors.get(actor)?.unsubscribe();
        hostActors.delete(actor);
      };
      hostActors.set(actor, { unsubscribe: () => undefined });
      viewers.attach(actor);
      const sub = actor.subscribe({ complete: detach, error: detach });
      if (hostActors.has(actor)) hostActors.set(actor, sub);
      else sub.unsubscribe();
      return detach;
    },
    async serveViewer(opts) {
      if (shut) throw new ClientShutdownError();
      return viewers.serve(opts);
    },
    async shutdown() {
      if (shut) return;
      shut = true;
      gc.stop();
      await stopStats?.();
      await Promise.all([...snapshotServers].map((s) => s.close()));
      snapshotServers.clear();
      // Shutdown hooks run on every runner (concurrently, as Nomad's Shutdown does), then the actors stop.
      await Promise.all([...runners.values()].map((r) => r.shutdown()));
      runners.clear();
      rt.registry.clear();
      for (const sub of hostActors.values()) sub.unsubscribe();
      hostActors.clear();
      clientActor.send({ type: 'shutdown' });
      clientActor.stop();
      await viewers.close();
      rt.store.close();
      bus.close();
      await Promise.all(Object.values(drivers).map((d) => d.shutdown?.()));
      await releaseMountHelper();
    },
  };
  return client;
}
