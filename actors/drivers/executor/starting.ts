/**
 * Handles saved before their start finished (the host died during the start): completing one
 * from the state its executor wrote, or settling it as never started and cleaning up after it.
 * @module
 */
import fs from 'node:fs';
import { TaskNotStartedError } from '../../../model/errors.ts';
import type { TaskCgroup } from '../../cgroups/types.ts';
import type { TaskHandle } from '../driver.ts';
import { delay, executorPidsFor, readExecutorState, readJson, stateFiles } from './client.ts';
import { cgroupFile, handleFromState } from './handle-state.ts';

/** Removes a task's cgroup; false when processes are left in it. */
export type CgroupDropper = (cg: TaskCgroup) => Promise<boolean>;

/** Kills the executors of one start, found by the spec file they were given. */
function killExecutorsOf(stateDir: string, pids = executorPidsFor(stateFiles(stateDir).spec)): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/** Removes the cgroup a start that never got an executor made (see `cgroupFile`). */
export async function dropStartedCgroup(stateDir: string, dropCgroup: CgroupDropper): Promise<void> {
  const cg = readJson<TaskCgroup>(cgroupFile(stateDir));
  if (cg) await dropCgroup(cg).catch(() => false);
  fs.rmSync(cgroupFile(stateDir), { force: true });
}

/**
 * Completes a handle saved before its start. The executor listens, then spawns the task, then
 * writes state.json: while an executor of this state dir is alive and state.json is missing, the
 * start is still under way, so wait for it (bounded by the start timeout, then kill it). No
 * executor and no state.json: nothing was started.
 */
export async function completeStarting(saved: TaskHandle, startTimeoutMs: number, dropCgroup: CgroupDropper): Promise<TaskHandle> {
  const stateDir = saved.config.stateDir;
  const specPath = stateFiles(stateDir).spec;
  const deadline = Date.now() + startTimeoutMs;
  for (let step = 2; ; step = Math.min(step * 2, 50)) {
    const rec = readExecutorState(stateDir);
    if (rec) return handleFromState(saved, rec);
    const executors = executorPidsFor(specPath);
    if (!executors.length) {
      await dropStartedCgroup(stateDir, dropCgroup);
      throw new TaskNotStartedError(`task "${saved.config.taskName}" was never started (no executor, no state in ${stateDir})`);
    }
    if (Date.now() >= deadline) {
      killExecutorsOf(stateDir, executors);
      await dropStartedCgroup(stateDir, dropCgroup);
      throw new TaskNotStartedError(`task "${saved.config.taskName}": its executor never reported a start; killed it`);
    }
    await delay(step);
  }
}

/**
 * A handle saved before its start, as far as the start got: the completed handle when the
 * executor recorded a task, else undefined after killing any executor of that start.
 */
export async function settleStarting(h: TaskHandle, dropCgroup: CgroupDropper): Promise<TaskHandle | undefined> {
  if (!h.starting) return h;
  const rec = readExecutorState(h.config.stateDir);
  if (rec) return handleFromState(h, rec);
  killExecutorsOf(h.config.stateDir);
  await dropStartedCgroup(h.config.stateDir, dropCgroup);
  return undefined;
}
