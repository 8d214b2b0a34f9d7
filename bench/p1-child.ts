/**
 * P1's measured part, in its own process (fresh heap; run as `nobody` for the non-root run).
 * mode 'berth': N allocs through a real client. mode 'floor': bare actors + plain fs (+ mounts).
 */
import { chmodSync, chownSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createActor } from 'xstate';
import { createClient } from '../actors/client/client.ts';
import { detectCgroups } from '../actors/cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../actors/cgroups/manager.ts';
import type { TaskCgroup } from '../actors/cgroups/types.ts';
import { createMockDriver } from '../actors/drivers/mock.ts';
import type { Driver } from '../actors/drivers/driver.ts';
import { shutdownMountHelper } from '../actors/allocdir/mounts.ts';
import { mockAlloc, waitStopped, waitTasksRunning } from './lib/allocs.ts';
import { batchMount } from './lib/fsutil.ts';
import { childDone, childLog, childPayload } from './lib/proc.ts';
import { now } from './lib/stats.ts';
import { five } from './lib/five-machine.ts';
import { NO_GC } from './lib/no-gc.ts';

interface Payload {
  mode: 'berth' | 'floor';
  n: number;
  dir: string;
  tool: string | null;
  /** berth only (P7): serve the viewer, and with 'page' wait for a page to connect first. */
  viewer?: 'off' | 'idle' | 'page';
  /**
   * P1 with cgroups: berth's parent cgroup name. berth gives every task a cgroup of its own
   * (detected and made by berth's cgroup manager, limits written, killed and removed at
   * destroy); the floor makes and removes the same dirs with plain mkdir/rmdir.
   */
  cgroupParent?: string;
}

const { mode, n, dir, tool, viewer = 'off', cgroupParent } = childPayload<Payload>();
const root = process.geteuid?.() === 0;

/** Task cgroups the berth side made and removed (checked against n). */
const cgroupCounts = { made: 0, removed: 0 };

/**
 * berth's mock driver with a task cgroup around each task, made by the client's cgroup
 * manager as raw_exec makes it (before the start) and removed as raw_exec removes it (at
 * destroy). A mock task has no process to put in it: what is measured is the cgroup's cost to
 * the lifecycle, at P1's scale, where real processes would measure process spawns instead.
 */
function mockWithCgroups(mgr: CgroupManager): Driver {
  const mock = createMockDriver();
  const cgs = new Map<string, TaskCgroup>();
  cgroupCounts.made = 0;
  return {
    ...mock,
    async start(config, signal) {
      const cg = await mgr.create({
        allocId: config.allocId,
        taskName: config.taskName,
        resources: config.task.resources ?? DEFAULT_RESOURCES,
        applyLimits: true,
      });
      cgs.set(`${config.allocId}/${config.taskName}`, cg);
      cgroupCounts.made++;
      return mock.start(config, signal);
    },
    async destroy(handle, force) {
      await mock.destroy(handle, force);
      const key = `${handle.config.allocId}/${handle.config.taskName}`;
      const cg = cgs.get(key);
      cgs.delete(key);
      if (cg && (await mgr.remove(cg))) cgroupCounts.removed++;
    },
  };
}

/** Nomad's default task resources, so each task cgroup gets a memory and a CPU limit written. */
const DEFAULT_RESOURCES = { cpu: 100, memoryMB: 300 };

/** The floor's limit writes: the same two limits, straight into the interface files. */
function floorLimits(parents: Record<string, string>): Array<[string, string, string]> {
  const mem = String(DEFAULT_RESOURCES.memoryMB * 1024 * 1024);
  if (parents.unified) return [[parents.unified, 'memory.max', mem]];
  return [
    ...(parents.memory ? [[parents.memory, 'memory.limit_in_bytes', mem] as [string, string, string]] : []),
    ...(parents.cpu ? [[parents.cpu, 'cpu.shares', String(DEFAULT_RESOURCES.cpu)] as [string, string, string]] : []),
  ];
}

/** berth's parent cgroup dirs (one per hierarchy) for `cgroupParent`, through berth's detection. */
function cgroupLayout() {
  const d = detectCgroups({ parent: cgroupParent! });
  if (!d.ok) throw new Error(`P1 with cgroups: ${d.reason}`);
  return d.layout;
}

