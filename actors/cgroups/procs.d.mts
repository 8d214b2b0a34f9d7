import type { TaskCgroup } from './types.ts';

/** The task's cgroup dirs, one per hierarchy (see procs.mjs). */
export declare function cgroupDirs(cg: TaskCgroup): string[];
/** The pids in the task's cgroup; empty when it is gone. */
export declare function cgroupPids(cg: TaskCgroup): number[];
/** A process's cgroup path per hierarchy (`unified` for v2) from /proc/<pid>/cgroup text. */
export declare function parseSelfCgroup(text: string): Record<string, string>;
/** The calling process's own cgroup dir in each of the task's hierarchies. */
export declare function ownCgroupDirs(cg: TaskCgroup): Record<string, string>;
/** The calling process could not be moved into (or back out of) a cgroup. */
export declare class CgroupJoinError extends Error {}
/** Moves the calling process (or, with `tasks`, its main thread: v1) into each dir. Throws CgroupJoinError. */
export declare function enterCgroups(dirs: Record<string, string>, file?: 'cgroup.procs' | 'tasks'): void;
/** Runs `spawn` from inside the task's cgroup (the child is born there), then moves back out. */
export declare function spawnInCgroup<T>(cg: TaskCgroup, spawn: () => T): T;
/** OOM kills the kernel counted in the task's cgroup; undefined when the hierarchy cannot say. */
export declare function oomKillCount(cg: TaskCgroup): number | undefined;
/** Kills every process in the cgroup (freeze + kill on v1, cgroup.kill on v2); false on timeout. */
export declare function killCgroup(cg: TaskCgroup, opts?: { timeoutMs?: number }): Promise<boolean>;
/** Kills what is left, removes the task's cgroup and, when empty, the alloc's. */
export declare function removeCgroup(cg: TaskCgroup): Promise<boolean>;
