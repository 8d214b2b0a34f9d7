/** Helpers for the real-cgroup specs: a task's handle and cgroup, /proc checks, CPU counters. */
import fs from 'node:fs';
import path from 'node:path';
import type { AllocRunner } from '../../../../actors/client/types.ts';
import type { TaskHandle } from '../../../../actors/drivers/driver.ts';
import type { TaskCgroup } from '../../../../actors/cgroups/types.ts';
import { cgroupPids } from '../../../../actors/cgroups/procs.mjs';

/** The live driver handle of a running task (read from the task actor's context). */
export function handleOf(r: AllocRunner, task: string): TaskHandle | undefined {
  const child = (r as unknown as { actor: { getSnapshot(): { children: Record<string, { getSnapshot(): { context: { handle?: TaskHandle } } }> } } })
    .actor.getSnapshot().children[`task-${r.allocId}-${task}`];
  return child?.getSnapshot().context.handle;
}

/** The task's cgroup from its handle. */
export function cgroupOf(r: AllocRunner, task: string): TaskCgroup {
  const cg = handleOf(r, task)?.state.cgroup as TaskCgroup | undefined;
  if (!cg) throw new Error(`task ${task} has no cgroup`);
  return cg;
}

/** /proc/<pid>/stat fields after the command (index 0 = state, 3 = session). */
function statFields(pid: number): string[] | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie. */
export function running(pid: number): boolean {
  const f = statFields(pid);
  return !!f && f[0] !== 'Z' && f[0] !== 'X';
}

/** The session id of a process. */
export const sessionOf = (pid: number) => Number(statFields(pid)?.[3]);

/** Polls `pred` every 20 ms until it holds or `ms` pass (then throws `what`). */
export async function until(pred: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
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
