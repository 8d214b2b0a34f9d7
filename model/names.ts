/**
 * What berth accepts as an id or a task name: shared by the allocation schema, the alloc dir and
 * the command line.
 * @module
 */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a 36-character UUID. */
export function isUUID(s: unknown): s is string {
  return typeof s === 'string' && s.length === 36 && UUID_RE.test(s);
}

/** Longest task name, in UTF-8 bytes: leaves room under NAME_MAX and PATH_MAX for berth's own paths. */
export const MAX_TASK_NAME_BYTES = 128;

/** Names a task cannot take: the alloc dir's own entries (`alloc/` is shared by every task). */
export const RESERVED_TASK_NAMES: readonly string[] = ['alloc'];

/**
 * Why `name` cannot be a single path component (an alloc id's directory), or undefined when it
 * can: a non-empty string, not `.` or `..`, without `/` or NUL.
 */
export function pathComponentProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'must be a non-empty string';
  if (name === '.' || name === '..') return `must not be "${name}"`;
  if (name.includes('/')) return 'must not contain "/"';
  if (name.includes('\0')) return 'must not contain NUL';
  return undefined;
}

/**
 * Why `name` cannot be a task (directory) name, or undefined when it can. As Nomad: no slashes
 * (`/` or `\\`) and no NUL; and, since the name becomes a directory beside the shared `alloc/`,
 * not `.`, `..`, not a reserved name ({@link RESERVED_TASK_NAMES}), and at most
 * {@link MAX_TASK_NAME_BYTES} bytes. Shared by parseAllocation and AllocDir.newTaskDir.
 */
export function taskNameProblem(name: unknown): string | undefined {
  const p = pathComponentProblem(name);
  if (p) return p;
  const n = name as string;
  if (n.includes('\\')) return 'must not contain "\\"';
  if (RESERVED_TASK_NAMES.includes(n)) return `must not be "${n}" (reserved by the alloc dir)`;
  const bytes = Buffer.byteLength(n);
  if (bytes > MAX_TASK_NAME_BYTES) return `must be at most ${MAX_TASK_NAME_BYTES} bytes (got ${bytes})`;
  return undefined;
}
