/**
 * Remote migration (Nomad's `remotePrevAlloc.Migrate`): fetch the previous alloc's snapshot from
 * the node that ran it and move its data into the new alloc dir.
 *
 * ```
 * getNodeAddr(nodeId)                     retried on RPC errors; unknown node: error
 *   └─ build <clientAllocDir>/.migrate/<prevAllocId>/<newAllocId>     a fresh, private AllocDir
 *      └─ GET <addr>/v1/client/allocation/<prevAllocId>/snapshot   (X-Nomad-Token: the alloc's migrateToken, else the client's)
 *         ├─ not 200 ──► error getting snapshot from previous alloc "<id>": ...
 *         └─ restoreSnapshot(body) into the temp dir (escape-checked, undone on failure),
 *            bounded by the group's ephemeral disk size; gunzipped only when the response says
 *            Content-Encoding: gzip
 *            └─ newAllocDir.move(temp, group tasks)
 * always: destroy the temp dir and remove <clientAllocDir>/.migrate/<prevAllocId>
 *
 * The temp dir is an AllocDir named after the new alloc (so restore errors name it, as Nomad's
 * "error streaming previous alloc <prev> for new alloc <new>") inside a client alloc dir of its
 * own, so it can never collide with, or be mistaken for, a real alloc dir.
 * ```
 * Over HTTPS (the node says TLS) with `ClientOptions.tls`, the request presents this node's
 * certificate, trusts only the given CA, and (with `verifyServerHostname`) checks that the peer's
 * certificate names `client.<region>.nomad`, as Nomad's client does.
 *
 * Everything stops promptly when `signal` aborts (the request is destroyed, the restore undone,
 * the temp dir removed) and the promise then rejects with `signal.reason`.
 * @module
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFile, rmdir } from 'node:fs/promises';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import path from 'node:path';
import { Transform, pipeline } from 'node:stream';
import { BerthError } from '../../model/errors.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import type { Task } from '../../model/types.ts';
import { AllocDir } from '../allocdir/alloc-dir.ts';
import { userIds } from '../allocdir/perms.ts';
import { restoreSnapshot, type RestoreSnapshotResult } from '../allocdir/snapshot.ts';
import type { RemoteMigrateEnv, RemoteMigrateTarget, TlsFiles } from './env.ts';
import { getNodeAddr } from './node-addr.ts';
import { errorText } from '../../model/error-text.ts';

/** Name of the client alloc dir's subdirectory holding in-flight remote migrations. */
export const MIGRATE_TMP_DIR = '.migrate';

/** How much of an error response body goes into the error message. */
const MAX_ERROR_BODY = 4096;

/** Nomad's default ephemeral disk size, in MB, when the group gives none. */
export const DEFAULT_EPHEMERAL_DISK_MB = 300;

/** The bytes a migration may write: the group's ephemeral disk size. */
export function migrationByteLimit(sizeMB: number | undefined): number {
  return (sizeMB ?? DEFAULT_EPHEMERAL_DISK_MB) * 1024 * 1024;
}

/** Nomad's TLS server name of the clients of a region. */
export function clientServerName(region: string | undefined): string {
  return `client.${region || 'global'}.nomad`;
}

/** Path of the snapshot endpoint for one allocation. */
export function snapshotPath(allocId: string): string {
  return `/v1/client/allocation/${encodeURIComponent(allocId)}/snapshot`;
}

/** The client alloc dir of the temporary copy of `prevId` (the copy is `<that>/<newAllocId>`). */
export function migrateTempRoot(clientAllocDir: string, prevId: string): string {
  return path.join(clientAllocDir, MIGRATE_TMP_DIR, prevId);
}

/**
 * Streams the previous alloc's data from `nodeId` into `r`'s alloc dir; resolves with the bytes
 * received. Rejects with a {@link BerthError} saying what failed, or with `signal.reason` once
 * `signal` aborts.
 */
