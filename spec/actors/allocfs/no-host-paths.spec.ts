/**
 * An alloc-fs error reaches API clients as its message (`agent/http/routes-client.ts` answers 400
 * with it): it must name the path as the caller gave it, never the host path of the data dir.
 */
import { expect } from 'chai';
import path from 'node:path';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import { AllocFSError, createAllocFS, type AllocFS } from '../../../actors/allocfs/index.ts';
import { tempDirs } from '../allocdir/helpers.ts';

describe('alloc fs errors do not show host paths', () => {
  const tmp = tempDirs();
  let ad: AllocDir;
  let afs: AllocFS;
  let root: string;
  beforeEach(async () => {
    root = await tmp.make('berth-leak-');
    ad = new AllocDir(root, '8e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b');
    await ad.build();
    await ad.newTaskDir('web').build();
    afs = createAllocFS(ad);
  });
  afterEach(() => ad.destroy());
  after(() => tmp.cleanup());

  it('a name too long (ENAMETOOLONG) names the given path and errno, not the data dir', async () => {
    const given = `alloc/data/${'x'.repeat(300)}`;
    const drain = async () => {
      for await (const _ of afs.stream(given)) void _;
    };
    for (const [name, call] of [
      ['stat', () => afs.stat(given)],
      ['readAt', () => afs.readAt(given, 0, 1)],
      ['list', () => afs.list(given)],
      ['stream', drain],
    ] as const) {
      const err = (await (call as () => Promise<unknown>)().catch((e: unknown) => e)) as AllocFSError;
      expect(err, name).to.be.instanceOf(AllocFSError);
      expect(err.code, name).to.equal('ENAMETOOLONG');
      expect(err.message, name).to.include(given);
      expect(err.message, `${name}: ${err.message.slice(0, 120)}`).to.not.include(root);
      expect(err.message, name).to.not.include(path.dirname(root) + '/');
    }
  });
});
