/**
 * Nomad Variables as a task's templates read them (`nomadVar`, `nomadVarList`, ...), and the
 * source a client reads them from. The client holds no variables of its own: a host gives it a
 * {@link VariableSource} (berth's agent serves its encrypted store through one), and every read
 * names the task that asks, so the source can apply Nomad's implicit workload access.
 * @module
 */

/** A variable's metadata: where it lives and when it changed (Nomad's `VariableMetadata`). */
export interface VariableMeta {
  namespace: string;
  path: string;
  createIndex: number;
  modifyIndex: number;
  /** Nanoseconds since the epoch, as Nomad's API reports it. */
  createTime: number;
  /** Nanoseconds since the epoch. */
  modifyTime: number;
}

/** A variable with its items (Nomad's `VariableDecrypted`): string values only. */
export interface VariableData extends VariableMeta {
  items: Record<string, string>;
}

/** Who reads: the task whose template asks (the claims of Nomad's workload identity). */
export interface WorkloadIdentity {
  namespace: string;
  jobId: string;
  group: string;
  task: string;
  allocId: string;
}

/**
 * A read that may wait, as Nomad's blocking queries do: with `minIndex`, the answer comes once
 * the source's index for what is read moves above it (or at once when it already has); `signal`
 * ends the wait (the promise rejects with the signal's reason).
 */
export interface VariableReadOptions {
  minIndex?: number;
  signal?: AbortSignal;
}

/**
 * Where a client's templates read Nomad Variables. `get` answers `variable: undefined` for a
 * path with no variable; both throw {@link VariableAccessError} for a path `who` may not read.
 * `index` is the index to wait past on the next read.
 */
export interface VariableSource {
  get(path: string, who: WorkloadIdentity, opts?: VariableReadOptions): Promise<{ index: number; variable: VariableData | undefined }>;
  /** The variables under `prefix` that `who` may read, by path. */
  list(prefix: string, who: WorkloadIdentity, opts?: VariableReadOptions): Promise<{ index: number; variables: VariableMeta[] }>;
}

/**
 * Nomad's implicit access of a task to variables: `nomad/jobs`, and each leading part of
 * `nomad/jobs/<job>/<group>/<task>` (so a task reads its job's, its group's and its own
 * variables, nothing deeper and nothing of another job). One rule for every source.
 */
export function workloadMayRead(path: string, who: Pick<WorkloadIdentity, 'jobId' | 'group' | 'task'>): boolean {
  if (path === 'nomad/jobs') return true;
  const parts = path.split('/');
  const expect = ['nomad', 'jobs', who.jobId, who.group, who.task];
  return parts.length >= 3 && parts.length <= expect.length && parts.every((p, i) => p === expect[i]);
}
