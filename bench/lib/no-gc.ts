/**
 * Client options that keep the garbage collector out of a lifecycle benchmark: the benchmark
 * destroys its own allocs, and a collection racing it would measure the collector instead.
 * @module
 */
export const NO_GC = { gcIntervalMs: 0, gcMaxAllocs: Infinity } as const;
