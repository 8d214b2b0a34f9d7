/**
 * The one way berth turns a thrown value into text (for task events, bus messages, hook errors):
 * an Error's message, anything else as a string.
 * @module
 */

/** An Error's message, or `String(value)` for anything else thrown. */
export function errorText(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
