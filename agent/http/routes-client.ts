/**
 * `/v1/client/...`: what the client answers about its own allocs: the alloc dir (`fs/ls`,
 * `fs/stat`, `fs/cat`, `fs/readat`, `fs/stream`), task logs (`fs/logs`), stats, restart,
 * signal and garbage collection.
 *
 * Streams are Nomad's: a sequence of JSON frames `{Offset, Data (base64), File, FileEvent}`,
 * or the bytes themselves with `plain=true`. Every write waits for `drain` when the socket is
 * full, so a slow reader holds the file read back instead of growing a buffer.
 * @module
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import {
  AllocFileNotFoundError,
  AllocFSError,
  AllocNotFoundError,
  AllocNotEligibleForGcError,
  BerthError,
  type AllocFileInfo,
  type AllocRunner,
} from '../../index.ts';
import type { AgentCore } from '../core.ts';
import { ApiError, UNKNOWN_ALLOCATION } from './errors.ts';
import { decodeBody, restartBody, signalBody } from './bodies.ts';
import { apiChecks } from './checks.ts';
import { ZERO_TIME } from './encode.ts';
import type { Req, Router } from './router.ts';

/** An idle follow stream sends an empty frame this often (Nomad's heartbeat). */
export const STREAM_HEARTBEAT_MS = 10_000;

const fileInfo = (f: AllocFileInfo) => ({
  Name: f.name,
  IsDir: f.isDir,
  Size: f.size,
  FileMode: f.fileMode,
  ModTime: f.modTime ? new Date(f.modTime).toISOString() : ZERO_TIME,
  ContentType: '',
});

/** Writes `chunk`, waiting for `drain` when the socket's buffer is full; false once the client left. */
export async function writeWithBackpressure(res: ServerResponse, chunk: string | Buffer, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return false;
  if (res.write(chunk)) return true;
  try {
    await once(res, 'drain', { signal });
    return true;
  } catch {
    return false;
  }
}

/** Maps the alloc fs's errors to Nomad's statuses. */
function fsError(e: unknown): never {
  if (e instanceof AllocFileNotFoundError) throw new ApiError(404, e.message);
  if (e instanceof AllocFSError) throw new ApiError(400, e.message);
  throw e;
}

/** Adds the client routes. */
export function clientRoutes(r: Router, core: AgentCore, heartbeatMs: number = STREAM_HEARTBEAT_MS): void {
  const runner = (id: string): AllocRunner => {
    const run = core.client.runner(id);
    if (!run) throw new ApiError(404, core.state.allocs.has(id) ? `alloc ${id} has been garbage collected or is not on this node` : UNKNOWN_ALLOCATION);
    return run;
  };
  const path = (req: Req) => req.query.get('path') ?? '/';

  r.on('GET', '/v1/client/fs/ls/:alloc', async (req) => {
    try {
      return { body: (await runner(req.params.alloc!).fs.list(path(req))).map(fileInfo) };
    } catch (e) {
      return fsError(e);
    }
  });
  r.on('GET', '/v1/client/fs/stat/:alloc', async (req) => {
    try {
      return { body: fileInfo(await runner(req.params.alloc!).fs.stat(path(req))) };
    } catch (e) {
      return fsError(e);
    }
  });
  r.on('GET', '/v1/client/fs/readat/:alloc', async (req) => {
    const offset = Number(req.query.get('offset') ?? 0);
    const limit = Number(req.query.get('limit') ?? 0);
    if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 0)
      throw new ApiError(400, 'offset and limit must be non-negative integers');
    let data: Buffer;
    try {
      data = await runner(req.params.alloc!).fs.readAt(path(req), offset, limit || 1024 * 1024);
    } catch (e) {
      return fsError(e);
    }
    req.res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': data.length });
    req.res.end(data);
  });
  r.on('GET', '/v1/client/fs/cat/:alloc', async (req) => {
    const fs = runner(req.params.alloc!).fs;
    const p = path(req);
    try {
      const info = await fs.stat(p);
      if (info.isDir) throw new ApiError(400, 'file is a directory');
      await openable(fs, p);
    } catch (e) {
      return fsError(e);
    }
    req.res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    for await (const chunk of fs.stream(p, { signal: req.signal })) if (!(await writeWithBackpressure(req.res, chunk, req.signal))) break;
    req.res.end();
  });
  r.on('GET', '/v1/client/fs/stream/:alloc', async (req) => {
    const fs = runner(req.params.alloc!).fs;
    const p = path(req);
    let size: number;
    try {
      const info = await fs.stat(p);
      if (!info.isDir) await openable(fs, p);
      size = info.size;
    } catch (e) {
      return fsError(e);
    }
    const { offset, plain, follow } = streamOpts(req, size);
    await pump(req, p, plain, offset, fs.stream(p, { follow, offset, signal: req.signal }), follow, heartbeatMs);
  });
  r.on('GET', '/v1/client/fs/logs/:alloc', async (req) => {
    const run = runner(req.params.alloc!);
    const task = req.query.get('task');
    const type = req.query.get('type') ?? 'stdout';
    if (!task) throw new ApiError(400, 'must provide task name');
    if (type !== 'stdout' && type !== 'stderr') throw new ApiError(400, 'must provide log type (stdout/stderr)');
    let total = 0;
    try {
      for (const f of await run.fs.list('alloc/logs')) if (f.name.startsWith(`${task}.${type}.`)) total += f.size;
    } catch {
      // no logs yet
    }
    const { offset, plain, follow } = streamOpts(req, total);
    await pump(req, `alloc/logs/${task}.${type}`, plain, offset, run.logs(task, type, { follow, offset, signal: req.signal }), follow, heartbeatMs);
  });
  r.on('GET', '/v1/client/allocation/:id/checks', (req) => {
    runner(req.params.id!); // a 404 for an alloc this client does not have
    return { body: apiChecks(core.client.checks(req.params.id!)) };
  });
  r.on('GET', '/v1/client/allocation/:id/stats', async (req) => {
    const u = await runner(req.params.id!).stats();
    return { body: apiUsage(u) };
  });
  const restart = async (req: Req) => {
    const run = runner(req.params.id!);
    const body = await decodeBody(req, restartBody, { emptyIs: {} });
    try {
      if (body.AllTasks || !body.TaskName) await run.restartAll('User requested restart');
      else await run.restartTask(body.TaskName, 'User requested restart');
    } catch (e) {
      if (e instanceof BerthError) throw new ApiError(400, e.message);
      throw e;
    }
    return { body: {} };
  };
  r.on('POST', '/v1/client/allocation/:id/restart', restart);
  r.on('POST', '/v1/client/allocation/:id/signal', async (req) => {
    const run = runner(req.params.id!);
    const body = await decodeBody(req, signalBody, { emptyIs: {} });
    try {
      await run.signal(body.Task || undefined, body.Signal || 'SIGKILL');
    } catch (e) {
      if (e instanceof BerthError) throw new ApiError(400, e.message);
      throw e;
    }
    return { body: {} };
  });
  const gcOne = async (req: Req) => {
    try {
      await core.client.gcAlloc(req.params.id!);
    } catch (e) {
      if (e instanceof AllocNotFoundError) throw new ApiError(404, UNKNOWN_ALLOCATION);
      if (e instanceof AllocNotEligibleForGcError) throw new ApiError(400, e.message);
      throw e;
    }
    return { body: {} };
  };
  r.on('GET', '/v1/client/allocation/:id/gc', gcOne);
  r.on('POST', '/v1/client/allocation/:id/gc', gcOne);
  const gcAll = async () => ({ body: { Collected: await core.client.gc() } });
  r.on('GET', '/v1/client/gc', gcAll);
  r.on('POST', '/v1/client/gc', gcAll);
}

