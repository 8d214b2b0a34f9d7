/**
 * The plain-JSON state a raw_exec/exec task handle carries, and the small readings of it the
 * driver's steps share: where a start records its cgroup, and a handle completed from the state
 * file its executor wrote.
 * @module
 */
import path from 'node:path';
import type { ExitResult, TaskHandle } from '../driver.ts';
import type { TaskCgroup } from '../../cgroups/types.ts';
import { readJson, stateFiles } from './client.ts';
import type { ExecutorSpec, ExecutorState, ExitRecord, ReadyOk } from './protocol.ts';

/**
 * `TaskHandle.state` of raw_exec and exec tasks (plain JSON): what the shim's ready line said
 * (its pid, the task's pid and group, the isolation, the resolved command and socket), and where
 * the task's state and cgroup are.
 */
export interface ProcessHandleState extends Omit<ReadyOk, 'ok'> {
  stateDir: string;
  /** The task's cgroup, when it has one. */
  cgroup?: TaskCgroup;
  /** Why the task has no cgroup, when cgroups are unavailable. */
  cgroupNote?: string;
  [key: string]: unknown;
}

/** The executor state a handle carries. */
export const stateOf = (handle: TaskHandle): ProcessHandleState => handle.state as ProcessHandleState;

/** An executor's exit record as the driver API's exit. */
export function toExit(rec: ExitRecord): ExitResult {
  const out: ExitResult = { exitCode: rec.exitCode, signal: rec.signal };
  if (rec.err) out.err = rec.err;
  if (rec.oomKilled) out.oomKilled = true;
  return out;
}

/** Where a start records its task's cgroup the moment it exists (`<stateDir>/cgroup.json`). */
export const cgroupFile = (stateDir: string): string => path.join(stateDir, 'cgroup.json');

/** The full handle of a start saved as intent, from the state file its executor wrote. */
export function handleFromState(saved: TaskHandle, rec: ExecutorState): TaskHandle {
  // The task's cgroup is in the spec the start wrote for its executor.
  const cgroup = readJson<ExecutorSpec>(stateFiles(saved.config.stateDir).spec)?.cgroup ?? readJson<TaskCgroup>(cgroupFile(saved.config.stateDir));
  const state: ProcessHandleState = {
    executorPid: rec.executorPid,
    executorStartTime: rec.executorStartTime,
    pid: rec.pid,
    pgid: rec.pgid,
    startTime: rec.startTime,
    isolation: rec.isolation,
    command: rec.command,
    socketPath: rec.socketPath,
    stateDir: saved.config.stateDir,
    ...(cgroup ? { cgroup } : {}),
  };
  const { starting: _s, ...rest } = saved;
  return { ...rest, startedAt: rec.startedAt, pid: rec.pid, state };
}
