/**
 * The one way berth turns a thrown value into text (for task events, bus messages, hook errors):
 * an Error's message, anything else as a string; and, for text that leaves the host, an errno
 * error's message without the host path Node appends to it.
 * @module
 */

/** An Error's message, or `String(value)` for anything else thrown. */
export function errorText(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}

/**
 * As {@link errorText}, but an errno error's message loses its tail (`, <syscall> '<host path>'`,
 * as Node writes it): for answers to API clients, to whom the host path of the data dir is not
 * theirs to see (keep the error as a `cause` for the host's own logs).
 */
export function errorTextWithoutPath(value: unknown): string {
  if (!(value instanceof Error)) return errorText(value);
  const { syscall } = value as NodeJS.ErrnoException;
  const cut = syscall ? value.message.indexOf(`, ${syscall}`) : -1;
  return cut >= 0 ? value.message.slice(0, cut) : value.message;
}