async function floor(): Promise<Record<string, number>> {
  const allocRoot = path.join(dir, 'alloc');
  const tasksRoot = path.join(dir, 'client', 'tasks');
  mkdirSync(allocRoot, { recursive: true });
  const ids = Array.from({ length: n }, (_, i) => `a${String(i).padStart(8, '0')}-0000-0000-0000-000000000000`);
  // The directories berth makes (same modes; nobody-owned as root), and its driver state dir.
  const mk = (p: string, mode: number) => {
    mkdirSync(p, { mode });
    chmodSync(p, mode);
    if (root) chownSync(p, 65534, 65534);
  };
  const cgLayout = cgroupParent ? cgroupLayout() : undefined;
  const cgParents = cgLayout ? Object.values(cgLayout.parents) : [];
  const cgLimits = cgLayout ? floorLimits(cgLayout.parents) : [];
  const t0 = now();
  const actors = ids.map((id) => {
    const a = createActor(five, { id: `alloc-${id}` }).start();
    a.send({ type: 'next' }); // pending -> waiting
    const d = path.join(allocRoot, id);
    mkdirSync(d, { mode: 0o755 });
    mk(path.join(d, 'alloc'), 0o777);
    for (const s of ['logs', 'tmp', 'data']) mk(path.join(d, 'alloc', s), 0o777);
    mk(path.join(d, 'web'), 0o777);
    mk(path.join(d, 'web', 'local'), 0o777);
    mk(path.join(d, 'web', 'tmp'), 0o1777);
    mkdirSync(path.join(d, 'web', 'secrets'), { mode: 0o777 });
    mkdirSync(path.join(d, 'web', 'private'), { mode: 0o777 });
    mkdirSync(path.join(tasksRoot, id, 'web'), { recursive: true });
    for (const p of cgParents) mkdirSync(path.join(p, id, 'web'), { recursive: true });
    for (const [p, file, value] of cgLimits) writeFileSync(path.join(p, id, 'web', file), value);
    return a;
  });
  if (root) {
    await batchMount(
      tool,
      ids.flatMap(
        (id) =>
          [
            ['m', path.join(allocRoot, id, 'web', 'secrets')],
            ['m', path.join(allocRoot, id, 'web', 'private')],
          ] as Array<['m', string]>,
      ),
    );
  }
  for (const id of ids) {
    for (const s of ['secrets', 'private']) {
      const p = path.join(allocRoot, id, 'web', s);
      if (root) writeFileSync(path.join(p, '.nomad-mount'), '', { mode: 0o666 });
      chmodSync(p, 0o777);
      if (root) chownSync(p, 65534, 65534);
    }
  }
  for (const a of actors) a.send({ type: 'next' }); // -> running
  const t1 = now();
  for (const a of actors) a.send({ type: 'next' }); // -> stopping
  const t2 = now();
  if (root) {
    await batchMount(
      tool,
      ids.flatMap(
        (id) =>
          [
            ['u', path.join(allocRoot, id, 'web', 'secrets')],
            ['u', path.join(allocRoot, id, 'web', 'private')],
          ] as Array<['u', string]>,
      ),
    );
  }
  ids.forEach((id, i) => {
    for (const p of cgParents) {
      rmdirSync(path.join(p, id, 'web'));
      rmdirSync(path.join(p, id));
    }
    rmSync(path.join(tasksRoot, id), { recursive: true, force: true });
    rmSync(path.join(allocRoot, id), { recursive: true, force: true });
    actors[i]!.send({ type: 'next' }); // -> destroyed
    if (actors[i]!.getSnapshot().status !== 'done') throw new Error('floor actor not done');
  });
  const t3 = now();
  return { totalMs: t3 - t0, addMs: t1 - t0, stopMs: t2 - t1, destroyMs: t3 - t2 };
}

async function berth(): Promise<Record<string, number>> {
  const mgr = cgroupParent ? createCgroupManager(cgroupLayout()) : undefined;
  const client = createClient({
    dataDir: dir,
    ...NO_GC,
    ...(cgroupParent ? { cgroups: { parent: cgroupParent }, drivers: { mock_driver: mockWithCgroups(mgr!) } } : {}),
  });
  client.bus.of('client.error').subscribe((m) => childLog(`client.error: ${JSON.stringify(m)}`));
  client.bus.of('hook.error').subscribe((m) => childLog(`hook.error: ${JSON.stringify(m)}`));
  if (viewer !== 'off') {
    const srv = await client.serveViewer();
    childLog(`viewer-url ${srv.url}`);
    if (viewer === 'page') await srv.pageConnected();
  }
  const allocs = Array.from({ length: n }, () => mockAlloc());
  const t0 = now();
  const cpu0 = process.cpuUsage();
  const runners = allocs.map((a) => client.addAlloc(a));
  await Promise.all(runners.map(waitTasksRunning));
  const t1 = now();
  for (const a of allocs) client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
  await Promise.all(runners.map(waitStopped));
  const t2 = now();
  await Promise.all(runners.map((r) => r.destroy()));
  const t3 = now();
  const cpu = process.cpuUsage(cpu0);
  const bad = runners.filter((r) => r.alloc().clientStatus !== 'complete').length;
  if (bad) throw new Error(`${bad} allocs did not complete`);
  await client.shutdown();
  await shutdownMountHelper();
  if (cgroupParent && (cgroupCounts.made !== n || cgroupCounts.removed !== n))
    throw new Error(`P1 with cgroups: ${cgroupCounts.made} task cgroups made and ${cgroupCounts.removed} removed, expected ${n}`);
  return { totalMs: t3 - t0, addMs: t1 - t0, stopMs: t2 - t1, destroyMs: t3 - t2, cpuMs: (cpu.user + cpu.system) / 1000 };
}

try {
  const result = mode === 'floor' ? await floor() : await berth();
  childDone(result);
} finally {
  // berth's parent cgroups (one per hierarchy), empty once every task's cgroup is gone.
  if (cgroupParent)
    for (const p of Object.values(cgroupLayout().parents))
      try {
        rmdirSync(p);
      } catch {}
}
