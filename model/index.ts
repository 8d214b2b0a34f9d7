/** The plain-data model: types, predicates, parsing, errors, durations. @module */
export * from './types.ts';
export * from './errors.ts';
export * from './status.ts';
export * from './duration.ts';
export * from './parse.ts';
export * from './clock.ts';
export * from './alloc-state.ts';
export * from './task-handle.ts';
export * from './json-value.ts';
export * from './usage.ts';
export * from './watch.ts';
export * from './error-text.ts';
export * from './hook-kind.ts';
export * from './alloc-result.ts';
export * from './restart-defaults.ts';
