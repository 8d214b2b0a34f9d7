/**
 * The exit codes of every `berth` command, as documented in the README and `berth --help`.
 * @module
 */

/** Exit codes. `run` of a single-task batch allocation exits with the task's own code instead of 0/1. */
export const ExitCode = {
  /** Success; for `run`, the allocation completed. */
  ok: 0,
  /** The allocation failed (or an unexpected error). */
  failed: 1,
  /** Usage or input error: unknown command or flag, bad value, unreadable or invalid file. */
  usage: 2,
  /** Stopped by SIGINT (Ctrl-C): 128 + 2. */
  sigint: 130,
  /** Stopped by SIGTERM: 128 + 15. */
  sigterm: 143,
} as const;

/** 128 + the signal's number, the shell's convention for "ended by a signal". */
export function signalExitCode(signal: 'SIGINT' | 'SIGTERM'): number {
  return signal === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm;
}
