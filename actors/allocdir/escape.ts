/**
 * Path-escape checks, after Nomad's `helper/escapingfs`. The first three mirror Nomad exactly
 * (quirks included, see each doc; the lexical `pathEscapesAllocViaRelative` is defined in
 * `model/alloc-paths.ts`, where job validation uses it, and re-exported here); the strict helpers below them are berth's own, and
 * {@link resolveInTree} is how a restore judges a symlink: by where the kernel will resolve it.
 * @module
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { pathEscapesAllocViaRelative } from '../../model/alloc-paths.ts';
import { BerthError } from '../../model/errors.ts';

export { pathEscapesAllocViaRelative };

/**
 * Nomad's `pathEscapesBaseViaSymlink`: resolves every symlink of `full` and reports an escape
 * when the result does not start with `base`. Case-insensitive, and with no separator check
 * (`/a/b10` counts as inside `/a/b1`), as in Nomad. Resolution errors are thrown as-is.
 */
export async function pathEscapesBaseViaSymlink(base: string, full: string): Promise<boolean> {
  const resolved = await realpath(full);
  return !resolved.toLowerCase().startsWith(base.toLowerCase());
}

/**
 * Nomad's `PathEscapesAllocDir`: the lexical check, then the symlink check on
 * `join(base, prefix, p)`. A path that does not exist does not escape (log-follow relies on it).
 *
 * @throws BerthError "alloc dir must be absolute" when `base` is relative.
 */
export async function pathEscapesAllocDir(base: string, prefix: string, p: string): Promise<boolean> {
  if (!path.isAbsolute(base)) throw new BerthError('alloc dir must be absolute');
  if (pathEscapesAllocViaRelative(prefix, p)) return true;
  try {
    return await pathEscapesBaseViaSymlink(base, path.join(base, prefix, p));
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Nomad's `PathEscapesSandbox`: lexical; `p` escapes `dir` when it cannot be made relative to it
 * or the relative form starts with `..`. Expects cleaned paths.
 */
export function pathEscapesSandbox(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return path.isAbsolute(rel) || rel.startsWith('..');
}

/**
 * Strict lexical containment: true when `target` is `base` or lies under it, comparing whole
 * path components (unlike Nomad's prefix checks, `/a/b10` is not inside `/a/b1`).
 */
export function isWithin(base: string, target: string): boolean {
  const rel = path.relative(path.resolve(base), path.resolve(target));
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

/**
 * True when a symlink at `linkPath` (absolute, inside `base`) with target text `target` would
 * point outside `base`. Absolute targets are always refused, even ones that point inside, as
 * Nomad's `ChildEscapesParentDir` does: they would change meaning once the dir moves.
 */
export function symlinkEscapes(base: string, linkPath: string, target: string): boolean {
  if (target === '' || path.isAbsolute(target)) return true;
  return !isWithin(base, path.resolve(path.dirname(linkPath), target));
}

/**
 * Walks the existing components of `rel`'s parent chain under `base` with `lstat` and returns the
 * first one that is a symlink (absolute path), or undefined. A missing component ends the walk:
 * nothing below it can be a symlink yet. Used so that nothing is ever written through a link.
 */
export async function symlinkInParentChain(base: string, rel: string): Promise<string | undefined> {
  const parts = path
    .normalize(rel)
    .split(path.sep)
    .filter((s) => s !== '' && s !== '.');
  let cur = base;
  for (const part of parts.slice(0, -1)) {
    cur = path.join(cur, part);
    try {
      if ((await lstat(cur)).isSymbolicLink()) return cur;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
  return undefined;
}

/** Linux's limit on symlinks followed in one path resolution (`MAXSYMLINKS`). */
export const MAX_SYMLINK_HOPS = 40;

/** Where {@link resolveInTree} found a path: inside the tree, outside it, or in a symlink loop. */
export type TreeResolution = 'inside' | 'outside' | 'loop';

/**
 * Resolves `rel` under `base` (a real, symlink-free path) the way the kernel will, one component
 * at a time: `..` steps up, every symlink met (the last component included) is replaced by its
 * target text, absolute targets restart at `/`. Below a missing component the rest is resolved
 * lexically (a later mkdir could make it exist), so a dangling link is judged by where it *would*
 * point; a `..` back out of the missing part resumes the walk of what exists (so
 * `missing/../out` follows `out`). Reports `'outside'` as soon as the walk leaves `base`, `'loop'` past
 * {@link MAX_SYMLINK_HOPS} links. Judges what the tree holds now, not the link's text: a chain
 * like `b -> .`, `a -> b/b/../../x` is seen for what it is.
 */
export async function resolveInTree(base: string, rel: string): Promise<TreeResolution> {
  const queue = rel.split('/');
  const cur: string[] = [];
  let hops = 0;
  // Depth of the first component that is missing (or a file used as a dir); -1 while every
  // component so far exists. A `..` back above it lands on real components again, which may be
  // links (`missing/../out` is `out` once `missing` is made).
  let missingAt = -1;
  while (queue.length) {
    const c = queue.shift()!;
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (cur.length === 0) return 'outside';
      cur.pop();
      if (missingAt >= 0 && cur.length <= missingAt) missingAt = -1;
      continue;
    }
    cur.push(c);
    if (missingAt >= 0) continue;
    const abs = path.join(base, ...cur);
    let st;
    try {
      st = await lstat(abs);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      missingAt = cur.length - 1;
      continue;
    }
    if (st.isSymbolicLink()) {
      if (++hops > MAX_SYMLINK_HOPS) return 'loop';
      const target = await readlink(abs);
      cur.pop();
      if (path.isAbsolute(target)) {
        // Followed textually from `base` (no lexical clean-up: `..` after a link is not `..` of its text).
        if (!target.startsWith(base.endsWith('/') ? base : base + '/')) return 'outside';
        cur.length = 0;
        queue.unshift(...target.slice(base.length).split('/'));
      } else {
        queue.unshift(...target.split('/'));
      }
    } else if (!st.isDirectory() && queue.some((q) => q !== '' && q !== '.')) {
      missingAt = cur.length; // a file used as a directory: the kernel says ENOTDIR; judge the rest by text
    }
  }
  return 'inside';
}

/** True for ENOENT / ENOTDIR errors: the path (or one of its parents) does not exist. */
export function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** True when something (even a dangling symlink) exists at `p`; other errors are thrown. */
export async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
