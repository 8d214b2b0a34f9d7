import { expect } from 'chai';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  exists,
  isNotFound,
  isWithin,
  MAX_SYMLINK_HOPS,
  resolveInTree,
  pathEscapesAllocDir,
  pathEscapesAllocViaRelative,
  pathEscapesBaseViaSymlink,
  pathEscapesSandbox,
  symlinkEscapes,
  symlinkInParentChain,
} from '../../../actors/allocdir/index.ts';
import { tempDirs } from './helpers.ts';

describe('allocdir escape checks', () => {
  const tmp = tempDirs();
  after(() => tmp.cleanup());

  it('pathEscapesAllocViaRelative is lexical and relative to the alloc root', () => {
    expect(pathEscapesAllocViaRelative('', '../x')).to.equal(true);
    expect(pathEscapesAllocViaRelative('', 'a/../../x')).to.equal(true);
    expect(pathEscapesAllocViaRelative('', '/etc/passwd')).to.equal(false); // joined, not honoured
    expect(pathEscapesAllocViaRelative('', 'web/local/x')).to.equal(false);
    expect(pathEscapesAllocViaRelative('foo/bar', '../../')).to.equal(false);
    expect(pathEscapesAllocViaRelative('foo/bar', '../../../')).to.equal(true);
  });

  it('pathEscapesAllocDir resolves symlinks, and a missing path does not escape', async () => {
    const base = await tmp.make();
    await mkdir(path.join(base, 'in'));
    await symlink('/etc', path.join(base, 'out'));
    await symlink('in', path.join(base, 'ok'));
    expect(await pathEscapesAllocDir(base, '', 'out')).to.equal(true);
    expect(await pathEscapesAllocDir(base, '', 'ok')).to.equal(false);
    expect(await pathEscapesAllocDir(base, '', 'missing/file')).to.equal(false);
    expect(await pathEscapesAllocDir(base, '', '../x')).to.equal(true);
    let err: unknown;
    await pathEscapesAllocDir('relative', '', 'x').catch((e) => (err = e));
    expect((err as Error).message).to.equal('alloc dir must be absolute');
  });

  it('pathEscapesSandbox, isWithin and symlinkEscapes', () => {
    expect(pathEscapesSandbox('/a/b', '/a/b/c')).to.equal(false);
    expect(pathEscapesSandbox('/a/b', '/a/c')).to.equal(true);
    expect(isWithin('/a/b1', '/a/b10')).to.equal(false); // component-wise, unlike Nomad's prefix check
    expect(isWithin('/a/b', '/a/b/c/../d')).to.equal(true);
    expect(symlinkEscapes('/a', '/a/x/l', '/etc')).to.equal(true); // absolute: always refused
    expect(symlinkEscapes('/a', '/a/x/l', '../../b')).to.equal(true);
    expect(symlinkEscapes('/a', '/a/x/l', '../y')).to.equal(false);
    expect(isWithin('/a/b', '/a/b')).to.equal(true); // the base itself
    expect(isWithin('/a/b', '/a/b/..')).to.equal(false); // exactly '..'
    expect(isWithin('/a/b', '/a/b/..x')).to.equal(true); // a name starting with '..' is a child
    expect(symlinkEscapes('/a', '/a/l', '')).to.equal(true); // an empty target is refused
    expect(symlinkEscapes('/a', '/a/l', 'x')).to.equal(false);
  });

  it('pathEscapesAllocDir throws what is not "not found" (a symlink loop)', async () => {
    const base = await tmp.make();
    await symlink('l2', path.join(base, 'l1'));
    await symlink('l1', path.join(base, 'l2'));
    let err: unknown;
    await pathEscapesAllocDir(base, '', 'l1').catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException).code).to.equal('ELOOP');
  });

  it('symlinkInParentChain finds a link among the parents only', async () => {
    const base = await tmp.make();
    await mkdir(path.join(base, 'd'));
    await symlink('/tmp', path.join(base, 'd', 'l'));
    await writeFile(path.join(base, 'd', 'f'), '');
    expect(await symlinkInParentChain(base, 'd/l/x')).to.equal(path.join(base, 'd', 'l'));
    expect(await symlinkInParentChain(base, 'd/l')).to.equal(undefined); // the leaf itself is not a parent
    expect(await symlinkInParentChain(base, 'd/f')).to.equal(undefined);
    expect(await symlinkInParentChain(base, 'nope/x/y')).to.equal(undefined);
    expect(await symlinkInParentChain(base, './d/./l/x')).to.equal(path.join(base, 'd', 'l')); // normalized first
    // A trailing or doubled slash adds no component: the leaf stays the leaf, a leading one is the base.
    expect(await symlinkInParentChain(base, 'd/l/')).to.equal(undefined);
    expect(await symlinkInParentChain(base, 'd//l//')).to.equal(undefined);
    expect(await symlinkInParentChain(base, '/d/l/x')).to.equal(path.join(base, 'd', 'l'));
  });

  describe('resolveInTree judges what the tree holds, as the kernel will walk it', () => {
    let base: string;
    before(async () => {
      base = await realpath(await tmp.make());
      await mkdir(path.join(base, 'd', 'e'), { recursive: true });
      await writeFile(path.join(base, 'd', 'file'), '');
      await symlink('.', path.join(base, 'b')); // b -> .
      await symlink('b/b/../../x', path.join(base, 'a')); // through b twice, then up twice: outside
      await symlink('e', path.join(base, 'd', 'toE')); // relative, inside
      await symlink('../../outside', path.join(base, 'd', 'up')); // relative, leaves base
      await symlink(path.join(base, 'd', 'e'), path.join(base, 'absIn')); // absolute, inside base
      await symlink('/etc', path.join(base, 'absOut')); // absolute, elsewhere
      await symlink(`${base}x/y`, path.join(base, 'absSibling')); // a sibling sharing base's prefix
      await symlink('loop2', path.join(base, 'loop1'));
      await symlink('loop1', path.join(base, 'loop2'));
      await symlink('nothing/here', path.join(base, 'dangling')); // missing: judged by its text
      await symlink('../../../x', path.join(base, 'danglingOut'));
    });

    const cases: Array<[string, 'inside' | 'outside' | 'loop']> = [
      ['d/e/x', 'inside'],
      ['', 'inside'],
      ['./d/./e', 'inside'],
      ['d/../d/e', 'inside'],
      ['..', 'outside'],
      ['d/../..', 'outside'],
      ['a', 'outside'],
      ['d/toE/new', 'inside'],
      ['d/up', 'outside'],
      ['absIn/new', 'inside'],
      ['absOut', 'outside'],
      ['absSibling', 'outside'],
      ['loop1', 'loop'],
      ['dangling/more', 'inside'],
      ['danglingOut', 'outside'],
      ['missing/x/../../..', 'outside'], // lexical once missing, still counted
      ['missing/x/../..', 'inside'],
      ['d/file/../../..', 'outside'], // a file used as a dir: the rest judged by text
      ['d/file/x', 'inside'],
      // Back out of the missing part, the walk is real again: the link there is followed.
      ['missing/../d/up', 'outside'],
      ['missing/x/../../a', 'outside'],
      ['d/file/../up', 'outside'],
      ['missing/../d/toE/new', 'inside'],
    ];
    for (const [rel, want] of cases) {
      it(`${JSON.stringify(rel)} is ${want}`, async () => {
        expect(await resolveInTree(base, rel)).to.equal(want);
      });
    }

    it(`a chain of ${MAX_SYMLINK_HOPS} links resolves; one more is a loop`, async () => {
      const chain = await realpath(await tmp.make());
      await mkdir(path.join(chain, 'end'));
      for (let i = 0; i <= MAX_SYMLINK_HOPS; i++) await symlink(i === 0 ? 'end' : `l${i - 1}`, path.join(chain, `l${i}`));
      expect(await resolveInTree(chain, `l${MAX_SYMLINK_HOPS - 1}`)).to.equal('inside');
      expect(await resolveInTree(chain, `l${MAX_SYMLINK_HOPS}`)).to.equal('loop');
    });
  });

  it('exists sees a dangling link; isNotFound is ENOENT and ENOTDIR only', async () => {
    const base = await tmp.make();
    await symlink('nowhere', path.join(base, 'dangling'));
    await writeFile(path.join(base, 'f'), '');
    expect(await exists(path.join(base, 'dangling'))).to.equal(true);
    expect(await exists(path.join(base, 'nope'))).to.equal(false);
    expect(await exists(path.join(base, 'f', 'under-a-file'))).to.equal(false);
    expect(isNotFound({ code: 'ENOENT' })).to.equal(true);
    expect(isNotFound({ code: 'ENOTDIR' })).to.equal(true);
    expect(isNotFound({ code: 'EACCES' })).to.equal(false);
    expect(isNotFound(undefined)).to.equal(false);
  });

  it("Nomad's quirks are kept where berth mirrors Nomad: a bare '..' prefix, case-blind and separator-blind symlink checks, the prefix joined", async () => {
    expect(pathEscapesAllocViaRelative('', '..foo')).to.equal(true); // a string prefix, as Nomad
    expect(pathEscapesAllocViaRelative('a', '..')).to.equal(false);
    expect(pathEscapesAllocViaRelative('a', '../..')).to.equal(true);
    const base = await realpath(await tmp.make());
    await mkdir(path.join(base, 'in'));
    await mkdir(path.join(base, 'b10'));
    await symlink('/etc', path.join(base, 'in', 'out'));
    await writeFile(path.join(base, 'in', 'f'), '');
    expect(await pathEscapesBaseViaSymlink(base.toUpperCase(), path.join(base, 'in'))).to.equal(false); // case-insensitive
    expect(await pathEscapesBaseViaSymlink(path.join(base, 'b1'), path.join(base, 'b10'))).to.equal(false); // no separator check
    expect(await pathEscapesBaseViaSymlink(path.join(base, 'in'), path.join(base, 'b10'))).to.equal(true);
    expect(await pathEscapesBaseViaSymlink(base, path.join(base, 'in', 'out'))).to.equal(true);
    // The prefix is part of the path checked: in/out leads out, out alone does not exist.
    expect(await pathEscapesAllocDir(base, 'in', 'out')).to.equal(true);
    expect(await pathEscapesAllocDir(base, '', 'out')).to.equal(false);
    expect(await pathEscapesAllocDir(base, 'in', 'f/under-a-file')).to.equal(false); // ENOTDIR: not found
    expect(await pathEscapesAllocDir(base, 'in', '../../x')).to.equal(true); // lexical, relative to the alloc root
    expect(pathEscapesSandbox('/a/b', '/a/b')).to.equal(false);
    expect(pathEscapesSandbox('/a/b', '/a/b/../..x')).to.equal(true);
    expect(symlinkEscapes('/a', '/a/x/l', '..')).to.equal(false); // /a itself
    expect(symlinkEscapes('/a', '/a/l', '..')).to.equal(true);
  });

  describe('edge cases of the walk (mutation testing)', () => {
    it('"." and empty components never stand in for a real one that ".." must climb out of', async () => {
      const base = await realpath(await tmp.make());
      await mkdir(path.join(base, 'a'));
      expect(await resolveInTree(base, './..')).to.equal('outside');
      expect(await resolveInTree(base, 'a//../..')).to.equal('outside');
      expect(await resolveInTree(base, 'a/./../..')).to.equal('outside');
      expect(await resolveInTree(base, 'a//./..')).to.equal('inside');
    });

    it('a link below a real directory is followed (only a missing component or a file ends the real walk)', async () => {
      const base = await realpath(await tmp.make());
      await mkdir(path.join(base, 'd', 'e'), { recursive: true });
      await symlink('../../..', path.join(base, 'd', 'e', 'up'));
      await symlink('..', path.join(base, 'd', 'in'));
      await writeFile(path.join(base, 'd', 'f'), '');
      expect(await resolveInTree(base, 'd/e/up')).to.equal('outside');
      expect(await resolveInTree(base, 'd/e/up/x')).to.equal('outside');
      expect(await resolveInTree(base, 'd/in/d/e/up')).to.equal('outside');
      expect(await resolveInTree(base, 'd/in/d/in')).to.equal('inside');
      // Below a file the rest is judged by its text: f/../e/up is e/up once f is a dir.
      expect(await resolveInTree(base, 'd/f/x/../../e/up')).to.equal('outside');
      expect(await resolveInTree(base, 'd/f/x/..')).to.equal('inside');
    });

    it('an absolute link inside the tree is followed from the tree, not from /', async () => {
      const base = await realpath(await tmp.make());
      await symlink(`${base}/x/../../..`, path.join(base, 'abs'));
      expect(await resolveInTree(base, 'abs')).to.equal('outside');
      await symlink(`${base}/x/..`, path.join(base, 'abs-in'));
      expect(await resolveInTree(base, 'abs-in')).to.equal('inside');
    });

    it('an error other than "not found" is thrown, never judged (a 300-byte name: ENAMETOOLONG)', async () => {
      const base = await realpath(await tmp.make());
      const long = 'x'.repeat(300);
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'resolved',
          (e: NodeJS.ErrnoException) => e.code,
        );
      expect(await code(resolveInTree(base, `${long}/..`))).to.equal('ENAMETOOLONG');
      expect(await code(symlinkInParentChain(base, `${long}/f`))).to.equal('ENAMETOOLONG');
      expect(await code(exists(path.join(base, long)))).to.equal('ENAMETOOLONG');
    });
  });
});
