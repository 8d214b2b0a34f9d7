/**
 * Client garbage collection: the collector, its options and the filesystem usage reader.
 * @module
 */
export { AllocGarbageCollector, type GarbageCollectorOptions, type GcHost } from './collector.ts';
export { statfsUsage, type FsUsageReader } from './fs-usage.ts';
export { resolveGcOptions, type GcClientOptions, type GcSettings } from './options.ts';
