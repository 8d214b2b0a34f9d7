/**
 * Nomad's lexical alloc-dir escape rule (`helper/escapingfs.PathEscapesAllocViaRelative`), the
 * one its job validation applies to an artifact's `destination`, a template's `destination` and
 * a dispatch payload's `file`. Pure: no filesystem. The client's checks with symlinks are in
 * `actors/allocdir/escape.ts`.
 * @module
 */
import path from 'node:path';

/** Placeholder alloc root for the lexical check: two levels, as Nomad does. */
const PLACEHOLDER_ALLOC = '/alloc-dir/alloc-id';

/**
 * Nomad's `PathEscapesAllocViaRelative`: purely lexical. Joins a placeholder alloc root, the
 * prefix and the path, cleans the result, and reports an escape when the result taken relative to
 * the *alloc root* (not the prefix) starts with `..`. Absolute paths are joined, not honoured.
 *
 * @example
 * pathEscapesAllocViaRelative('', '../x');              // true
 * pathEscapesAllocViaRelative('', '/etc/passwd');       // false: joined under the alloc root
 * pathEscapesAllocViaRelative('task', '../alloc/x');    // false: the alloc dir's shared alloc/
 * pathEscapesAllocViaRelative('foo/bar', '../../');     // false; '../../../' is true
 */
export function pathEscapesAllocViaRelative(prefix: string, p: string): boolean {
  const abs = path.posix.join(PLACEHOLDER_ALLOC, prefix, p);
  const rel = path.posix.relative(PLACEHOLDER_ALLOC, abs);
  // Nomad uses a bare string prefix, so a top-level name like "..foo" also counts.
  return rel.startsWith('..');
}
