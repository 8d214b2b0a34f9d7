import type { Writable } from 'node:stream';

/** Rotating log files `<dir>/<baseName>.N` (see rotator.mjs). */
export declare class FileRotator {
  constructor(opts: { dir: string; baseName: string; maxFiles: number; fileSize: number; onRotate?: (index: number) => void });
  readonly dir: string;
  readonly baseName: string;
  readonly maxFiles: number;
  readonly fileSize: number;
  index: number;
  size: number;
  fd: number | undefined;
  existing(): number[];
  file(i: number): string;
  open(): void;
  purge(): void;
  rotate(): Promise<void>;
  write(buf: Buffer): Promise<void>;
  close(): Promise<void>;
}

/** A Writable over a FileRotator, with backpressure. */
export declare function rotatingStream(rotator: FileRotator): Writable;
