/**
 * Issue #36: an artifact's destination as Nomad's client resolves it. `../alloc/x` is the
 * alloc's shared dir, an absolute `/local/x` is joined under the task dir, and only a path that
 * leaves the alloc dir (`../../x`) is refused, writing nothing.
 */
import { expect } from 'chai';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fetchArtifact, type FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { RwLock } from '../../../actors/allocdir/lock.ts';
import { tempDirs } from '../allocdir/helpers.ts';
import { refusedLeavingTree } from './refused.ts';

describe('artifacts: the destination, as Nomad resolves it', () => {
  const tmp = tempDirs();
  let root: string;
  let allocDir: string;
  let taskDir: string;
  let src: string;
  afterEach(() => tmp.cleanup());

  beforeEach(async () => {
    root = await tmp.make('berth-artifact-dest-');
    allocDir = path.join(root, 'alloc-1');
    taskDir = path.join(allocDir, 'web');
    await mkdir(path.join(taskDir, 'local'), { recursive: true });
    await mkdir(path.join(allocDir, 'alloc', 'data'), { recursive: true });
    src = path.join(root, 'src');
    await mkdir(src);
    await writeFile(path.join(src, 'app.conf'), 'port = 8080\n');
  });

  const ctx = (): FetchArtifactContext => ({
    dest: { dir: taskDir, allocId: 'a1', built: true, lock: new RwLock() },
    env: {},
    maxBytes: 1024 * 1024,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
  });

  it("the node's ${attr.*} and ${meta.*} resolve in source and destination, before the task's env (Nomad's ReplaceEnv)", async () => {
    await writeFile(path.join(src, 'tool-linux_arm64'), 'binary\n');
    const node = { 'attr.kernel.name': 'linux', 'attr.cpu.arch': 'arm64', 'meta.rack': 'r7' };
    const c = { ...ctx(), node, env: { 'attr.cpu.arch': 'not-this' } };
    await fetchArtifact({ source: path.join(src, 'tool-${attr.kernel.name}_${attr.cpu.arch}'), destination: 'local/${meta.rack}' }, c);
    expect(await readFile(path.join(taskDir, 'local', 'r7', 'tool-linux_arm64'), 'utf8')).to.equal('binary\n');
  });

  it('"../alloc/conf" goes into the alloc\'s shared dir', async () => {
    await fetchArtifact({ source: path.join(src, 'app.conf'), destination: '../alloc/conf' }, ctx());
    expect(await readFile(path.join(allocDir, 'alloc', 'conf', 'app.conf'), 'utf8')).to.equal('port = 8080\n');
  });

  it('"../alloc/app.conf" in mode file is that file of the shared dir', async () => {
    await fetchArtifact({ source: path.join(src, 'app.conf'), destination: '../alloc/app.conf', mode: 'file' }, ctx());
    expect(await readFile(path.join(allocDir, 'alloc', 'app.conf'), 'utf8')).to.equal('port = 8080\n');
  });

  it('"app.conf" in mode file is a file of the task dir itself (not a dir of that name)', async () => {
    await fetchArtifact({ source: path.join(src, 'app.conf'), destination: 'app.conf', mode: 'file' }, ctx());
    expect(await readFile(path.join(taskDir, 'app.conf'), 'utf8')).to.equal('port = 8080\n');
  });

  it('an absolute "/local/etc" is the task dir\'s local/etc', async () => {
    await fetchArtifact({ source: path.join(src, 'app.conf'), destination: '/local/etc' }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'etc', 'app.conf'), 'utf8')).to.equal('port = 8080\n');
  });

  it('"../../x" leaves the alloc dir: refused by name, nothing written', async () => {
    const e = await refusedLeavingTree(root, { source: path.join(src, 'app.conf'), destination: '../../x' }, ctx());
    expect(e.message).to.equal('artifact destination path escapes alloc directory');
  });
});
