/**
 * Helpers of the migration specs: the peer process (another node serving snapshots, see
 * migrate-peer.ts), a gated snapshot server (streams a real snapshot, holding part of it back
 * until released), and small filesystem helpers.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { AllocDir } from '../../actors/allocdir/index.ts';
import type { Allocation } from '../../model/types.ts';
import type { RunnerHook } from '../../actors/runner/hooks.ts';
import type { AllocDirHandle } from '../../actors/allocdir/handle.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A running peer process. */
export interface Peer {
  url: string;
  /** host:port, as a node's httpAddr. */
  httpAddr: string;
  ok: Allocation;
  broken: Allocation;
  child: ChildProcess;
  /** SIGTERM, then wait for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/** Starts spec/support/migrate-peer.ts in its own Node process and waits for its JSON line. */
export function startPeer(args: { token?: string; bigMB?: number } = {}): Promise<Peer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'spec/support/migrate-peer.ts'), JSON.stringify(args)], {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let exited = false;
  const exitP = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exitP;
    clearTimeout(t);
  };
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise<Peer>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      child.stdout!.off('data', onData);
      try {
        const info = JSON.parse(out.slice(0, nl)) as { url: string; ok: Allocation; broken: Allocation };
        resolve({ ...info, httpAddr: new URL(info.url).host, child, stop });
      } catch (err) {
        void stop();
        reject(err);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`peer exited (${code}) before it was ready: ${stderr}`)));
  });
}

/** The bytes of a real snapshot of an alloc dir holding `files` under alloc/data (and web/local). */
export async function snapshotBytes(files: Record<string, string | Buffer>, local: Record<string, string> = {}): Promise<Buffer> {
  const root = await mkdtemp(path.join(tmpdir(), 'berth-snapbytes-'));
  try {
    const ad = new AllocDir(root, 'source');
    ad.newTaskDir('web');
    await ad.build();
    await ad.taskDir('web')!.build();
    for (const [rel, body] of Object.entries(files)) await writeFile(path.join(ad.dataDir, rel), body);
    for (const [rel, body] of Object.entries(local)) await writeFile(path.join(ad.dir, 'web', 'local', rel), body);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await ad.snapshot(out);
    await ad.destroy();
    return Buffer.concat(chunks);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** A snapshot server that sends `bytes[0, holdAt)` at once and the rest only after `release()`. */
export interface GatedServer {
  url: string;
  httpAddr: string;
  /** Headers of every request, in order. */
  readonly requests: IncomingHttpHeaders[];
  /** Resolves at the first request. */
  requested: Promise<void>;
  /** Resolves when the first request's connection closed before the body was sent in full. */
  cut: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

/** Starts a {@link GatedServer} on 127.0.0.1. */
export async function gatedServer(bytes: Buffer, holdAt: number): Promise<GatedServer> {
  const requests: IncomingHttpHeaders[] = [];
  const sockets = new Set<Socket>();
  let released = false;
  const waiting: Array<() => void> = [];
  let onRequest!: () => void;
  const requested = new Promise<void>((r) => (onRequest = r));
  let onCut!: () => void;
  const cut = new Promise<void>((r) => (onCut = r));
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    onRequest();
    res.writeHead(200, { 'Content-Type': 'application/x-tar' });
    res.write(bytes.subarray(0, holdAt));
    let done = false;
    res.once('close', () => {
      if (!done) onCut();
    });
    const rest = () => {
      done = true;
      res.end(bytes.subarray(holdAt));
    };
    if (released) rest();
    else waiting.push(rest);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    httpAddr: `127.0.0.1:${port}`,
    requests,
    requested,
    cut,
    release() {
      released = true;
      for (const w of waiting.splice(0)) w();
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** Entries of a directory, [] when it does not exist. */
export async function entries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Polls `pred` until it holds (spec/support/until.ts). */
export { until } from './until.ts';

/**
 * Watches an alloc's destroy with no sleep: `hook` (give it to the client) resolves `hooksRan`
 * when the destroy hooks of `allocId` ran, the step just before the runner removes the alloc dir;
 * `removing()` turns true once the dir's `destroy` holds the dir's lock and starts removing.
 * After `hooksRan` and one loop turn, a removal not held off by copies in flight has begun.
 */
export function watchDirDestroy(): {
  hook: RunnerHook;
  hooksRan: (allocId: string) => Promise<void>;
  watch: (ad: AllocDirHandle) => void;
  removing: () => boolean;
} {
  let removing = false;
  const ran = new Map<string, () => void>();
  const waits = new Map<string, Promise<void>>();
  const wait = (id: string) => {
    if (!waits.has(id)) waits.set(id, new Promise<void>((r) => ran.set(id, r)));
    return waits.get(id)!;
  };
  return {
    hook: {
      name: 'destroy-watch',
      destroy: async (ctx) => {
        void wait(ctx.alloc.id);
        ran.get(ctx.alloc.id)!();
      },
    },
    hooksRan: wait,
    watch(handle) {
      const ad = handle as AllocDir; // the runner's handle is an AllocDir, whose lock this watches
      const destroy = ad.destroy.bind(ad);
      const lock = ad.lock;
      const exclusive = lock.exclusive;
      ad.destroy = () => {
        // destroy() asks for the lock synchronously: wrap only that call's critical section.
        lock.exclusive = <T>(fn: () => Promise<T>) =>
          exclusive.call(lock, () => {
            removing = true;
            return fn();
          }) as Promise<T>;
        try {
          return destroy();
        } finally {
          lock.exclusive = exclusive;
        }
      };
    },
    removing: () => removing,
  };
}
