/** The alloc machine's top-level states: plain data shared by the charts, the bus and the API. @module */

/** Top-level state of an allocation's machine. */
export type AllocState = 'pending' | 'waiting-prev' | 'running' | 'stopping' | 'destroyed';

/** The top-level states in lifecycle order; `waitFor` uses it to tell "already passed". */
export const ALLOC_STATES: readonly AllocState[] = ['pending', 'waiting-prev', 'running', 'stopping', 'destroyed'];
