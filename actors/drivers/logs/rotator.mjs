// @ts-check
/**
 * Rotating log files, as Nomad's logmon writes them: `<dir>/<base>.0`, `<base>.1`, ...
 * Each file holds at most `fileSize` bytes (a write is split at the boundary); only the
 * `maxFiles` newest files are kept. Opening continues the newest existing file, so a restarted
 * task keeps appending where the last run stopped. Plain JavaScript: the supervisor loads it.
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';

/**
 * @param {number} fd
 * @param {Buffer} buf
 * @param {number} off
 * @param {number} len
 * @returns {Promise<number>}
 */
function writeFd(fd, buf, off, len) {
  return new Promise((resolve, reject) => {
    fs.write(fd, buf, off, len, null, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/** @param {number} fd @returns {Promise<void>} */
function closeFd(fd) {
  return new Promise((resolve) => fs.close(fd, () => resolve()));
}

export class FileRotator {
  /**
   * @param {{ dir: string, baseName: string, maxFiles: number, fileSize: number,
   *   onRotate?: (index: number) => void }} opts
   */
  constructor(opts) {
    this.dir = opts.dir;
    this.baseName = opts.baseName;
    this.maxFiles = Math.max(1, Math.floor(opts.maxFiles));
    this.fileSize = Math.max(1, Math.floor(opts.fileSize));
    this.onRotate = opts.onRotate;
    /** Index of the file being written. */
    this.index = 0;
    /** Bytes in the current file. */
    this.size = 0;
    /** @type {number | undefined} */
    this.fd = undefined;
    /** @type {Set<Promise<void>>} removals of old files still in flight */
    this.removals = new Set();
    /** Lowest index that may still exist on disk (purge starts there). */
    this.oldest = 0;
  }

  /** Indices of this base's files in `dir`, ascending. */
  existing() {
    const prefix = `${this.baseName}.`;
    /** @type {number[]} */
    const out = [];
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      if (/^\d+$/.test(rest)) out.push(Number(rest));
    }
    return out.sort((a, b) => a - b);
  }

  /** @param {number} i */
  file(i) {
    return path.join(this.dir, `${this.baseName}.${i}`);
  }

  /** Opens the newest file (or a new one when it is full). Synchronous: runs once at start. */
  open() {
    fs.mkdirSync(this.dir, { recursive: true });
    const found = this.existing();
    this.oldest = found[0] ?? 0;
    this.index = found.length ? found[found.length - 1] : 0;
    let size = 0;
    try {
      size = fs.statSync(this.file(this.index)).size;
    } catch {}
    if (size >= this.fileSize) {
      this.index += 1;
      size = 0;
    }
    this.fd = fs.openSync(this.file(this.index), 'a', 0o644);
    this.size = size;
    this.purge();
  }

  /** Deletes every file older than the `maxFiles` newest. */
  purge() {
    const keepFrom = this.index - this.maxFiles + 1;
    for (let i = this.oldest; i < keepFrom; i++) {
      // Tracked so close() can wait: once the task's exit is reported, only maxFiles remain.
      const p = fs.promises.rm(this.file(i), { force: true }).catch(() => {});
      this.removals.add(p);
      void p.then(() => this.removals.delete(p));
    }
    this.oldest = Math.max(this.oldest, keepFrom);
  }

  async rotate() {
    if (this.fd !== undefined) await closeFd(this.fd);
    this.index += 1;
    this.size = 0;
    this.fd = fs.openSync(this.file(this.index), 'w', 0o644);
    this.purge();
    this.onRotate?.(this.index);
  }

  /**
   * Appends `buf`, splitting it across files at the size limit.
   * @param {Buffer} buf
   */
  async write(buf) {
    if (this.fd === undefined) throw new Error('rotator is not open');
    let off = 0;
    while (off < buf.length) {
      if (this.size >= this.fileSize) await this.rotate();
      const len = Math.min(buf.length - off, this.fileSize - this.size);
      const n = await writeFd(/** @type {number} */ (this.fd), buf, off, len);
      off += n;
      this.size += n;
    }
  }

  async close() {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) await closeFd(fd);
    await Promise.all([...this.removals]);
  }
}

/**
 * A Writable over a {@link FileRotator}. Piping a task's stdout into it gives backpressure:
 * the pipe is paused while a file write is pending, so a flooding task cannot grow memory.
 * @param {FileRotator} rotator
 * @returns {Writable}
 */
export function rotatingStream(rotator) {
  return new Writable({
    highWaterMark: 64 * 1024,
    write(chunk, _enc, cb) {
      rotator.write(chunk).then(() => cb(), cb);
    },
    final(cb) {
      rotator.close().then(() => cb(), cb);
    },
    destroy(err, cb) {
      rotator.close().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
}
