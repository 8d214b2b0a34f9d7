/**
 * Recordings: a client's viewer records as a JSON-lines file, for post-mortems on hosts nobody
 * can attach a browser to. Line 1 is a header; every other line is one record; a writer that
 * closes cleanly ends with an `end` line. A file cut short by a crash still reads (its torn last
 * line is skipped).
 *
 * ```
 * {"berth":"recording","version":1,"started":1764720000000}
 * {"k":"actor","t":1764720000001,"id":"client","name":"client","kind":"client"}
 * {"k":"bus","t":1764720000123,"type":"alloc.state","alloc":"…","from":"pending","to":"waiting-prev"}
 * {"k":"end","t":1764720009000,"records":5120,"dropped":0}
 * ```
 * @module
 */
import { closeSync, createWriteStream, openSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RecordingFormatError, InvalidViewerOptionsError } from './errors.ts';
import type { ViewerFeed } from './feed.ts';
import type { ViewerRecord } from './records.ts';
import { errorText } from '../../model/error-text.ts';

/** The first line of a recording. */
export interface RecordingHeader {
  berth: 'recording';
  version: 1;
  started: number;
}

/** A recording read back. */
export interface Recording {
  header: RecordingHeader;
  records: ViewerRecord[];
  /** Records the writer had to drop (its disk could not keep up), when it said so. */
  dropped: number;
  /** False when the file has no `end` line (the process died while recording). */
  complete: boolean;
}

/** A recording being written. */
export interface Recorder {
  readonly file: string;
  /** Records written (queued to the file) so far. */
  written(): number;
  /** Writes the end line and closes the file. Idempotent. */
  close(): Promise<void>;
}

/** Bytes queued for the disk beyond which records are dropped (and counted) rather than held. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
const KINDS = new Set(['actor', 'state', 'event', 'alloc', 'bus']);

/**
 * Throws what {@link startRecording} would for a path that cannot be a recording (not a string,
 * or its directory missing), without creating anything: `createClient` asks before it touches
 * the disk, so a bad `record` option leaves no data dir behind.
 * @throws InvalidViewerOptionsError
 */
export function checkRecordTarget(file: unknown): asserts file is string {
  if (typeof file !== 'string' || file === '') throw new InvalidViewerOptionsError('record: give the path of a file to write');
  const dir = dirname(resolve(file));
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (e) {
    throw new InvalidViewerOptionsError(`record: cannot open ${file}: ${errorText(e)}`, { cause: e });
  }
  if (!isDir) throw new InvalidViewerOptionsError(`record: cannot open ${file}: ${dir} is not a directory`);
}

/**
 * Starts writing `feed`'s records to `file` (created or truncated). Open errors throw at once.
 * @example
 * const rec = startRecording(feed, '/var/log/berth/inspect.jsonl', Date.now);
 * await rec.close();
 */
export function startRecording(feed: ViewerFeed, file: string, now: () => number): Recorder {
  checkRecordTarget(file);
  let fd: number;
  try {
    fd = openSync(file, 'w', 0o600);
  } catch (e) {
    throw new InvalidViewerOptionsError(`record: cannot open ${file}: ${errorText(e)}`, { cause: e });
  }
  const out = createWriteStream('', { fd, autoClose: true });
  let failed: Error | undefined;
  out.on('error', (e) => (failed = e));
  let written = 0;
  let dropped = 0;
  let batch: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!batch.length || failed) return;
    out.write(batch.join(''));
    batch = [];
  };
  const header: RecordingHeader = { berth: 'recording', version: 1, started: now() };
  batch.push(`${JSON.stringify(header)}\n`);
  const off = feed.subscribe((r) => {
    if (out.writableLength > MAX_PENDING_BYTES) {
      dropped++;
      return;
    }
    batch.push(`${JSON.stringify(r)}\n`);
    written++;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  let closing: Promise<void> | undefined;
  return {
    file,
    written: () => written,
    close() {
      closing ??= (async () => {
        off();
        flush();
        if (!failed) out.write(`${JSON.stringify({ k: 'end', t: now(), records: written, dropped })}\n`);
        await new Promise<void>((res) => {
          if (out.closed) return res();
          out.once('close', () => res());
          out.end();
        });
        if (!out.closed) closeSync(fd);
      })();
      return closing;
    },
  };
}

/** Reads a recording; throws {@link RecordingFormatError} for a file that is not one. */
export function readRecording(file: string): Recording {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new RecordingFormatError(file, 0, errorText(e));
  }
  const lines = text.split('\n');
  const torn = !text.endsWith('\n'); // the last line was being written when the writer died
  if (lines[lines.length - 1] === '') lines.pop();
  const parse = (line: string, n: number): Record<string, unknown> | undefined => {
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // reported below
    }
    if (torn && n === lines.length) return undefined;
    throw new RecordingFormatError(file, n, 'a line is not a JSON object');
  };
  const header = lines.length ? parse(lines[0]!, 1) : undefined;
  if (!header || header.berth !== 'recording') throw new RecordingFormatError(file, 1, 'no berth recording header');
  if (header.version !== 1) throw new RecordingFormatError(file, 1, `unsupported version ${JSON.stringify(header.version)}`);
  const records: ViewerRecord[] = [];
  let complete = false;
  let dropped = 0;
  for (let i = 1; i < lines.length; i++) {
    const r = parse(lines[i]!, i + 1);
    if (!r) break;
    if (r.k === 'end') {
      complete = true;
      dropped = typeof r.dropped === 'number' ? r.dropped : 0;
      continue;
    }
    if (typeof r.k !== 'string' || !KINDS.has(r.k) || typeof r.t !== 'number')
      throw new RecordingFormatError(file, i + 1, `unknown record ${JSON.stringify(r.k)}`);
    records.push(r as unknown as ViewerRecord);
  }
  return { header: header as unknown as RecordingHeader, records, dropped, complete };
}
