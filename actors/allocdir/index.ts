/**
 * Allocation and task directories (docs/alloc-dirs.md): layout, modes, secret tmpfs mounts,
 * chroot embedding, move, snapshot and restore, escape checks.
 * @module
 */
export * from './alloc-dir.ts';
export type * from './handle.ts';
export * from './task-dir.ts';
export * from './chroot.ts';
export * from './snapshot.ts';
export * from './escape.ts';
export * from './mounts.ts';
export * from './default-chroot.ts';
export * from './errors.ts';
export { RwLock, Mutex } from './lock.ts';
export { isRoot, nobodyIds, userIds, dropDirPermissions, allocMkdirAll } from './perms.ts';