export async function remoteMigrate(rt: RemoteMigrateEnv, r: RemoteMigrateTarget, prevId: string, nodeId: string, signal: AbortSignal): Promise<number> {
  if (!rt.rpc)
    throw new BerthError(
      `cannot migrate previous alloc ${JSON.stringify(prevId)} from node ${JSON.stringify(nodeId)}: this client has no server RPC to find the node`,
    );
  const base = await getNodeAddr(nodeId, { rpc: rt.rpc, signal, ...(rt.retry ? { retry: rt.retry } : {}), clock: rt.clock, random: rt.random });
  const tmpRoot = migrateTempRoot(rt.clientAllocDir, prevId);
  const tmp = new AllocDir(tmpRoot, r.allocId);
  try {
    try {
      await tmp.destroy(); // leftovers of an attempt that died with its process
      await tmp.build();
    } catch (err) {
      throw new BerthError(`error building alloc dir for previous alloc ${JSON.stringify(prevId)}: ${errorText(err)}`, { cause: err });
    }
    signal.throwIfAborted();
    const tls = rt.tls ? await loadTls(rt.tls, clientServerName(r.serverAlloc().job.region)) : undefined;
    // The alloc's own migrate token (handed out by the servers with it), else the client's.
    const token = r.serverAlloc().migrateToken ?? rt.migrateToken;
    const { bytes, result } = await fetchSnapshotInto(`${base}${snapshotPath(prevId)}`, prevId, tmp, token, signal, {
      maxBytes: migrationByteLimit(r.group.ephemeralDisk?.sizeMB),
      taskOwners: await taskOwners(r.group.tasks),
      ...(tls ? { tls } : {}),
    });
    signal.throwIfAborted();
    await r.allocDir.move(tmp, r.group.tasks);
    noteStripped(rt, r, result);
    return bytes;
  } finally {
    try {
      await tmp.destroy();
      await rmdir(tmpRoot).catch(() => undefined);
    } catch (err) {
      rt.bus.publish('client.error', {
        allocId: r.allocId,
        error: `failed to remove temporary migration dir ${JSON.stringify(tmp.dir)}: ${errorText(err)}`,
      });
    }
  }
}

/** The users of the tasks that name one (and exist here): their `local/` is restored as theirs. */
async function taskOwners(tasks: readonly Task[]): Promise<Record<string, { uid: number; gid: number }>> {
  const out: Record<string, { uid: number; gid: number }> = {};
  for (const t of tasks) {
    const ids = t.user ? await userIds(t.user) : undefined;
    if (ids) out[t.name] = ids;
  }
  return out;
}

/** Options of {@link fetchSnapshotInto}. */
export interface FetchSnapshotOptions {
  /** Bound on the restored bytes (SnapshotLimitError past it). */
  maxBytes?: number;
  /** Owner of each task's restored `local/`, by task name (as root; root itself is never used). */
  taskOwners?: Record<string, { uid: number; gid: number }>;
  /** Client TLS for an https URL: CA, this node's certificate and key, expected server name. */
  tls?: ClientTls;
}

/** TLS material as loaded for one request. */
export interface ClientTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** When set, the peer's certificate must name it (and it is sent as SNI). */
  serverName?: string;
}

/** Reads the PEM files of `ClientOptions.tls` (at each migration: certificates rotate). */
export async function loadTls(files: TlsFiles, serverName: string): Promise<ClientTls> {
  try {
    const [ca, cert, key] = await Promise.all([readFile(files.caFile), readFile(files.certFile), readFile(files.keyFile)]);
    return { ca, cert, key, ...(files.verifyServerHostname !== false ? { serverName } : {}) };
  } catch (err) {
    throw new BerthError(`cannot read TLS files: ${errorText(err)}`, { cause: err });
  }
}

/** Tells each task (a "Task Setup" event at its start) which migrated paths lost setuid/setgid. */
function noteStripped(rt: RemoteMigrateEnv, r: RemoteMigrateTarget, result: RestoreSnapshotResult): void {
  const n = result.setuidStripped.length;
  if (!n) return;
  const shown = result.setuidStripped.slice(0, 5).join(', ') + (n > 5 ? `, and ${n - 5} more` : '');
  const message = `Removed setuid/setgid bits from ${n} migrated path${n === 1 ? '' : 's'}: ${shown}`;
  for (const t of r.group.tasks) {
    const list = r.setupNotes.get(t.name) ?? [];
    list.push(taskEvent('Task Setup', rt.clock.now(), { message }));
    r.setupNotes.set(t.name, list);
  }
}

/**
 * GETs the snapshot at `url` and restores it into `dest`; resolves with the body's byte count
 * (as received) and what the restore reported. A body is gunzipped only when the response says
 * `Content-Encoding: gzip`; any other encoding is refused.
 */
