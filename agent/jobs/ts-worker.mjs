// A worker thread's entry when berth runs from its TypeScript source: loads the worker module
// named by workerData.entry through tsx's require hook, registered in this thread (a loader given
// to the host does not reach workers on every Node). The require hook compiles with esbuild's
// synchronous API, whose child processes are waited for as they run (the host sets
// ESBUILD_WORKER_THREADS=0 for this thread): an esbuild service started from a worker outlives it
// as a zombie of the host once the worker is terminated.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { workerData } from 'node:worker_threads';

// Resolved from this file, inside the checkout: tsx is a dev dependency.
const { register } = await import('tsx/cjs/api');
register();
createRequire(import.meta.url)(fileURLToPath(workerData.entry));
