/**
 * What the executors under a data dir prove, whatever the state store says: every task whose
 * executor is alive (`<dataDir>/client/tasks/<allocId>/<task>/`, its `executor.json` on the
 * executor's command line, or a `state.json` whose executor pid is still that process). A restore
 * holds this against the store's handles: a live executor no usable handle accounts for is
 * stopped and reported, never left running unowned nor started a second time.
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TaskCgroup } from '../../cgroups/types.ts';
import { removeCgroup } from '../../cgroups/procs.mjs';
import { isSameProcess, readExecutorState, readJson, stateFiles } from './client.ts';
import type { ExecutorSpec } from './protocol.ts';

/** One task whose executor is alive. */
export interface LiveExecutor {
  allocId: string;
  task: string;
  stateDir: string;
  /** Live executor processes of this state dir (one, unless a start raced a crash). */
  executorPids: number[];
  /** The task's process group, from `state.json`, when the start got that far. */
  pgid?: number;
  /** The task's cgroup, from `executor.json`. */
  cgroup?: TaskCgroup;
}

/** Executor pids by the spec path on their command line: one pass over /proc. */
function executorsByCommandLine(tasksRoot: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    for (const a of argv) {
      if (a.startsWith(tasksRoot + path.sep) && a.endsWith(`${path.sep}executor.json`) && isSameProcess(Number(name), undefined)) {
        const pids = out.get(a) ?? [];
        pids.push(Number(name));
        out.set(a, pids);
      }
    }
  }
  return out;
}

/** Every task under `dataDir` whose executor is alive now. */
export function liveExecutors(dataDir: string): LiveExecutor[] {
  const tasksRoot = path.join(dataDir, 'client', 'tasks');
  const byCmd = executorsByCommandLine(tasksRoot);
  const out: LiveExecutor[] = [];
  const dirs = (d: string) => {
    try {
      return fs
        .readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.isSymbolicLink())
        .map((e) => e.name);
    } catch {
      return [];
    }
  };
  for (const allocId of dirs(tasksRoot)) {
    for (const task of dirs(path.join(tasksRoot, allocId))) {
      const stateDir = path.join(tasksRoot, allocId, task);
      const files = stateFiles(stateDir);
      const pids = new Set(byCmd.get(files.spec) ?? []);
      const st = readExecutorState(stateDir);
      if (st && isSameProcess(st.executorPid, st.executorStartTime)) pids.add(st.executorPid);
      if (!pids.size) continue;
      const spec = readJson<ExecutorSpec>(files.spec);
      out.push({
        allocId,
        task,
        stateDir,
        executorPids: [...pids],
        ...(st?.pgid ? { pgid: st.pgid } : {}),
        ...(spec?.cgroup ? { cgroup: spec.cgroup } : {}),
      });
    }
  }
  return out;
}

/**
 * Stops a task no owner accounts for: its executor(s) and process group are killed, its cgroup
 * (when it has one) killed and removed, and its state dir removed, so nothing of it is restarted
 * by mistake nor left running.
 */
export async function killLiveExecutor(e: LiveExecutor): Promise<void> {
  const kill = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  };
  for (const pid of e.executorPids) kill(pid);
  if (e.pgid && e.pgid > 1) kill(-e.pgid);
  if (e.cgroup) await removeCgroup(e.cgroup).catch(() => false);
  fs.rmSync(e.stateDir, { recursive: true, force: true });
}
