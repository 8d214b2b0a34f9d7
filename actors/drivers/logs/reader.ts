/**
 * Reading a task's rotated log files (`<logsDir>/<task>.<stream>.N`) as one byte stream, the way
 * `nomad alloc logs [-f]` does.
 *
 * ```ts
 * for await (const chunk of readTaskLogs(allocDir.logsDir, 'web', 'stdout', { follow: true, signal })) {
 *   process.stdout.write(chunk);
 * }
 * ```
 * @module
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { openRegularFile } from '../../allocdir/safe-open.ts';

/** Which stream of a task's output. */
export type LogStream = 'stdout' | 'stderr';

/** Options of {@link readTaskLogs}. */
export interface ReadTaskLogsOptions {
  /** Keep reading as the task writes, across new rotated files, until `signal` aborts. */
  follow?: boolean;
  /** Bytes to skip, counted from the start of the oldest file still present. Default 0. */
  offset?: number;
  /** Ends the iteration (quietly, without an error) and releases every fd and watcher. */
  signal?: AbortSignal;
  /** Largest chunk yielded. Default 64 KiB. */
  chunkSize?: number;
}

/** Indices of the task's log files for `stream`, ascending. */
export async function logFileIndices(logsDir: string, task: string, stream: LogStream): Promise<number[]> {
  const prefix = `${task}.${stream}.`;
  let names: string[];
  try {
    names = await fs.promises.readdir(logsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: number[] = [];
  for (const name of names) {
    if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length))) out.push(Number(name.slice(prefix.length)));
  }
  return out.sort((a, b) => a - b);
}

/**
 * The task's log for one stream, across rotated files in order. Without `follow` it ends at the
 * current end of the newest file; with `follow` it waits for more (fs.watch on the directory, no
 * polling) until `signal` aborts, at which point it ends.
 */
export async function* readTaskLogs(logsDir: string, task: string, stream: LogStream, opts: ReadTaskLogsOptions = {}): AsyncGenerator<Buffer, void, undefined> {
  const { follow = false, signal } = opts;
  const chunkSize = opts.chunkSize ?? 64 * 1024;
  const prefix = `${task}.${stream}.`;
  const file = (i: number) => path.join(logsDir, `${prefix}${i}`);
  if (signal?.aborted) return;

  let dirty = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    dirty = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  let watcher: fs.FSWatcher | undefined;
  let watchError: Error | undefined;
  if (follow) {
    // Watch before the first read, so nothing written in between is missed. A missing logs dir
    // throws (ENOENT): the alloc dir is not built or was destroyed.
    watcher = fs.watch(logsDir, { persistent: false }, (_event, name) => {
      if (!name || String(name).startsWith(prefix)) poke();
    });
    watcher.on('error', (err) => {
      watchError = err;
      poke();
    });
  }
  signal?.addEventListener('abort', poke);

  let fh: FileHandle | undefined;
  try {
    let skip = Math.max(0, Math.floor(opts.offset ?? 0));
    let cur: number | undefined;
    let pos = 0;
    const buf = Buffer.allocUnsafe(chunkSize);

    /** Picks the first file to read, applying `offset` across files. */
    const locate = async (): Promise<void> => {
      const indices = await logFileIndices(logsDir, task, stream);
      for (let k = 0; k < indices.length; k++) {
        const i = indices[k]!;
        let size = 0;
        try {
          size = (await fs.promises.stat(file(i))).size;
        } catch {
          continue;
        }
        if (skip >= size && k < indices.length - 1) {
          skip -= size;
          continue;
        }
        cur = i;
        pos = skip;
        skip = 0;
        return;
      }
    };

    while (!signal?.aborted) {
      dirty = false;
      if (cur === undefined) await locate();
      if (cur !== undefined) {
        if (!fh) {
          try {
            // Never a blocking open: the task can put a FIFO where a log file should be.
            fh = (await openRegularFile(file(cur), { noFollow: true })).fh;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
            // Purged before we got to it: go on with the oldest newer file.
            const next = (await logFileIndices(logsDir, task, stream)).find((i) => i > cur!);
            if (next !== undefined) {
              cur = next;
              pos = 0;
              continue;
            }
          }
        }
        if (fh) {
          for (;;) {
            const { bytesRead } = await fh.read(buf, 0, chunkSize, pos);
            if (bytesRead === 0) break;
            pos += bytesRead;
            yield Buffer.from(buf.subarray(0, bytesRead));
            if (signal?.aborted) return;
          }
          const next = (await logFileIndices(logsDir, task, stream)).find((i) => i > cur!);
          if (next !== undefined) {
            // Read what was appended to this file before it was rotated, then move on.
            const { size } = await fh.stat();
            if (size > pos) continue;
            await fh.close();
            fh = undefined;
            cur = next;
            pos = 0;
            continue;
          }
        }
      }
      if (!follow) return;
      if (watchError) throw watchError;
      if (!dirty && !signal?.aborted) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener('abort', poke);
    watcher?.close();
    await fh?.close();
  }
}
