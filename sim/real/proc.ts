/**
 * What /proc says, for the real-process schedules: which processes of an alloc are alive. A
 * process belongs to an alloc when its environment has `NOMAD_ALLOC_ID=<id>` (a task) or its
 * command line names the alloc (an executor); a zombie counts as gone.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Is `pid` a live (non-zombie) process whose environment names `allocId`? */
export function liveTaskPid(pid: number, allocId: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
    return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`NOMAD_ALLOC_ID=${allocId}\0`);
  } catch {
    return false;
  }
}

/** Every live process of the alloc: tasks (environment) and executors (command line). */
export function liveOfAlloc(allocId: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(allocId)) {
        out.push(`${d} ${cmd.replace(/\0/g, ' ').trim().slice(0, 80)}`);
        continue;
      }
      if (readFileSync(`/proc/${d}/environ`, 'utf8').includes(`NOMAD_ALLOC_ID=${allocId}\0`)) out.push(`${d} (task)`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Pids a task's script recorded (one line per start). */
export function recordedPids(pidDir: string, allocId: string, task: string): number[] {
  try {
    return readFileSync(`${pidDir}/${allocId}.${task}`, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
