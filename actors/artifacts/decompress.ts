/**
 * Decoders for the compressed artifacts that Node's zlib does not read, each a stream that
 * decodes only as fast as it is read (so the restore staging's byte bound also bounds the work
 * and the memory a bomb can cost):
 *
 * - xz: `xz-decompress` (xz-embedded compiled to WebAssembly: no native code, no install step;
 *   its dictionary is capped, and it decodes one buffer at a time as the stream is pulled).
 * - reading a `file` source as the task's user: `cat`, run as that user.
 * - bzip2: the system's `bzip2 -dc` as a child process, fed on stdin, read from stdout (a pipe:
 *   when nobody reads, it blocks). No npm decoder fits: `unbzip2-stream` decodes every block
 *   it holds as soon as it arrives, whatever the reader, and keeps each block's output as a
 *   JavaScript array (a 177-byte bzip2 bomb took 2 GB of memory); `seek-bzip` decodes a whole
 *   buffer at once. The child runs with an empty environment, as the task's user when given
 *   one, and is killed when the stream is destroyed.
 * @module
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type * as XzDecompress from 'xz-decompress';
import { ArtifactDownloadError, ArtifactError } from './errors.ts';

// A UMD bundle: Node's ESM loader cannot see its named export, require can.
const { XzReadableStream } = createRequire(import.meta.url)('xz-decompress') as typeof XzDecompress;

/** Most stderr kept from the bzip2 child (for its error message). */
const MAX_STDERR = 4096;

/**
 * The xz file at `file`, decompressed. A corrupt file fails the stream with
 * {@link ArtifactDownloadError}. The library decodes one stream at a time in the process (its
 * own lock); a stream destroyed early is cancelled, which releases it.
 */
export function xzStream(file: string): Readable {
  const raw = createReadStream(file);
  const reader = new XzReadableStream(Readable.toWeb(raw) as unknown as ReadableStream<Uint8Array>).getReader();
  async function* gen() {
    // Cancel only a live stream: the library has already released one that ended or failed.
    let live = true;
    try {
      for (;;) {
        const { done, value } = await reader.read().catch((e: Error) => {
          live = false;
          throw new ArtifactDownloadError(`bad xz file: ${e.message}`);
        });
        if (done) break;
        yield Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
      live = false;
    } finally {
      if (live) await reader.cancel().catch(() => undefined);
      raw.destroy();
    }
  }
  return Readable.from(gen(), { objectMode: false });
}

/**
 * The bzip2 file at `file`, decompressed by the system's `bzip2` (see the module doc), running
 * as `user` when given (berth must be root then). A corrupt file, or no `bzip2` on the host,
 * fails the stream with a named error.
 */
export function bzip2Stream(file: string, user?: { uid: number; gid: number }): Readable {
  const child = spawn('bzip2', ['-dc'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    if (stderr.length < MAX_STDERR) stderr += c.toString('utf8').slice(0, MAX_STDERR - stderr.length);
  });
  const exited = new Promise<{ code: number | null; error?: NodeJS.ErrnoException }>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, error }));
    child.once('close', (code) => resolve({ code }));
  });
  // Node discards the unread output of a child that exits unless stdout has a 'readable'
  // listener: bzip2 may finish before the staging starts reading.
  child.stdout.on('readable', () => undefined);
  const input = createReadStream(file);
  // bzip2 stops reading when it fails (or is killed): its stdin's EPIPE is not the error to report.
  child.stdin.on('error', () => undefined);
  input.on('error', () => child.kill('SIGKILL'));
  input.pipe(child.stdin);
  async function* gen() {
    try {
      for await (const c of child.stdout) yield c as Buffer;
      const { code, error } = await exited;
      if (error?.code === 'ENOENT')
        throw new ArtifactError('bzip2 archives need the bzip2 program on the host; set options.archive = "false" to fetch the file as it is');
      if (error) throw new ArtifactDownloadError(`bzip2: ${error.message}`);
      if (code !== 0) throw new ArtifactDownloadError(`bad bzip2 file: ${stderr.trim().replace(/^bzip2: /, '') || `bzip2 exited with ${code}`}`);
    } finally {
      input.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  }
  return Readable.from(gen(), { objectMode: false });
}

/**
 * The file at `file` as `user` reads it: `cat` running as that user (berth must be root), so a
 * `file` source or checksum file the task's user may not read is refused as it would be for
 * the task (`cat: <path>: Permission denied`). Killed when the stream is destroyed.
 */
export function readFileAs(file: string, user: { uid: number; gid: number }): Readable {
  const child = spawn('cat', ['--', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, uid: user.uid, gid: user.gid });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    if (stderr.length < MAX_STDERR) stderr += c.toString('utf8').slice(0, MAX_STDERR - stderr.length);
  });
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('close', (code) => resolve({ code }));
  });
  child.stdout.on('readable', () => undefined); // see bzip2Stream
  async function* gen() {
    try {
      for await (const c of child.stdout) yield c as Buffer;
      const { code, error } = await exited;
      if (error || code !== 0) throw new ArtifactDownloadError(`source path error: ${stderr.trim() || error?.message || `cat exited with ${code}`}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  }
  return Readable.from(gen(), { objectMode: false });
}
