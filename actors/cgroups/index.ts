/**
 * Task cgroups: detection, the manager that makes them with their limits, kill/remove (shared
 * with the supervisor), stats, and the lines berth prints about them.
 * @module
 */
export { detectCgroups, findCgroupMounts, parseSelfCgroup, type CgroupDetection, type CgroupOptions } from './detect.ts';
export { createCgroupManager, type CgroupManager, type CgroupManagerOptions, type TaskCgroupInput } from './manager.ts';
export { cgroupPids, killCgroup, oomKillCount, removeCgroup, spawnInCgroup } from './procs.mjs';
export { CgroupStatsReader, mhzPerCore } from './stats.ts';
export { CgroupSetupError, CgroupUnavailableError } from './errors.ts';
export { cgroupEventMessage, describeTaskCgroup } from './describe.ts';
export { formatUsageLine } from './format-usage.ts';
export { UNIFIED, V1_CONTROLLERS, type CgroupLayout, type CgroupVersion, type TaskCgroup } from './types.ts';
