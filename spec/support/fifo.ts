/**
 * Writing to a FIFO a task reads, without blocking the test runner: a plain write-only open waits
 * for a reader, on the main thread (writeFileSync) or a pool thread (writeFile), forever if the
 * task never opens its end. Here the open is non-blocking, tried again until a reader is there or
 * the bound passes, and then the write happens.
 * @module
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { PollTimeoutError, until } from './until.ts';

/** No reader opened the FIFO within the bound. */
export class FifoNoReaderError extends Error {
  override name = 'FifoNoReaderError';
}

/** Writes `data` to the FIFO at `file` once a reader has it open; rejects after `timeoutMs` without one. */
export async function writeFifo(file: string, data: string, timeoutMs = 10_000): Promise<void> {
  let fd: number | undefined;
  const reader = () => {
    try {
      fd = openSync(file, constants.O_WRONLY | constants.O_NONBLOCK);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENXIO') throw e; // ENXIO: no reader yet
      return false;
    }
  };
  await until(reader, timeoutMs, `a reader of ${file}`).catch((e: Error) => {
    // Only the bound is "no reader"; another open error (ENOENT, EACCES) is passed on as it is.
    throw e instanceof PollTimeoutError ? new FifoNoReaderError(`no reader opened ${file} within ${timeoutMs} ms`) : e;
  });
  try {
    writeSync(fd!, data); // a few bytes: far below the pipe's buffer, so never EAGAIN
  } finally {
    closeSync(fd!);
  }
}
