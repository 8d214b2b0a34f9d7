/**
 * Archives that are not tar, presented as tar streams, so every artifact is unpacked by the one
 * escape-proof staging of `actors/allocdir/restore.ts`: a zip (read with yauzl, entries in
 * order, names and link targets passed on as the archive wrote them, for the staging to judge)
 * and a single file (a plain download, or a decompressed `.gz`).
 * @module
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { Header, Pax } from 'tar';
import yauzl from 'yauzl';
import { ArtifactDownloadError } from './errors.ts';

const BLOCK = 512;
/** Longest symlink target read from a zip entry (Linux's PATH_MAX). */
const MAX_LINK_TARGET = 4096;

type EntryHead = { path: string; type: 'File' | 'Directory' | 'SymbolicLink'; mode: number; size: number; linkpath?: string };

/** The header block(s) of one entry; a pax header first when the name does not fit ustar. */
function headerBlocks(e: EntryHead): Buffer {
  const fields = {
    path: e.path,
    mode: e.mode,
    size: e.size,
    type: e.type,
    mtime: new Date(0),
    uid: 0,
    gid: 0,
    ...(e.linkpath ? { linkpath: e.linkpath } : {}),
  };
  const block = Buffer.alloc(BLOCK);
  const needPax = new Header(fields).encode(block, 0);
  if (!needPax) return block;
  return Buffer.concat([new Pax(fields, false).encode(), block]);
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
const END = Buffer.alloc(BLOCK * 2);

/** A tar stream of one regular file named `name`, read from `file`. */
export async function singleFileTar(file: string, name: string, mode: number): Promise<Readable> {
  const { size } = await stat(file);
  async function* gen() {
    yield headerBlocks({ path: name, type: 'File', mode, size });
    for await (const c of createReadStream(file)) yield c as Buffer;
    yield padding(size);
    yield END;
  }
  return Readable.from(gen(), { objectMode: false });
}

/** A tar stream of a zip file's entries, in the zip's order. */
export async function zipAsTar(file: string): Promise<Readable> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    // decodeStrings false: names reach the staging as written (yauzl would refuse some itself).
    yauzl.open(file, { lazyEntries: true, autoClose: true, decodeStrings: false, validateEntrySizes: true }, (err, z) => (err ? reject(err) : resolve(z!))),
  ).catch((e: Error) => {
    throw new ArtifactDownloadError(`not a zip archive: ${e.message}`);
  });
  const next = () =>
    new Promise<yauzl.Entry | undefined>((resolve, reject) => {
      const onEntry = (e: yauzl.Entry) => done(() => resolve(e));
      const onEnd = () => done(() => resolve(undefined));
      const onError = (err: Error) => done(() => reject(new ArtifactDownloadError(`bad zip archive: ${err.message}`)));
      const done = (f: () => void) => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
        f();
      };
      zip.once('entry', onEntry).once('end', onEnd).once('error', onError);
      zip.readEntry();
    });
  const open = (e: yauzl.Entry) =>
    new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(e, (err, s) => (err ? reject(new ArtifactDownloadError(`bad zip entry: ${err.message}`)) : resolve(s!))),
    );

  async function* gen() {
    try {
      for (;;) {
        const e = await next();
        if (!e) break;
        const name = (e.fileName as unknown as Buffer).toString('utf8');
        const unixMode = (e.externalFileAttributes >>> 16) & 0xffff;
        const kind = unixMode & 0o170000;
        if (name.endsWith('/') || kind === 0o040000) {
          yield headerBlocks({ path: name, type: 'Directory', mode: unixMode & 0o7777 || 0o755, size: 0 });
          continue;
        }
        if (kind === 0o120000) {
          const parts: Buffer[] = [];
          let n = 0;
          for await (const c of await open(e)) {
            n += (c as Buffer).length;
            if (n > MAX_LINK_TARGET) throw new ArtifactDownloadError(`zip symlink ${JSON.stringify(name)} has a target over ${MAX_LINK_TARGET} bytes`);
            parts.push(c as Buffer);
          }
          yield headerBlocks({ path: name, type: 'SymbolicLink', mode: 0o777, size: 0, linkpath: Buffer.concat(parts).toString('utf8') });
          continue;
        }
        const size = e.uncompressedSize;
        yield headerBlocks({ path: name, type: 'File', mode: unixMode & 0o7777 || 0o644, size });
        for await (const c of await open(e)) yield c as Buffer;
        yield padding(size);
      }
      yield END;
    } finally {
      zip.close();
    }
  }
  return Readable.from(gen(), { objectMode: false });
}
