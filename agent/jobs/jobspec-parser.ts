/**
 * Job files parsed off the event loop: a file of {@link INLINE_PARSE_BELOW} bytes or more goes to
 * one worker thread per agent, started at the first such parse and kept (a worker costs from a
 * hundred milliseconds to a second to start, a parse of a small file a few), so a 4 MiB job file
 * keeps the agent answering while it is parsed. Smaller files parse in-process (a few to ~30 ms).
 * Errors come back as the same `JobspecError`s an in-process parse throws.
 * @module
 */
import { Worker } from 'node:worker_threads';
import { JobspecError, type UnsupportedStanza } from '../../index.ts';
import type { ApiJob } from '../state/types.ts';
import { parseJobFile, type ParseJobFileOptions } from './jobspec.ts';

/** Job files shorter than this (UTF-16 units) are parsed in-process; longer ones in the worker. */
export const INLINE_PARSE_BELOW = 16 * 1024;

/** A parse the agent sends its worker. */
export interface ParseRequest {
  id: number;
  text: string;
  opts: ParseJobFileOptions;
}

/** The worker's answer: the job, or the error's fields. */
export type ParseReply =
  | { id: number; job: ApiJob; error?: undefined }
  | {
      id: number;
      job?: undefined;
      error: {
        jobspec: boolean;
        message: string;
        file?: string;
        line?: number;
        column?: number;
        path?: string;
        issues?: string[];
        unsupported?: UnsupportedStanza[];
      };
    };

/** The parser was closed (the agent is stopping). */
export class JobspecParserClosedError extends Error {
  constructor() {
    super('the jobspec parser is closed (the agent is stopping)');
    this.name = 'JobspecParserClosedError';
  }
}

// In dist/ the worker is parse-worker.js; from the TypeScript source it is parse-worker.ts, loaded
// through ts-worker.mjs, which registers tsx in the worker's own thread first.
const FROM_SOURCE = import.meta.url.endsWith('.ts');

function newWorker(): Worker {
  if (!FROM_SOURCE) return new Worker(new URL('./parse-worker.js', import.meta.url), { execArgv: [] });
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), {
    execArgv: [],
    env: { ...process.env, ESBUILD_WORKER_THREADS: '0' },
    workerData: { entry: new URL('./parse-worker.ts', import.meta.url).href },
  });
}

/** A JobspecError as thrown in the worker, rebuilt here (its message already carries the location). */
function rebuild(e: NonNullable<ParseReply['error']>): Error {
  if (!e.jobspec) return new Error(e.message);
  const err = new JobspecError('', { file: e.file, line: e.line, column: e.column, path: e.path, issues: e.issues, unsupported: e.unsupported });
  Object.defineProperty(err, 'message', { value: e.message, enumerable: false, writable: true, configurable: true });
  return err;
}

/** Parses job files in one worker thread; {@link JobspecParser.close} ends it and fails what is pending. */
export class JobspecParser {
  #worker: Worker | undefined;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (job: ApiJob) => void; reject: (e: Error) => void }>();
  #closed = false;

  /** A job file (HCL2 or JSON) → the canonical Nomad API job, as `parseJobFile` does in-process. */
  parse(text: string, opts: ParseJobFileOptions = {}): Promise<ApiJob> {
    if (this.#closed) return Promise.reject(new JobspecParserClosedError());
    if (text.length < INLINE_PARSE_BELOW) return parseJobFile(text, opts);
    const worker = this.#start();
    const id = this.#next++;
    return new Promise<ApiJob>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, text, opts } satisfies ParseRequest);
    });
  }

  /** Ends the worker; parses still pending fail with {@link JobspecParserClosedError}. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#failAll(new JobspecParserClosedError());
    const w = this.#worker;
    this.#worker = undefined;
    await w?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = newWorker();
    worker.on('message', (reply: ParseReply) => {
      const p = this.#pending.get(reply.id);
      if (!p) return;
      this.#pending.delete(reply.id);
      // An idle worker does not keep the host process alive.
      if (this.#pending.size === 0) worker.unref();
      if (reply.error) p.reject(rebuild(reply.error));
      else p.resolve(reply.job);
    });
    // A worker that dies (out of memory on a hostile file, say) fails what it held; the next parse starts another.
    const lost = (why: string) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error(`the jobspec parser stopped: ${why}`));
    };
    worker.on('error', (e) => lost(e.message));
    worker.on('exit', (code) => lost(`exit ${code}`));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #failAll(e: Error): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of all) p.reject(e);
  }
}
