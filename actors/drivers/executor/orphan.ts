/**
 * Stopping a task whose executor is gone: by its cgroup when it has one, else by its process
 * group, after checking the leader's pid was not reused.
 * @module
 */
import { cgroupPids, killCgroup } from '../../cgroups/procs.mjs';
import { signalName } from '../signals.ts';
import { delay, groupAlive, isSameProcess } from './client.ts';
import type { ProcessHandleState } from './handle-state.ts';

/** Polls (there is no event for "a process that is not my child is gone") until `alive()` is false. */
export async function waitGone(alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let step = 2;
  while (alive()) {
    if (Date.now() >= deadline) return false;
    await delay(step);
    step = Math.min(step * 2, 50);
  }
  return true;
}

/** Sends `sig` to a process group, if it still exists. */
function killGroup(pgid: number, sig: NodeJS.Signals | string): void {
  try {
    process.kill(-pgid, sig);
  } catch {}
}

/** Stops a task whose executor is gone, by its process group (after checking pid reuse). */
export async function stopOrphan(st: ProcessHandleState, timeoutMs: number, killSignal: string): Promise<void> {
  const cg = st.cgroup;
  if (cg) {
    // The cgroup holds every process of the task, even ones that left its process group.
    if (isSameProcess(st.pid, st.startTime)) {
      killGroup(st.pgid, signalName(killSignal));
      await waitGone(() => cgroupPids(cg).length > 0, timeoutMs);
    }
    await killCgroup(cg);
    return;
  }
  if (!isSameProcess(st.pid, st.startTime)) {
    // The leader is gone; anything left in its group (with no reuse possible while it exists) dies too.
    if (groupAlive(st.pgid) && !isSameProcess(st.pgid, undefined)) process.kill(-st.pgid, 'SIGKILL');
    return;
  }
  killGroup(st.pgid, signalName(killSignal));
  if (!(await waitGone(() => groupAlive(st.pgid), timeoutMs))) {
    killGroup(st.pgid, 'SIGKILL');
    await waitGone(() => groupAlive(st.pgid), 5000);
  }
}
