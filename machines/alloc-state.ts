/** The alloc machine's top-level states (defined in model/, where the bus and the API share them). @module */
export { ALLOC_STATES, type AllocState } from '../model/alloc-state.ts';
