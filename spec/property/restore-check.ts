/**
 * The restore property, shared by the property spec and the regression spec of its shrunk
 * counterexamples: whatever the archive, restoreSnapshot either restores it or fails with a
 * BerthError; nothing outside changes, no staging dir is left, no setuid/setgid bit and (as
 * root) no root owner survives, every symlink that resolves stays inside, and a failure leaves
 * dest exactly as before.
 */
import { expect } from 'chai';
import { chown, mkdir, mkdtemp, readdir, readlink, realpath, rm, writeFile, lstat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Header, Pax } from 'tar';
import { AllocDir, restoreSnapshot } from '../../actors/allocdir/index.ts';
import { BerthError } from '../../model/errors.ts';
import { fingerprint } from '../actors/allocdir/tree.ts';

export type Kind = 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO';
export interface Entry {
  path: string;
  type: Kind;
  mode: number;
  uid: number;
  linkpath?: string;
  body?: string;
}

/** Tar bytes for `entries` (pax headers for long names), ended properly. */
export function archive(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.type === 'File' ? (e.body ?? '') : '');
    const data = {
      path: e.path,
      type: e.type,
      mode: e.mode,
      uid: e.uid,
      gid: e.uid,
      size: body.length,
      mtime: new Date(0),
      ...(e.linkpath !== undefined ? { linkpath: e.linkpath } : {}),
    };
    const h = new Header(data);
    if (h.encode()) parts.push(new Pax({ path: e.path, linkpath: e.linkpath, size: body.length, mtime: data.mtime }).encode());
    parts.push(h.block!);
    if (body.length) parts.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** Every symlink under `dir` (not followed). */
async function links(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isSymbolicLink()) out.push(r);
    else if (d.isDirectory()) out.push(...(await links(dir, r)));
  }
  return out;
}

async function everything(dir: string, rel = ''): Promise<Array<{ rel: string; mode: number; uid: number; link: boolean }>> {
  const out: Array<{ rel: string; mode: number; uid: number; link: boolean }> = [];
  for (const name of await readdir(path.join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const st = await lstat(path.join(dir, r));
    out.push({ rel: r, mode: st.mode & 0o7777, uid: st.uid, link: st.isSymbolicLink() });
    if (st.isDirectory()) out.push(...(await everything(dir, r)));
  }
  return out;
}

/**
 * Restores `entries` into a fresh, pre-populated alloc dir under `root` and asserts the
 * properties of the module doc; `outside` is a dir beside it that must never change. With
 * `owners` (root only: the caller is a root-only test) the pre-populated files belong to nobody
 * and no restored entry but `alloc/` may be owned by root.
 */
export async function checkArchive(root: string, outside: string, entries: Entry[], { owners = false } = {}): Promise<void> {
  const client = await mkdtemp(path.join(root, 'c'));
  const dest = new AllocDir(client, 'dest');
  await dest.build();
  await writeFile(path.join(dest.dataDir, 'keep'), 'before');
  await mkdir(path.join(dest.dir, 'web', 'local'), { recursive: true });
  if (owners) {
    await chown(path.join(dest.dataDir, 'keep'), 65534, 65534);
    await chown(path.join(dest.dir, 'web'), 65534, 65534);
    await chown(path.join(dest.dir, 'web', 'local'), 65534, 65534);
  }
  const before = await fingerprint(dest.dir);
  const outsideBefore = await fingerprint(outside);
  let err: unknown;
  try {
    await restoreSnapshot(Readable.from([archive(entries)]), dest, { prevAllocId: 'p' });
  } catch (e) {
    err = e;
  }
  try {
    expect(await fingerprint(outside), 'nothing outside changed').to.deep.equal(outsideBefore);
    expect(
      (await readdir(dest.dir)).filter((x) => x.startsWith('.restore-')),
      'staging removed',
    ).to.deep.equal([]);
    if (err) {
      expect(err, String(err)).to.be.instanceOf(BerthError);
      expect(await fingerprint(dest.dir), 'dest unchanged after a failure').to.deep.equal(before);
      return;
    }
    const base = await realpath(dest.dir);
    for (const e of await everything(dest.dir)) {
      if (!e.link) expect(e.mode & 0o6000, `${e.rel} keeps no setuid/setgid`).to.equal(0);
      if (owners && e.uid === 0) expect(['alloc', '.'], `${e.rel} owned by root`).to.include(e.rel);
    }
    for (const l of await links(dest.dir)) {
      let real: string | undefined;
      try {
        real = await realpath(path.join(dest.dir, l));
      } catch {
        continue; // dangling or a loop: the kernel gives nothing through it
      }
      const rel = path.relative(base, real);
      expect(rel.startsWith('..') || path.isAbsolute(rel), `${l} -> ${await readlink(path.join(dest.dir, l))} resolves to ${real}`).to.equal(false);
    }
  } finally {
    await dest.destroy();
    await rm(client, { recursive: true, force: true });
  }
}