function streamOpts(req: Req, size: number): { offset: number; plain: boolean; follow: boolean } {
  const origin = req.query.get('origin') ?? 'start';
  if (origin !== 'start' && origin !== 'end') throw new ApiError(400, 'origin must be start or end');
  const raw = Number(req.query.get('offset') ?? 0);
  if (!Number.isInteger(raw) || raw < 0) throw new ApiError(400, 'offset must be a non-negative integer');
  const offset = origin === 'end' ? Math.max(0, size - raw) : raw;
  return { offset, plain: req.query.get('plain') === 'true', follow: req.query.get('follow') === 'true' };
}

/** Copies `chunks` to the response, framed unless `plain`, with heartbeats while following. */
/**
 * Refuses, before the 200 goes out, a path the stream could not open (a FIFO or socket a task
 * made, a file it cannot read): an empty read opens it the same guarded way the stream will.
 */
async function openable(fs: AllocRunner['fs'], p: string): Promise<void> {
  await fs.readAt(p, 0, 0);
}

async function pump(
  req: Req,
  file: string,
  plain: boolean,
  offset: number,
  chunks: AsyncIterable<Buffer>,
  follow: boolean,
  heartbeatMs: number,
): Promise<void> {
  const { res, signal } = req;
  res.writeHead(200, { 'Content-Type': plain ? 'text/plain; charset=utf-8' : 'application/json' });
  res.flushHeaders();
  let pos = offset;
  const heartbeat = follow && !plain ? setInterval(() => res.write('{}\n'), heartbeatMs) : undefined;
  try {
    for await (const chunk of chunks) {
      const out = plain ? chunk : JSON.stringify({ Offset: pos + chunk.length, Data: chunk.toString('base64'), File: file, FileEvent: '' }) + '\n';
      pos += chunk.length;
      if (!(await writeWithBackpressure(res, out, signal))) break;
    }
  } finally {
    if (heartbeat) clearInterval(heartbeat);
    if (!res.destroyed) res.end();
  }
}

type Usage = Awaited<ReturnType<AllocRunner['stats']>>;
type RU = Usage['resourceUsage'];

function apiRU(u: RU): Record<string, unknown> {
  return {
    MemoryStats: {
      RSS: u.memoryStats.rss,
      Cache: u.memoryStats.cache,
      Swap: u.memoryStats.swap,
      Usage: u.memoryStats.usage,
      MaxUsage: u.memoryStats.maxUsage,
      // Kernel memory is not read (cgroup v1's kmem counters); `Measured` does not name it.
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: u.memoryStats.measured,
    },
    CpuStats: {
      SystemMode: u.cpuStats.systemMode,
      UserMode: u.cpuStats.userMode,
      TotalTicks: u.cpuStats.totalTicks,
      Percent: u.cpuStats.percent,
      ThrottledPeriods: u.cpuStats.throttledPeriods,
      ThrottledTime: u.cpuStats.throttledTime,
      Measured: u.cpuStats.measured,
    },
    DeviceStats: null,
  };
}

/** Nomad's `AllocResourceUsage`. */
function apiUsage(u: Usage): Record<string, unknown> {
  return {
    ResourceUsage: apiRU(u.resourceUsage),
    Tasks: Object.fromEntries(
      Object.entries(u.tasks).map(([t, v]) => [t, { ResourceUsage: apiRU(v.resourceUsage), Timestamp: Math.round(v.timestamp * 1e6), Pids: null }]),
    ),
    Timestamp: Math.round(u.timestamp * 1e6),
  };
}
