/**
 * The kinds of alloc-runner hook, defined once: the alloc chart runs all but `shutdown` (the
 * runner calls that one as the client shuts down), and the bus names the kind of a failed hook.
 * @module
 */

/** Every kind of alloc-runner hook, in the order an alloc meets them. */
export const HOOK_KINDS = ['prerun', 'update', 'preKill', 'preTaskRestart', 'postrun', 'destroy', 'shutdown'] as const;

/** A kind of alloc-runner hook. */
export type HookKind = (typeof HOOK_KINDS)[number];

/** The hook kinds the alloc chart itself runs (the `runHooks` effect's input). */
export type AllocHookKind = Exclude<HookKind, 'shutdown'>;
