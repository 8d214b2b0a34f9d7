/** Shared helpers of the allocdir specs: temp dirs, tar building, stream plumbing. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Header } from 'tar';
import { listMountPoints, unmount } from '../../../actors/allocdir/index.ts';

export const isRoot = () => process.geteuid?.() === 0;

/** Skips a root-only test with a message saying why. */
export function needRoot(ctx: Mocha.Context): void {
  if (!isRoot()) {
    const t = ctx.currentTest ?? ctx.test!;
    t.title += ' (skipped: needs root for mounts/chown)';
    ctx.skip();
  }
}

/** A temp dir factory whose dirs are all removed (after unmounting anything left) by `cleanup`. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(prefix = 'berth-allocdir-'): Promise<string> {
      const d = await mkdtemp(path.join(os.tmpdir(), prefix));
      made.push(d);
      return d;
    },
    async cleanup(): Promise<void> {
      for (const d of made.splice(0)) {
        if (isRoot()) {
          const mounts = (await listMountPoints()).filter((m) => m.startsWith(d + '/')).reverse();
          for (const m of mounts) await unmount(m, { lazy: true }).catch(() => undefined);
        }
        await rm(d, { recursive: true, force: true });
      }
    },
  };
}

export interface TarEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO';
  body?: string | Buffer;
  linkpath?: string;
  mode?: number;
}

/** Raw tar bytes for hand-made (hostile) archives. */
export function tarOf(entries: TarEntry[], { end = true } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) parts.push(...entryBlocks(e));
  if (end) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function entryBlocks(e: TarEntry): Buffer[] {
  const body = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body);
  const type = e.type ?? 'File';
  const h = new Header({
    path: e.path,
    type,
    mode: e.mode ?? (type === 'Directory' ? 0o755 : 0o644),
    size: type === 'File' ? body.length : 0,
    linkpath: e.linkpath,
    mtime: new Date(),
    uid: 0,
    gid: 0,
  });
  h.encode();
  const out = [h.block!];
  if (type === 'File' && body.length) {
    out.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  return out;
}

export const streamOf = (buf: Buffer): Readable => Readable.from([buf]);

/** Collects everything written to a PassThrough. */
export function collect(): { stream: PassThrough; done: Promise<Buffer> } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
  return { stream, done };
}

export const errCode = (e: unknown) => (e as NodeJS.ErrnoException).code;
