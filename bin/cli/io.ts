/**
 * Where a command writes. `main` gets the process's streams; specs pass their own, so most
 * commands can be tested in-process without spawning.
 * @module
 */
import type { Readable, Writable } from 'node:stream';

/** A command's input and output streams, and whether to colour. */
export interface CliIO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  /** Colour the output (a TTY without NO_COLOR). */
  color: boolean;
  /** The clock relative times (`5m ago`) are measured against, in ms; `Date.now` when absent (specs fix it). */
  now?: () => number;
}

/** The time relative times are printed against. */
export function nowOf(io: CliIO): number {
  return io.now ? io.now() : Date.now();
}

/** The process's own streams. */
export function processIO(): CliIO {
  const color = !!process.stdout.isTTY && !process.env.NO_COLOR;
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, color };
}

/** Writes one line to `stream`. */
export function writeLine(stream: Writable, text: string): void {
  stream.write(`${text}\n`);
}

/** SGR colouring when `on`, plain text otherwise. */
export function paint(on: boolean): (code: number, text: string) => string {
  return on ? (code, text) => `\x1b[${code}m${text}\x1b[0m` : (_code, text) => text;
}
