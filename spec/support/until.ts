/**
 * The suite's one poll: for what has no event to wait on (another process' death, a file a
 * child writes, a count in /proc or cgroupfs). Everything that does have an event waits on it.
 * @module
 */

/** {@link until}'s bound passed without the condition holding. */
export class PollTimeoutError extends Error {
  override name = 'PollTimeoutError';
}

/**
 * Polls `pred` every `pollMs` until it holds; rejects with a {@link PollTimeoutError}, "timed out waiting for <what>", after
 * `timeoutMs`. The bound is for a failing run only: a passing one returns at the first poll
 * that sees the condition.
 */
export async function until(pred: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition', pollMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new PollTimeoutError(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
