/**
 * Values no task can start with, refused when an allocation is parsed rather than when the task
 * starts: sizes past what a JS number counts exactly, NUL bytes, and environments the kernel's
 * `execve` would refuse.
 * @module
 */

/** Linux's MAX_ARG_STRLEN: the longest single argument or `KEY=value` environment string, in bytes (with its NUL). */
export const MAX_ARG_STRLEN = 128 * 1024;

/**
 * The total of a task's arguments and environment berth accepts, in bytes: Linux's usual ARG_MAX
 * (a quarter of an 8 MiB stack), the bound `execve` enforces on the whole of argv and envp.
 */
export const ARG_MAX = 2 * 1024 * 1024;

/** The largest size in MB whose byte count is still an exact JS number (2^53 bytes). */
export const MAX_EXACT_MB = 2 ** 33;

/** Bytes one `KEY=value` string takes in a process's environment (with its NUL). */
export const envEntryBytes = (key: string, value: string): number => Buffer.byteLength(key) + Buffer.byteLength(value) + 2;

/** Why a string cannot go into argv or envp, or undefined. */
export function argStringProblem(s: string, what: string): string | undefined {
  if (s.includes('\0')) return `${what} must not contain NUL`;
  const bytes = Buffer.byteLength(s) + 1;
  if (bytes > MAX_ARG_STRLEN) return `${what} is ${bytes} bytes, past the kernel's ${MAX_ARG_STRLEN}-byte limit for one argument (MAX_ARG_STRLEN)`;
  return undefined;
}

/**
 * The most allocs one group may ask for. Nomad's servers set no bound (only count >= 0); berth
 * places on one node, where ten thousand allocs of a group is already far past what fits.
 */
export const MAX_GROUP_COUNT = 10_000;
