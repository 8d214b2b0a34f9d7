/**
 * The chroot build's worker thread: runs the walk on its `workerData` job and posts the result
 * (or the error's message) back. Loaded by `embed` in chroot.ts.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import path from 'node:path';
import { embedSync } from './embed-walk.mjs';

try {
  const progress = workerData.progress ? (stats) => parentPort.postMessage({ progress: stats }) : undefined;
  parentPort.postMessage({ ok: true, result: embedSync(fs, path, workerData, progress) });
} catch (e) {
  parentPort.postMessage({ ok: false, message: e && e.message ? e.message : String(e) });
}
