/**
 * The cgroup errors berth throws.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** A task's cgroup could not be made or limited (the task does not start). */
export class CgroupSetupError extends BerthError {}

/** `cgroups.mode` asked for a hierarchy this machine does not offer, or a bad option. */
export class CgroupUnavailableError extends BerthError {}
