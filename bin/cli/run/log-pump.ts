/**
 * Streams every task's stdout and stderr, line by line, while an allocation runs: follows the
 * rotated log files (no polling) and, when asked to finish, reads whatever is left so the last
 * lines a task wrote are never lost.
 * @module
 */
import { StringDecoder } from 'node:string_decoder';
import type { AllocRunner, LogStream } from '../../../actors/client/types.ts';

/** Receives one complete line (without its newline). */
export type LineSink = (task: string, stream: LogStream, line: string) => void;

/** Where one stream has got to. */
interface StreamState {
  task: string;
  stream: LogStream;
  /** Bytes consumed so far (the offset to go on from). */
  read: number;
  /** An unfinished last line. */
  partial: string;
  /** Decodes UTF-8 across chunk boundaries. */
  decoder: StringDecoder;
  done: Promise<void>;
}

/** Follows the logs of `tasks` until {@link LogPump.finish}. */
export class LogPump {
  readonly #runner: AllocRunner;
  readonly #sink: LineSink;
  readonly #follow = new AbortController();
  readonly #streams: StreamState[] = [];

  constructor(runner: AllocRunner, tasks: string[], sink: LineSink) {
    this.#runner = runner;
    this.#sink = sink;
    for (const task of tasks)
      for (const stream of ['stdout', 'stderr'] as const)
        this.#streams.push({ task, stream, read: 0, partial: '', decoder: new StringDecoder('utf8'), done: Promise.resolve() });
  }

  /** Starts following (once the alloc dir exists). */
  start(): void {
    for (const s of this.#streams) s.done = this.#read(s, true);
  }

  /** Stops following, reads what is left of every stream, and flushes partial last lines. */
  async finish(): Promise<void> {
    this.#follow.abort();
    await Promise.all(this.#streams.map((s) => s.done));
    for (const s of this.#streams) {
      await this.#read(s, false);
      s.partial += s.decoder.end();
      if (s.partial) this.#sink(s.task, s.stream, s.partial);
      s.partial = '';
    }
  }

  async #read(s: StreamState, follow: boolean): Promise<void> {
    try {
      const opts = follow ? { follow: true, offset: s.read, signal: this.#follow.signal } : { offset: s.read };
      for await (const chunk of this.#runner.logs(s.task, s.stream, opts)) {
        s.read += chunk.length;
        const lines = (s.partial + s.decoder.write(chunk)).split('\n');
        s.partial = lines.pop()!;
        for (const line of lines) this.#sink(s.task, s.stream, line);
      }
    } catch {
      // The logs dir is not there (the alloc failed before building it): nothing to show.
    }
  }
}
