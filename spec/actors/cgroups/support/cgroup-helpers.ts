/** Helpers for the real-cgroup specs: a task's handle and cgroup, sessions, CPU counters. */
import fs from 'node:fs';
import path from 'node:path';
import type { AllocRunner } from '../../../../actors/client/types.ts';
import type { TaskHandle } from '../../../../actors/drivers/driver.ts';
import type { TaskCgroup } from '../../../../actors/cgroups/types.ts';
import { cgroupPids } from '../../../../actors/cgroups/procs.mjs';

/** The live driver handle of a running task (read from the task actor's context). */
export function handleOf(r: AllocRunner, task: string): TaskHandle | undefined {
  const child = (
    r as unknown as { actor: { getSnapshot(): { children: Record<string, { getSnapshot(): { context: { handle?: TaskHandle } } }> } } }
  ).actor.getSnapshot().children[`task-${r.allocId}-${task}`];
  return child?.getSnapshot().context.handle;
}

/** The task's cgroup from its handle. */
export function cgroupOf(r: AllocRunner, task: string): TaskCgroup {
  const cg = handleOf(r, task)?.state.cgroup as TaskCgroup | undefined;
  if (!cg) throw new Error(`task ${task} has no cgroup`);
  return cg;
}

/** The session id of a process (field 6 of /proc/<pid>/stat). */
export function sessionOf(pid: number): number {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[3]);
  } catch {
    return NaN;
  }
}

/** Pids in the task's cgroup. */
export const pidsIn = (cg: TaskCgroup) => cgroupPids(cg);

/** A cgroup dir still exists in any hierarchy. */
export const anyDirLeft = (dirs: string[]) => dirs.filter((d) => fs.existsSync(d));

/** The alloc's cgroup dirs (parents of the task's). */
export const allocDirsOf = (cg: TaskCgroup) => Object.values(cg.paths).map((p) => path.dirname(p));

/** CPU time (ns) the task's cgroup consumed (v1 cpuacct.usage, v2 cpu.stat usage_usec). */
export function cpuNs(cg: TaskCgroup): number {
  if (cg.version === 'v1') return Number(fs.readFileSync(path.join(cg.paths.cpuacct!, 'cpuacct.usage'), 'utf8'));
  const m = /usage_usec (\d+)/.exec(fs.readFileSync(path.join(cg.paths.unified!, 'cpu.stat'), 'utf8'));
  return Number(m?.[1] ?? 0) * 1000;
}
