/**
 * Remote migration (Nomad's `remotePrevAlloc.Migrate`): fetch the previous alloc's snapshot from
 * the node that ran it and move its data into the new alloc dir.
 *
 * ```
 * getNodeAddr(nodeId)                     retried on RPC errors; unknown node: error
 *   └─ build <clientAllocDir>/.migrate/<newAllocId>/<prevAllocId>     a fresh, private AllocDir
 *      └─ GET <addr>/v1/client/allocation/<prevAllocId>/snapshot   (X-Nomad-Token: migrateToken)
 *         ├─ not 200 ──► error getting snapshot from previous alloc "<id>": ...
 *         └─ restoreSnapshot(body) into the temp dir (escape-checked, undone on failure)
 *            └─ newAllocDir.move(temp, group tasks)
 * always: destroy the temp dir and remove <clientAllocDir>/.migrate/<newAllocId>
 * ```
 * Everything stops promptly when `signal` aborts (the request is destroyed, the restore undone,
 * the temp dir removed) and the promise then rejects with `signal.reason`.
 * @module
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import { Transform, pipeline } from 'node:stream';
import { BerthError } from '../../model/errors.ts';
import { AllocDir } from '../allocdir/alloc-dir.ts';
import { restoreSnapshot } from '../allocdir/snapshot.ts';
import type { Runtime, RunnerInternals } from '../runner/runtime.ts';
import { getNodeAddr } from './node-addr.ts';

/** Name of the client alloc dir's subdirectory holding in-flight remote migrations. */
export const MIGRATE_TMP_DIR = '.migrate';

/** How much of an error response body goes into the error message. */
const MAX_ERROR_BODY = 4096;

/** Path of the snapshot endpoint for one allocation. */
export function snapshotPath(allocId: string): string {
  return `/v1/client/allocation/${encodeURIComponent(allocId)}/snapshot`;
}

/** Where the temporary copy of `prevId` for new alloc `allocId` lives (its client alloc dir). */
export function migrateTempRoot(clientAllocDir: string, allocId: string): string {
  return path.join(clientAllocDir, MIGRATE_TMP_DIR, allocId);
}

/**
 * Streams the previous alloc's data from `nodeId` into `r`'s alloc dir; resolves with the bytes
 * received. Rejects with a {@link BerthError} saying what failed, or with `signal.reason` once
 * `signal` aborts.
 */
export async function remoteMigrate(rt: Runtime, r: RunnerInternals, prevId: string, nodeId: string, signal: AbortSignal): Promise<number> {
  if (!rt.rpc) throw new BerthError(`cannot migrate previous alloc ${JSON.stringify(prevId)} from node ${JSON.stringify(nodeId)}: this client has no server RPC to find the node`);
  const base = await getNodeAddr(nodeId, { rpc: rt.rpc, signal, ...(rt.retry ? { retry: rt.retry } : {}), clock: rt.clock, random: rt.random });
  const tmpRoot = migrateTempRoot(rt.clientAllocDir, r.allocId);
  const tmp = new AllocDir(tmpRoot, prevId);
  try {
    try {
      await tmp.destroy(); // leftovers of an attempt that died with its process
      await tmp.build();
    } catch (err) {
      throw new BerthError(`error building alloc dir for previous alloc ${JSON.stringify(prevId)}: ${(err as Error).message}`, { cause: err });
    }
    signal.throwIfAborted();
    const bytes = await fetchSnapshotInto(`${base}${snapshotPath(prevId)}`, prevId, tmp, rt.migrateToken, signal);
    signal.throwIfAborted();
    await r.allocDir.move(tmp, r.group.tasks);
    return bytes;
  } finally {
    try {
      await tmp.destroy();
      await rmdir(tmpRoot).catch(() => undefined);
    } catch (err) {
      rt.bus.publish('client.error', { allocId: r.allocId, error: `failed to remove temporary migration dir ${JSON.stringify(tmp.dir)}: ${(err as Error).message}` });
    }
  }
}

/** GETs the snapshot at `url` and restores it into `dest`; resolves with the body's byte count. */
export async function fetchSnapshotInto(url: string, prevId: string, dest: AllocDir, token: string | undefined, signal: AbortSignal): Promise<number> {
  const res = await getSnapshot(url, prevId, token, signal);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  // A connection cut mid-body (ECONNRESET, premature close) reaches the restore as an input error.
  pipeline(res, counter, () => undefined);
  try {
    await restoreSnapshot(counter, dest, { prevAllocId: prevId, signal });
  } finally {
    res.destroy();
    counter.destroy();
  }
  return bytes;
}

/** Opens the snapshot response; rejects on a connection error or a non-200 answer. */
function getSnapshot(url: string, prevId: string, token: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
  const fail = (detail: string, cause?: unknown) =>
    new BerthError(`error getting snapshot from previous alloc ${JSON.stringify(prevId)}: ${detail}`, cause ? { cause } : undefined);
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { Accept: 'application/x-tar' };
    if (token) headers['X-Nomad-Token'] = token;
    // agent: false: one connection per migration, closed with it (no pooled socket left behind).
    const req = send(url, { method: 'GET', headers, agent: false });
    const onAbort = () => {
      req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // The request lives as long as the body is read: keep cancelling it until the socket closes.
    req.once('close', () => signal.removeEventListener('abort', onAbort));
    req.on('error', (err) => {
      if (signal.aborted) return reject(signal.reason);
      reject(fail(err.message, err));
    });
    req.on('response', (res) => {
      res.on('error', () => undefined); // reported through the consumer (restore or readBody)
      if (res.statusCode === 200) return resolve(res);
      readBody(res, MAX_ERROR_BODY).then(
        (body) => {
          req.destroy();
          const text = body.trim();
          reject(fail(`unexpected response code: ${res.statusCode}${text ? ` (${text})` : ''}`));
        },
        (err) => reject(signal.aborted ? signal.reason : fail(`unexpected response code: ${res.statusCode}`, err)),
      );
    });
    req.end();
  });
}

function readBody(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    res.on('data', (c: Buffer) => {
      if (n < max) parts.push(c.subarray(0, max - n));
      n += c.length;
    });
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    res.on('error', reject);
    res.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}
