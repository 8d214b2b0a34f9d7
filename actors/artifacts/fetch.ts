/**
 * Fetches one artifact into a task dir (go-getter's behaviour for http, https and file):
 *
 * ```
 *  plan (source, options, destination) ─► download into a private temp file
 *     http(s): host looked up off the threadpool (lookup.ts); connect within 30 s, TLS within 10 s;
 *              headers; redirects followed by hand, only to http(s), at most 10;
 *              non-2xx refused; bounded in bytes and time
 *     file:    a regular file, bounded in bytes
 *  ─► checksum (md5/sha1/sha256/sha512, or looked up in a `file:` checksum file)
 *  ─► unpack (.tar, .tar.gz/.tgz, .tar.bz2/.tbz2, .tar.xz/.txz, .zip, .gz, .bz2, .xz) or place
 *     the file, always as a tar stream through
 *     the snapshot restore's staging: nothing outside the task dir, no setuid, size bounded
 *  ─► temp file removed
 * ```
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { BerthError } from '../../model/errors.ts';
import type { Artifact } from '../../model/types.ts';
import { isRoot } from '../allocdir/perms.ts';
import { SHARED_ALLOC_NAME } from '../allocdir/task-dir.ts';
import type { RwLock } from '../allocdir/lock.ts';
import { restoreSnapshot, type RestoreDest } from '../allocdir/restore.ts';
import { interpolateEnv } from '../drivers/env.ts';
import { ArtifactDownloadError, ArtifactError, ArtifactLimitError } from './errors.ts';
import { CHECKSUM_TYPES, planArtifact, type ArtifactPlan, type ChecksumSpec } from './source.ts';
import { bzip2Stream, readFileAs, xzStream } from './decompress.ts';
import { singleFileTar, zipAsTar } from './tar-stream.ts';
import { errorText } from '../../model/error-text.ts';
import { defaultArtifactLookup, type ArtifactLookup } from './lookup.ts';

/** Most redirects followed (go-getter's client follows 10). */
const MAX_REDIRECTS = 10;
/** Largest checksum file read. */
const MAX_CHECKSUM_FILE = 1024 * 1024;

/** Where and within which bounds an artifact is fetched. */
export interface FetchArtifactContext {
  /** The task dir (host path) and what guards its alloc dir. */
  dest: RestoreDest;
  /** The alloc's shared dir (host path), where `../alloc/...` goes; default: the task dir's sibling `alloc`. */
  sharedAllocDir?: string;
  /** The task's environment: `${VAR}` in source and destination. */
  env: Record<string, string>;
  /** What `${...}` may name of the node, looked up before `env`: `${attr.cpu.arch}`, `${node.unique.id}` (see `nodeScope`). */
  node?: Record<string, string>;
  /** Owner of what is written (the task's user), when berth runs as root. */
  owner?: { uid: number; gid: number };
  /** Bound on the download and on what it unpacks to (the ephemeral disk). */
  maxBytes: number;
  /** Bound on the whole fetch. */
  timeoutMs: number;
  /** How http(s) hosts are looked up; default {@link defaultArtifactLookup} (off libuv's threadpool). */
  lookup?: ArtifactLookup;
  /**
   * Held alone while the artifact is unpacked and moved in: a task's artifacts downloaded together
   * are placed one at a time, so each staging's merge and undo see no other's (fetch-all.ts).
   */
  placing?: RwLock;
  signal: AbortSignal;
}

