/**
 * Holds every libuv thread-pool thread of this process on purpose, for the specs that show what
 * a blocked pool does (a hung host lookup, the leak check's pool probe).
 * @module
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from './until.ts';

/** Threads of this process blocked opening a FIFO for reading (waiting for a writer). */
export function threadsWaitingForWriter(): number {
  let n = 0;
  for (const t of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${t}/wchan`, 'utf8') === 'wait_for_partner') n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

/**
 * Holds every libuv threadpool thread of this process, as hung getaddrinfo calls do: each opens a
 * FIFO for reading, which blocks its thread until a writer comes. Resolves once every thread is
 * seen blocked there, so the hold is real before the test goes on.
 *
 * The release must not race the hold: a non-blocking write-only open fails (ENXIO) while a reader
 * has not yet reached its open, and a thread left blocked is the whole suite's pool gone. A
 * read-write open never blocks and never fails that way: it lets a blocked reader through, and
 * one that comes later finds a writer there and does not block.
 */
export async function holdThreadpool(): Promise<{ release: () => Promise<void> }> {
  const n = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-pool-'));
  const fifos = Array.from({ length: n }, (_, i) => path.join(dir, `f${i}`));
  execFileSync('mkfifo', fifos);
  const opens: Promise<FileHandle>[] = fifos.map((f) => open(f, 'r'));
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    const writers = fifos.map((f) => openSync(f, constants.O_RDWR));
    try {
      for (const h of await Promise.all(opens)) await h.close();
    } finally {
      for (const fd of writers) closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // Work queued before the opens (other specs' fs calls) finishes first; wait on the kernel's word.
  await until(() => threadsWaitingForWriter() >= n, 10_000, `all ${n} threadpool threads held`).catch(async (e: Error) => {
    await release();
    throw e;
  });
  return { release };
}
