/**
 * Property: whatever archive a peer sends (entries, links, orders, modes, owners), restoreSnapshot
 * either restores it or fails with a BerthError, and in both cases nothing outside the
 * destination changes, no staging dir is left, no setuid/setgid bit and (as root) no archive
 * owner survives, every symlink stays inside, and a failure leaves dest exactly as before.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { chown, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { lstat, readlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Header, Pax } from 'tar';
import { AllocDir, restoreSnapshot } from '../../actors/allocdir/index.ts';
import { BerthError } from '../../model/errors.ts';
import { fingerprint } from '../actors/allocdir/tree.ts';
import { propertyRuns, propertyTimeout } from './settings.ts';

type Kind = 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO';
interface Entry {
  path: string;
  type: Kind;
  mode: number;
  uid: number;
  linkpath?: string;
  body?: string;
}

const isRoot = process.geteuid?.() === 0;

/** Tar bytes for `entries` (pax headers for long names), ended properly. */
export function archive(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.type === 'File' ? (e.body ?? '') : '');
    const data = { path: e.path, type: e.type, mode: e.mode, uid: e.uid, gid: e.uid, size: body.length, mtime: new Date(0), ...(e.linkpath !== undefined ? { linkpath: e.linkpath } : {}) };
    const h = new Header(data);
    if (h.encode()) parts.push(new Pax({ path: e.path, linkpath: e.linkpath, size: body.length, mtime: data.mtime }).encode());
    parts.push(h.block!);
    if (body.length) parts.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

// Names from a small alphabet, so that paths collide, nest under links and climb with `..`.
const component = fc.constantFrom('alloc', 'data', 'web', 'local', 'a', 'b', '.', '..', 'logs', 'x'.repeat(120));
const relPath = fc.array(component, { minLength: 1, maxLength: 6 }).map((c) => c.join('/'));
const rooted = fc.tuple(fc.constantFrom('alloc/data', 'web/local', 'alloc/data', 'api/local'), fc.array(component, { maxLength: 4 })).map(([r, c]) => [r, ...c].join('/'));
const entryPath = fc.oneof({ weight: 4, arbitrary: rooted }, { weight: 1, arbitrary: relPath }, { weight: 1, arbitrary: fc.constantFrom('/etc/x', '../x', 'alloc', 'alloc/logs', 'NOMAD-p-ERROR.log') });
const target = fc.oneof(
  fc.array(component, { minLength: 1, maxLength: 8 }).map((c) => c.join('/')),
  fc.constantFrom('.', '..', '/etc', '/tmp', 'a/../../../..', ''),
);
const entry: fc.Arbitrary<Entry> = fc.record({
  path: entryPath,
  type: fc.constantFrom<Kind>('File', 'File', 'Directory', 'SymbolicLink', 'SymbolicLink', 'Link', 'FIFO'),
  mode: fc.integer({ min: 0, max: 0o7777 }),
  uid: fc.constantFrom(0, 1000, 65534),
  linkpath: target,
  body: fc.string({ maxLength: 20 }),
}).map((e) => (e.type === 'SymbolicLink' || e.type === 'Link' ? e : { ...e, linkpath: undefined }) as Entry);

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

describe('property: restoreSnapshot of random archives (#10)', function () {
  this.timeout(propertyTimeout(60_000));
  let root: string;
  let outside: string;
  let n = 0;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berth-prop-restore-'));
    outside = path.join(root, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'victim'), 'original');
  });
  after(() => rm(root, { recursive: true, force: true }));

  async function check(entries: Entry[]): Promise<void> {
    const client = path.join(root, `c${++n}`);
    await mkdir(client);
    const dest = new AllocDir(client, 'dest');
    await dest.build();
    await writeFile(path.join(dest.dataDir, 'keep'), 'before');
    await mkdir(path.join(dest.dir, 'web', 'local'), { recursive: true });
    if (isRoot) {
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
      expect((await readdir(dest.dir)).filter((x) => x.startsWith('.restore-')), 'staging removed').to.deep.equal([]);
      if (err) {
        expect(err, String(err)).to.be.instanceOf(BerthError);
        expect(await fingerprint(dest.dir), 'dest unchanged after a failure').to.deep.equal(before);
        return;
      }
      const base = await realpath(dest.dir);
      for (const e of await everything(dest.dir)) {
        if (!e.link) expect(e.mode & 0o6000, `${e.rel} keeps no setuid/setgid`).to.equal(0);
        if (isRoot && e.uid === 0) expect(['alloc', '.'], `${e.rel} owned by root`).to.include(e.rel);
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

  it('never escapes, never keeps privileges, and fails without a trace', async () => {
    await fc.assert(fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 12 }), check), propertyRuns(50));
  });
});