/** Fetches `a` (see the module doc); rejects with a named error whose message is the reason. */
export async function fetchArtifact(a: Artifact, ctx: FetchArtifactContext): Promise<void> {
  const dirs = { taskDir: ctx.dest.dir, sharedAllocDir: ctx.sharedAllocDir ?? path.join(path.dirname(ctx.dest.dir), SHARED_ALLOC_NAME) };
  const node = ctx.node ?? {};
  const plan = planArtifact(
    a,
    interpolateEnv(a.source, node, ctx.env),
    a.destination === undefined ? undefined : interpolateEnv(a.destination, node, ctx.env),
    dirs,
  );
  if (a.headers) plan.headers = Object.fromEntries(Object.entries(a.headers).map(([k, v]) => [k, interpolateEnv(v, node, ctx.env)]));
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  const tmp = await mkdtemp(path.join(path.dirname(ctx.dest.dir), '.artifact-'));
  try {
    const file = path.join(tmp, 'download');
    await download(plan, file, ctx, signal);
    if (plan.checksum) await verifyChecksum(file, plan, ctx, signal);
    // Into the task dir, or (`../alloc/...`) the alloc's shared dir, under the same alloc lock.
    const into = plan.root === 'alloc' ? { ...ctx, dest: { ...ctx.dest, dir: dirs.sharedAllocDir } } : ctx;
    const placeIt = () => place(plan, file, tmp, into, signal);
    await (ctx.placing ? ctx.placing.exclusive(placeIt) : placeIt());
  } catch (e) {
    if (timeout.aborted && !ctx.signal.aborted) throw new ArtifactLimitError(`download took longer than ${ctx.timeoutMs} ms`);
    throw e;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function download(plan: ArtifactPlan, file: string, ctx: FetchArtifactContext, signal: AbortSignal): Promise<void> {
  if (plan.getter === 'file') {
    const st = await stat(plan.url).catch((e: NodeJS.ErrnoException) => {
      throw new ArtifactDownloadError(`source path error: ${e.code === 'ENOENT' ? `stat ${plan.url}: no such file or directory` : e.message}`);
    });
    if (!st.isFile()) throw new ArtifactError(`source ${plan.url} is not a regular file (berth fetches files, not directories)`);
    if (st.size > ctx.maxBytes) throw new ArtifactLimitError(`source ${plan.url} is ${st.size} bytes, over the limit of ${ctx.maxBytes}`);
    // As root, the file is read as the task's user: what that user may not read is not fetched.
    const user = asUser(ctx);
    const from = user ? readFileAs(plan.url, user) : createReadStream(plan.url);
    await pipeline(from, bounded(ctx.maxBytes), createWriteStream(file, { flags: 'wx', mode: 0o600 }), { signal });
    return;
  }
  const res = await httpGet(plan.url, signal, ctx.lookup ?? defaultArtifactLookup, plan.headers);
  await pipeline(res, bounded(ctx.maxBytes), createWriteStream(file, { flags: 'wx', mode: 0o600 }), { signal });
}

/** go-cleanhttp's dial timeout (Nomad's artifact HTTP client): the lookup and the TCP connect. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** go-cleanhttp's TLS handshake timeout. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Headers Go's HTTP client (go-getter's) drops on a redirect to another domain. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'www-authenticate', 'cookie', 'cookie2']);

/**
 * The headers a redirect to `toHost` carries: all of them within the first request's domain
 * (its host or a subdomain of it), and no credentials beyond it, as Go's client does.
 */
export function redirectHeaders(headers: Record<string, string>, fromHost: string, toHost: string): Record<string, string> {
  if (toHost === fromHost || toHost.endsWith(`.${fromHost}`)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
}

/** GET with redirects followed by hand (http and https only); the body as a Node stream. */
async function httpGet(url: string, signal: AbortSignal, lookup: ArtifactLookup, given: Record<string, string> = {}): Promise<Readable> {
  let current = url;
  let headers = given;
  for (let i = 0; i <= MAX_REDIRECTS; i++) {
    const res = await get(new URL(current), signal, lookup, headers).catch((e: Error) => {
      if (signal.aborted) throw signal.reason;
      throw new ArtifactDownloadError(`GET ${current}: ${e.message}`);
    });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.destroy();
      const next = new URL(res.headers.location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new ArtifactDownloadError(`GET ${current}: refusing a redirect to ${JSON.stringify(next.protocol.slice(0, -1))} (only http and https)`);
      }
      headers = redirectHeaders(headers, new URL(url).hostname, next.hostname);
      current = next.toString();
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw new ArtifactDownloadError(`bad response code: ${status}`);
    }
    return res;
  }
  throw new ArtifactDownloadError(`GET ${url}: stopped after ${MAX_REDIRECTS} redirects`);
}

/** One GET on a connection of its own, its host looked up by `lookup`, connecting within go-cleanhttp's bounds. */
function get(u: URL, signal: AbortSignal, lookup: ArtifactLookup, headers: Record<string, string>): Promise<IncomingMessage> {
  const tls = u.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)(u, {
      method: 'GET',
      agent: false,
      headers,
      signal,
      lookup: ((host, opts, cb) => {
        lookup(host, signal).then(
          (all) => (opts.all ? cb(null, all) : cb(null, all[0]!.address, all[0]!.family)),
          (e: Error) => cb(e as NodeJS.ErrnoException, opts.all ? [] : ''),
        );
      }) satisfies LookupFunction,
    });
    let timer = setTimeout(() => req.destroy(new ArtifactDownloadError(`no connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    req.once('socket', (s) => {
      s.once('connect', () => {
        clearTimeout(timer);
        if (tls)
          timer = setTimeout(() => req.destroy(new ArtifactDownloadError(`no TLS handshake within ${TLS_HANDSHAKE_TIMEOUT_MS} ms`)), TLS_HANDSHAKE_TIMEOUT_MS);
      });
      s.once('secureConnect', () => clearTimeout(timer));
    });
    req.once('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.once('close', () => clearTimeout(timer));
    req.end();
  });
}

/** A pass-through that fails once more than `max` bytes went by. */
function bounded(max: number) {
  let n = 0;
  return async function* (source: AsyncIterable<Buffer>) {
    for await (const c of source) {
      n += c.length;
      if (n > max) throw new ArtifactLimitError(`artifact is larger than the limit of ${max} bytes`);
      yield c;
    }
  };
}

async function hashFile(file: string, type: keyof typeof CHECKSUM_TYPES): Promise<string> {
  const h = createHash(type);
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return h.digest('hex');
}

async function verifyChecksum(file: string, plan: ArtifactPlan, ctx: FetchArtifactContext, signal: AbortSignal): Promise<void> {
  const want = await expectedChecksum(plan.checksum!, plan, ctx, signal);
  const got = await hashFile(file, want.type);
  if (got !== want.value) {
    throw new ArtifactDownloadError(`checksums did not match for ${plan.fileName}: expected ${want.value}, got ${got} (${want.type})`);
  }
}

/** A digest as given, or the line for this file in a checksum file (type from the digest's length). */
async function expectedChecksum(spec: ChecksumSpec, plan: ArtifactPlan, ctx: FetchArtifactContext, signal: AbortSignal) {
  if ('type' in spec) return spec;
  let text: string;
  if (spec.file.startsWith('/') || spec.file.startsWith('file:')) {
    const p = spec.file.startsWith('file:') ? decodeURIComponent(new URL(spec.file).pathname) : spec.file;
    const user = asUser(ctx);
    if (user) {
      text = (await readBounded(readFileAs(p, user), MAX_CHECKSUM_FILE, `checksum file ${p}`)).toString('utf8');
    } else {
      const fh = await open(p, 'r').catch((e: Error) => {
        throw new ArtifactDownloadError(`checksum file ${p}: ${e.message}`);
      });
      try {
        const buf = Buffer.alloc(MAX_CHECKSUM_FILE);
        const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
        text = buf.subarray(0, bytesRead).toString('utf8');
      } finally {
        await fh.close();
      }
    }
  } else {
    if (!/^https?:\/\//.test(spec.file)) throw new ArtifactError(`checksum file ${JSON.stringify(spec.file)} must be an http(s) URL or a file path`);
    text = (await readBounded(await httpGet(spec.file, signal, ctx.lookup ?? defaultArtifactLookup), MAX_CHECKSUM_FILE, `checksum file ${spec.file}`)).toString(
      'utf8',
    );
  }
  for (const line of text.split('\n')) {
    // GNU style "<hex>  <name>" (a '*' marks binary mode), or BSD style "SHA256 (<name>) = <hex>".
    const gnu = /^([0-9a-fA-F]+)\s+\*?(.+?)\s*$/.exec(line);
    const bsd = /^\w+\s*\((.+)\)\s*=\s*([0-9a-fA-F]+)\s*$/.exec(line);
    const [hex, name] = gnu ? [gnu[1]!, gnu[2]!] : bsd ? [bsd[2]!, bsd[1]!] : [undefined, undefined];
    if (!hex || !name || path.posix.basename(name) !== plan.fileName) continue;
    const type = (Object.keys(CHECKSUM_TYPES) as (keyof typeof CHECKSUM_TYPES)[]).find((t) => CHECKSUM_TYPES[t] === hex.length);
    if (type) return { type, value: hex.toLowerCase() };
  }
  throw new ArtifactDownloadError(`no checksum for ${plan.fileName} found in checksum file ${spec.file}`);
}

/** All of `from`, at most `max` bytes; `what` names it when it is larger. */
async function readBounded(from: AsyncIterable<unknown> & { destroy?(): void }, max: number, what: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  try {
    for await (const c of from) {
      n += (c as Buffer).length;
      if (n > max) throw new ArtifactLimitError(`${what} is over ${max} bytes`);
      parts.push(c as Buffer);
    }
  } finally {
    from.destroy?.();
  }
  return Buffer.concat(parts);
}

/**
 * The task's user that reads sources and writes artifacts, when berth is root (it cannot switch
 * otherwise) and the task's user is not root (a raw_exec task runs as berth).
 */
const asUser = (ctx: FetchArtifactContext) => (isRoot() && ctx.owner && ctx.owner.uid !== 0 ? ctx.owner : undefined);

/** Unpacks or places the downloaded file through the restore staging. */
async function place(plan: ArtifactPlan, file: string, tmp: string, ctx: FetchArtifactContext, signal: AbortSignal): Promise<void> {
  let under = plan.destination;
  let input: NodeJS.ReadableStream & { destroy?(): void };
  let gzip = false;
  if (plan.mode === 'file' && plan.archive && !['gz', 'bz2', 'xz'].includes(plan.archive)) {
    throw new ArtifactError(`mode "file" cannot hold a .${plan.archive} archive: use mode "any" or "dir", or options.archive = "false"`);
  }
  // mode file: the destination is the file itself; otherwise a dir the file goes into.
  const single = async (from: string, name: string) => {
    if (plan.mode === 'file') {
      if (!plan.destination) throw new ArtifactError('mode "file" needs a destination file path');
      under = path.posix.dirname(plan.destination) === '.' ? '' : path.posix.dirname(plan.destination);
      return singleFileTar(from, path.posix.basename(plan.destination), 0o644);
    }
    return singleFileTar(from, name, 0o644);
  };
  switch (plan.archive) {
    case 'tar':
      input = createReadStream(file);
      break;
    case 'tgz':
      input = createReadStream(file);
      gzip = true;
      break;
    case 'zip':
      input = await zipAsTar(file);
      break;
    case 'tbz2':
      input = bzip2Stream(file, asUser(ctx));
      break;
    case 'txz':
      input = xzStream(file);
      break;
    case 'gz':
    case 'bz2':
    case 'xz': {
      // A single compressed file: decompressed (bounded) into the temp dir, then placed.
      const out = path.join(tmp, 'decompressed');
      const write = createWriteStream(out, { flags: 'wx', mode: 0o600 });
      const run =
        plan.archive === 'gz'
          ? pipeline(createReadStream(file), createGunzip(), bounded(ctx.maxBytes), write, { signal })
          : pipeline(plan.archive === 'bz2' ? bzip2Stream(file, asUser(ctx)) : xzStream(file), bounded(ctx.maxBytes), write, { signal });
      await run.catch((e) => {
        if (e instanceof ArtifactLimitError || e instanceof BerthError || signal.aborted) throw e;
        throw new ArtifactDownloadError(`bad ${plan.archive === 'gz' ? 'gzip' : plan.archive} file: ${errorText(e)}`);
      });
      input = await single(out, plan.fileName.replace(new RegExp(`\\.${plan.archive}$`, 'i'), '') || 'file');
      break;
    }
    default:
      input = await single(file, plan.fileName);
  }
  try {
    await restoreSnapshot(input, ctx.dest, {
      prevAllocId: '',
      artifact: { under, label: plan.url, ...(asUser(ctx) ? { writableBy: asUser(ctx) } : {}) },
      maxBytes: ctx.maxBytes,
      maxEntries: 100_000,
      gzip,
      signal,
      ...(ctx.owner ? { owner: ctx.owner } : {}),
    });
  } finally {
    input.destroy?.();
  }
}
