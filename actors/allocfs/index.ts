/**
 * The alloc filesystem API (`runner.fs`): list, stat, readAt and stream inside one alloc dir.
 * @module
 */
export * from './alloc-fs.ts';
export * from './errors.ts';
export { goFileMode } from './file-mode.ts';