export async function fetchSnapshotInto(
  url: string,
  prevId: string,
  dest: AllocDir,
  token: string | undefined,
  signal: AbortSignal,
  opts: FetchSnapshotOptions = {},
): Promise<{ bytes: number; result: RestoreSnapshotResult }> {
  const res = await getSnapshot(url, prevId, token, signal, opts.tls);
  const counter = new Coalesce();
  // A connection cut mid-body (ECONNRESET, premature close) reaches the restore as an input error.
  pipeline(res, counter, () => undefined);
  try {
    const encoding = String(res.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      throw new BerthError(`error getting snapshot from previous alloc ${JSON.stringify(prevId)}: unsupported Content-Encoding ${JSON.stringify(encoding)}`);
    }
    const result = await restoreSnapshot(counter, dest, {
      prevAllocId: prevId,
      signal,
      gzip: encoding === 'gzip',
      ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
      ...(opts.taskOwners ? { taskOwners: opts.taskOwners } : {}),
    });
    return { bytes: counter.bytes, result };
  } finally {
    res.destroy();
    counter.destroy();
  }
}

/** Coalesced chunks are passed on once they reach this size (or when the socket has no more). */
const COALESCE_BYTES = 1 << 20;

/**
 * Counts the body's bytes and merges the socket's small reads (about 32 KiB each) into larger
 * chunks: the restore pays per chunk (a parser write, a file write), so this roughly triples
 * its throughput. Whatever has arrived is passed on by the next turn of the event loop, so a
 * slow sender is not held back.
 */
class Coalesce extends Transform {
  bytes = 0;
  #parts: Buffer[] = [];
  #size = 0;
  #later: NodeJS.Immediate | undefined;

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.bytes += chunk.length;
    this.#parts.push(chunk);
    this.#size += chunk.length;
    if (this.#size >= COALESCE_BYTES) this.#emit();
    else this.#later ??= setImmediate(() => this.#emit());
    cb();
  }

  override _flush(cb: () => void): void {
    this.#emit();
    cb();
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    this.#cancel();
    this.#parts = [];
    cb(err);
  }

  #cancel(): void {
    if (this.#later) clearImmediate(this.#later);
    this.#later = undefined;
  }

  #emit(): void {
    this.#cancel();
    if (this.#size === 0 || this.destroyed) return;
    const out = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    this.push(out);
  }
}

/** Opens the snapshot response; rejects on a connection error or a non-200 answer. */
function getSnapshot(url: string, prevId: string, token: string | undefined, signal: AbortSignal, tls?: ClientTls): Promise<IncomingMessage> {
  const fail = (detail: string, cause?: unknown) =>
    new BerthError(`error getting snapshot from previous alloc ${JSON.stringify(prevId)}: ${detail}`, cause ? { cause } : undefined);
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const https = url.startsWith('https:');
    const headers: Record<string, string> = { Accept: 'application/x-tar', 'Accept-Encoding': 'gzip' };
    if (token) headers['X-Nomad-Token'] = token;
    // agent: false: one connection per migration, closed with it (no pooled socket left behind).
    const req = https
      ? httpsRequest(url, { method: 'GET', headers, agent: false, ...(tls ? tlsRequestOptions(tls) : {}) })
      : httpRequest(url, { method: 'GET', headers, agent: false });
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

/** https.request options for {@link ClientTls}: only its CA, its client certificate, its server name. */
function tlsRequestOptions(tls: ClientTls) {
  const { serverName } = tls;
  return {
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    rejectUnauthorized: true,
    ...(serverName ? { servername: serverName } : {}),
    // The peer is addressed by IP; what must match is Nomad's role name, or (unverified) nothing.
    checkServerIdentity: (_host: string, cert: PeerCertificate) => (serverName ? checkServerIdentity(serverName, cert) : undefined),
  };
}

function readBody(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    res.on('data', (c: Buffer) => {
      if (n < max) parts.push(c.subarray(0, max - n));
      n += c.length;
      // Enough for the message: a peer streaming an endless error body is not read to its end.
      if (n >= max) {
        resolve(Buffer.concat(parts).toString('utf8'));
        res.destroy();
      }
    });
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    res.on('error', reject);
    res.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}
