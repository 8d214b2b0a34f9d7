/** The alloc machine's top-level states. @module */

/**
 * Top-level state of an allocation's machine, in lifecycle order. The alloc chart defines them;
 * `ALLOC_STATES` in `machines/alloc/chart.ts` is read from the chart itself.
 */
export type AllocState = 'pending' | 'waiting-prev' | 'running' | 'stopping' | 'destroyed';
