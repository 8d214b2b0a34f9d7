/**
 * A client's restore: its allocations back from the state store after a restart or a crash,
 * every live executor accounted for before any alloc starts, and what no alloc owns any more
 * (alloc dirs, Docker containers) removed.
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import { errorText } from '../../model/error-text.ts';
import { parseAllocation } from '../../model/parse.ts';
import type { Allocation } from '../../model/types.ts';
import type { DockerDriver } from '../drivers/docker/docker-driver.ts';
import type { Driver } from '../drivers/driver.ts';
import type { AllocRunnerImpl } from '../runner/alloc-runner.ts';
import type { Runtime } from '../runner/runtime.ts';
import { openStateStore, quarantineStateStore, StateStoreError, type StoredAlloc } from '../state/state-store.ts';
import { stopUnownedExecutors } from './restore-audit.ts';
import { watchedRunners, type RunnerExtras } from './runners.ts';
import type { AllocRunner, ClientOptions } from './types.ts';

/** What {@link restoreAllocs} works on: the client's parts. */
export interface RestoreHost {
  rt: Runtime;
  options: ClientOptions;
  bus: Bus;
  drivers: Readonly<Record<string, Driver>>;
  runners: Map<string, AllocRunnerImpl>;
  dataDir: string;
  clientAllocDir: string;
  storePath: string;
  /** Damaged stores the open moved aside, not told yet (emptied here). */
  repairs: string[];
  start(alloc: Allocation, extra: RunnerExtras): AllocRunnerImpl;
}

/** Saved allocs ordered so that each comes after the allocs it replaced or preempted. */
export function watchedFirst<T extends { alloc: Allocation }>(saved: T[]): T[] {
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

/** {@link Client.restore}: the runners restored (those whose destroy had begun are finished first, and not among them). */
export async function restoreAllocs(host: RestoreHost): Promise<AllocRunner[]> {
  const { rt, bus, runners } = host;
  const restored: AllocRunner[] = [];
  const destroying: Promise<void>[] = [];
  for (const to of host.repairs.splice(0)) bus.publish('client.error', { error: `state store ${host.storePath} was damaged: moved aside to ${to}` });
  const parsed: Array<{ saved: StoredAlloc; alloc: Allocation }> = [];
  for (const saved of watchedFirst(loadStore(host))) {
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
    host.dataDir,
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
      await rt.allocDirs(host.clientAllocDir, allocId).destroy();
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
    const runner = host.start(alloc, {
      ...watchedRunners(runners, alloc),
      restoredHandles: { ...saved.handles },
      ...(lostRuns.length ? { lostRuns } : {}),
      ...(saved.destroying ? { destroyRequested: true } : {}),
    });
    if (saved.destroying) destroying.push(runner.destroy());
    else restored.push(runner);
  }
  await Promise.all(destroying);
  await removeDanglingContainers(host, () => new Set([...parsed.map((p) => p.alloc.id), ...runners.keys()]));
  return restored;
}

/** The saved allocs, or none when the store was damaged and is moved aside. */
function loadStore(host: RestoreHost): StoredAlloc[] {
  const { rt, options, bus, storePath } = host;
  try {
    return rt.store.load();
  } catch (e) {
    // Damaged under a running client: move it aside (when allowed) and keep what the
    // executors prove; otherwise a typed error naming the file and what to do.
    if (!(e instanceof StateStoreError) || !options.repairStateStore || options.seams?.openStore) throw e;
    rt.store.close();
    const to = quarantineStateStore(storePath);
    bus.publish('client.error', { error: `state store ${storePath} was damaged: moved aside to ${to}` });
    rt.store = openStateStore(storePath, { onError: (err) => bus.publish('client.error', { error: err.message }) });
    return [];
  }
}

/**
 * Nomad's dangling container reconciler, once every alloc is back: a container berth's labels
 * name for an alloc this client does not hold (`owned`, asked once the Engine answered) is removed (its alloc was lost with a
 * state store, or collected). Only for a host that configured the docker plugin
 * (`ClientOptions.docker`): others never talk to an Engine at restore.
 */
async function removeDanglingContainers(host: RestoreHost, owned: () => Set<string>): Promise<void> {
  const docker = host.drivers.docker as Partial<DockerDriver> | undefined;
  if (!host.options.docker || !docker?.removeDangling || !docker.plugin?.gc.danglingContainers || !(await docker.fingerprint!()).detected) return;
  for (const id of await docker.removeDangling(owned()))
    host.bus.publish('client.error', { error: `docker: removed dangling container ${id.slice(0, 12)} (no alloc of this client owns it)` });
}
