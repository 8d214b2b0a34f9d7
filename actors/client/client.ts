/**
 * `createClient`: the registry of allocation runners on one node, the bus, the drivers, the state
 * store, and the effect actors every alloc machine runs with. The parts are made in their own
 * files (`cgroups.ts`, `drivers.ts`, `runtime.ts`, `runners.ts`, `viewer-host.ts`,
 * `restore.ts`); this one puts them together and holds the client's methods.
 * @module
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { map } from 'rxjs';
import { createActor } from 'xstate';
import { createBus } from '../../bus/bus.ts';
import { realClock } from '../../model/clock.ts';
import { AllocExistsError, AllocNotFoundError, BerthError, ClientShutdownError, InvalidAllocationError, unsupportedText } from '../../model/errors.ts';
import { checkAllocation, parseAllocation } from '../../model/parse.ts';
import { holdMountHelper } from '../allocdir/mounts.ts';
import { AllocGarbageCollector, resolveGcOptions } from '../gc/index.ts';
import { serveRuntimeSnapshots } from '../migrate/serve.ts';
import type { SnapshotServer } from '../migrate/snapshot-server.ts';
import type { AllocRunnerImpl } from '../runner/alloc-runner.ts';
import { checkRecordTarget } from '../viewer/recording.ts';
import { announceCgroups, clientCgroups } from './cgroups.ts';
import { clientMachine } from './client-machine.ts';
import { clientDrivers, driverIssues, fingerprintDrivers } from './drivers.ts';
import { HostActors } from './host-actors.ts';
import { restoreAllocs } from './restore.ts';
import { runnerLogic, runnerStarter, watchedRunners } from './runners.ts';
import { clientRuntime } from './runtime.ts';
import { startStatsPublisher } from './stats-publisher.ts';
import type { AllocRunner, Client, ClientOptions } from './types.ts';
import { clientViewers } from './viewer-host.ts';

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
  const { detected, cgroups } = clientCgroups(options);
  const drivers = clientDrivers(options, { dataDir, clock, bus, cgroups });
  announceCgroups(bus, detected);
  // Only now, with every option checked (a forced cgroup mode this host lacks throws above).
  mkdirSync(clientAllocDir, { recursive: true });
  const storePath = join(dataDir, 'client', 'state.db');
  const repairs: string[] = []; // damaged stores moved aside by the open, told on the bus
  const rt = clientRuntime(options, { bus, clock, drivers, detected, dataDir, clientAllocDir, storePath, onRepair: (to) => repairs.push(to) });
  const machines = runnerLogic(rt, options);
  const runners = new Map<string, AllocRunnerImpl>();
  const clientActor = createActor(clientMachine, { id: 'client', ...(options.inspect ? { inspect: options.inspect } : {}) }).start();
  let shut = false;
  const releaseMountHelper = holdMountHelper();
  const snapshotServers = new Set<SnapshotServer>();
  const stopStats =
    options.statsIntervalMs && options.statsIntervalMs > 0
      ? startStatsPublisher({ bus, clock, intervalMs: options.statsIntervalMs, runners: () => [...runners.values()] })
      : undefined;
  const hostActors = new HostActors();
  const viewers = clientViewers({ bus, clock, clientActor, runners, hostActors });
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
  const startRunner = runnerStarter({ ...machines, rt, options, runners, viewers, clientActor });

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

  const client: Client = {
    bus,
    updates$: bus.of('alloc.updated').pipe(map((m) => m.alloc)),
    services: () => rt.services.list(),
    fingerprintDrivers: () => fingerprintDrivers(drivers),
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
      const runner = startRunner(alloc, watchedRunners(runners, alloc));
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
      return restoreAllocs({ rt, options, bus, drivers, runners, dataDir, clientAllocDir, storePath, repairs, start: startRunner });
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
    attachActor: (actor) => (shut ? () => undefined : hostActors.attach(actor, (a) => viewers.attach(a))),
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
