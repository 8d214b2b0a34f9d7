import { expect } from 'chai';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  isWithin,
  pathEscapesAllocDir,
  pathEscapesAllocViaRelative,
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
  });
});
