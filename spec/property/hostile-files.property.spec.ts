/**
 * Property: whatever a task plants in its dirs (FIFOs, unix sockets, device nodes as root, symlink
 * loops and chains, hard links to root-only host files, ordinary files), every alloc-fs call
 * (list, stat, readAt, stream), the log reader and a snapshot answer or fail with a named
 * BerthError within a bound, and the host's thread pool stays usable (an unrelated readFile
 * completes). Seeded and bounded in `npm test`; `BERTH_SOAK=<runs>` for a soak.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { AllocDir } from '../../actors/allocdir/index.ts';
import { createAllocFS } from '../../actors/allocfs/index.ts';
import { readTaskLogs } from '../../actors/drivers/logs/reader.ts';
import { BerthError } from '../../model/errors.ts';
import { propertyRuns, propertyTimeout } from './settings.ts';

const isRoot = process.geteuid?.() === 0;
const BOUND_MS = 3000;

type Plant =
  | { kind: 'file'; name: string; body: string }
  | { kind: 'fifo'; name: string }
  | { kind: 'socket'; name: string }
  | { kind: 'device'; name: string }
  | { kind: 'symlink'; name: string; target: string }
  | { kind: 'hardlink-root'; name: string }
  | { kind: 'dir'; name: string };

// Names that collide with log files, so the log reader meets them too.
const name = fc.constantFrom('a', 'b', 'c', 'web.stdout.0', 'web.stdout.1', 'web.stderr.0', 'd/e', 'd/f', 'd');
const plant: fc.Arbitrary<Plant> = fc.oneof(
  fc.record({ kind: fc.constant('file' as const), name, body: fc.string({ maxLength: 50 }) }),
  fc.record({ kind: fc.constant('fifo' as const), name }),
  fc.record({ kind: fc.constant('socket' as const), name }),
  fc.record({ kind: fc.constant('device' as const), name }),
  fc.record({
    kind: fc.constant('symlink' as const),
    name,
    target: fc.constantFrom('a', 'b', 'd', 'd/e', '../a', '.', '..', '/etc/shadow', 'loop', 'web.stdout.0'),
  }),
  fc.record({ kind: fc.constant('hardlink-root' as const), name }),
  fc.record({ kind: fc.constant('dir' as const), name }),
);
const where = fc.constantFrom('web/local', 'alloc/logs', 'alloc/data');

/** Settles `p`, or fails once `ms` pass. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

/** Runs `call`; it must answer, or fail with a BerthError. */
async function answersOrTyped(what: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await within(BOUND_MS, what, call());
  } catch (e) {
    if (e instanceof BerthError) return;
    throw new Error(`${what}: untyped ${(e as Error)?.name}: ${(e as Error)?.message}`, { cause: e });
  }
}

const drain = async (it: AsyncIterable<Buffer>) => {
  let n = 0;
  for await (const c of it) n += c.length;
  return n;
};

describe('property: planted file kinds never block or throw untyped', function () {
  this.timeout(propertyTimeout(120_000));
  let root: string;
  let rootOnly: string;
  before(async () => {
    root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'berth-prop-files-'));
    rootOnly = path.join(root, 'root-only');
    await writeFile(rootOnly, 'secret', { mode: 0o600 });
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('every alloc-fs, log and snapshot call answers or fails typed, within a bound, with the thread pool usable', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(where, plant), { minLength: 1, maxLength: 8 }), async (plants) => {
        const allocRoot = path.join(root, `a${run++}`);
        await mkdir(allocRoot);
        const ad = new AllocDir(allocRoot, '8e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
        const fifos: string[] = [];
        const servers: net.Server[] = [];
        await ad.build();
        await ad.newTaskDir('web').build();
        try {
          for (const [dir, p] of plants) {
            const abs = path.join(ad.dir, dir, p.name);
            await mkdir(path.dirname(abs), { recursive: true }).catch(() => undefined);
            try {
              if (fs.lstatSync(abs, { throwIfNoEntry: false })) continue;
            } catch {
              continue; // a parent is not a directory
            }
            try {
              if (p.kind === 'file') await writeFile(abs, p.body);
              else if (p.kind === 'dir') await mkdir(abs);
              else if (p.kind === 'fifo') {
                execFileSync('mkfifo', [abs]);
                fifos.push(abs);
              } else if (p.kind === 'socket') {
                if (Buffer.byteLength(abs) > 100) continue;
                const srv = net.createServer();
                servers.push(srv);
                await new Promise<void>((r, j) => srv.listen(abs, r).once('error', j));
              } else if (p.kind === 'device') {
                if (!isRoot) continue;
                execFileSync('mknod', [abs, 'c', '1', '3']); // /dev/null's numbers
              } else if (p.kind === 'symlink') await symlink(p.target === 'loop' ? p.name.split('/').pop()! : p.target, abs);
              else if (p.kind === 'hardlink-root') fs.linkSync(rootOnly, abs);
            } catch (e) {
              // The plan itself was impossible (a parent is a file, a link, missing): skip that plant.
              if (['EEXIST', 'ENOTDIR', 'ENOENT', 'ELOOP', 'EACCES'].includes((e as NodeJS.ErrnoException).code ?? '')) continue;
              if (typeof (e as { status?: unknown }).status === 'number') continue; // mkfifo/mknod said no (a dangling parent)
              throw e;
            }
          }
          const afs = createAllocFS(ad);
          const paths = ['/', 'web', 'web/local', 'alloc/logs', 'alloc/data', ...plants.map(([d, p]) => `${d}/${p.name}`)];
          const calls: Array<Promise<void>> = [];
          for (const p of paths) {
            calls.push(answersOrTyped(`list ${p}`, () => afs.list(p)));
            calls.push(answersOrTyped(`stat ${p}`, () => afs.stat(p)));
            calls.push(answersOrTyped(`readAt ${p}`, () => afs.readAt(p, 0, 64)));
            calls.push(answersOrTyped(`stream ${p}`, () => drain(afs.stream(p))));
          }
          for (const s of ['stdout', 'stderr'] as const) calls.push(answersOrTyped(`logs ${s}`, () => drain(readTaskLogs(ad.logsDir, 'web', s))));
          calls.push(answersOrTyped('snapshot', () => ad.snapshot(drainSink())));
          await Promise.all(calls);
          // The thread pool is still free: an unrelated read completes at once.
          expect(await within(BOUND_MS, 'unrelated readFile', readFile(rootOnly, 'utf8'))).to.equal('secret');
          // A root-only host file hard-linked in is never served.
          if (process.env.BERTH_SOAK_LOG) fs.appendFileSync(process.env.BERTH_SOAK_LOG, `${run} ok\n`);
          for (const [d, p] of plants) {
            if (p.kind !== 'hardlink-root') continue;
            const got = await afs.readAt(`${d}/${p.name}`, 0, 64).catch(() => undefined);
            expect(got?.toString(), `${d}/${p.name} served a root-only file`).to.not.equal('secret');
          }
        } finally {
          for (const f of fifos) {
            try {
              fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
            } catch {}
          }
          for (const s of servers) s.close();
          await ad.destroy();
        }
      }),
      propertyRuns(25),
    );
  });
});

function drainSink(): PassThrough {
  const out = new PassThrough();
  out.resume();
  return out;
}
