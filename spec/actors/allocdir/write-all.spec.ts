import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { SnapshotStreamError } from '../../../actors/allocdir/errors.ts';
import { writeAll, type VectorWriter } from '../../../actors/allocdir/write-all.ts';
import { tempDirs } from './helpers.ts';

/**
 * A real file whose every writev writes at most `cap` bytes, as the kernel may (a short write):
 * deterministic, where a filling disk is not.
 */
class ShortWrites implements VectorWriter {
  readonly asked: number[][] = [];
  constructor(
    private readonly fh: FileHandle,
    private readonly cap: number,
  ) {}
  async writev(buffers: readonly Buffer[]): Promise<{ bytesWritten: number }> {
    this.asked.push(buffers.map((b) => b.length));
    let room = this.cap;
    const take: Buffer[] = [];
    for (const b of buffers) {
      if (room === 0) break;
      const piece = b.subarray(0, room);
      take.push(piece);
      room -= piece.length;
    }
    return this.fh.writev(take);
  }
}

describe('allocdir: writeAll (the restore write loop)', () => {
  const dirs = tempDirs();
  after(() => dirs.cleanup());

  async function written(parts: Buffer[], cap: number): Promise<{ bytes: Buffer; asked: number[][] }> {
    const file = path.join(await dirs.make(), 'f');
    const fh = await open(file, 'w');
    const w = new ShortWrites(fh, cap);
    try {
      await writeAll(w, parts);
    } finally {
      await fh.close();
    }
    return { bytes: await readFile(file), asked: w.asked };
  }

  it('writes every byte once, in order, when each write is short (mid-buffer and across buffers)', async () => {
    const parts = [Buffer.from('hello '), Buffer.from('wide '), Buffer.from('world'), randomBytes(10_000)];
    const { bytes, asked } = await written(parts, 7);
    expect(bytes.equals(Buffer.concat(parts))).to.equal(true);
    expect(asked.length, 'one call per 7 bytes').to.equal(Math.ceil(10_016 / 7));
    // After the first short write (7 of 'hello ' + 'wide '), the rest starts mid-buffer.
    expect(asked[1]).to.deep.equal([4, 5, 10_000]);
  });

  it('resumes at a buffer boundary when a write ends exactly on one', async () => {
    const parts = [Buffer.from('abc'), Buffer.from('defg'), Buffer.from('h')];
    const { bytes, asked } = await written(parts, 3);
    expect(bytes.toString()).to.equal('abcdefgh');
    expect(asked[0]).to.deep.equal([3, 4, 1]);
    expect(asked[1], 'the written buffer is dropped whole').to.deep.equal([4, 1]);
  });

  it('writes in one call when nothing is short', async () => {
    const parts = [Buffer.from('one'), Buffer.from('two')];
    const { bytes, asked } = await written(parts, 1 << 20);
    expect(bytes.toString()).to.equal('onetwo');
    expect(asked).to.deep.equal([[3, 3]]);
  });

  it('asks for no write at all when there is nothing to write', async () => {
    const { bytes, asked } = await written([], 7);
    expect(bytes.length).to.equal(0);
    expect(asked).to.deep.equal([]);
  });

  it('fails (rather than loop) when a write writes nothing', async () => {
    let calls = 0;
    const stuck: VectorWriter = {
      async writev() {
        if (++calls > 1) throw new Error('asked again after a write of nothing');
        return { bytesWritten: 0 };
      },
    };
    const err = await writeAll(stuck, [Buffer.from('x')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SnapshotStreamError);
    expect((err as Error).message).to.equal('a write wrote nothing (no space left on device?)');
    expect(calls).to.equal(1);
  });
});
