import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileRotator } from '../../../actors/drivers/logs/rotator.mjs';

describe('FileRotator', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-rot-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const read = (i: number) => fs.readFileSync(path.join(dir, `t.stdout.${i}`), 'utf8');

  it('splits writes at the size limit and keeps the newest maxFiles', async () => {
    const r = new FileRotator({ dir, baseName: 't.stdout', maxFiles: 2, fileSize: 4 });
    r.open();
    await r.write(Buffer.from('abcdefghij'));
    await r.close(); // waits for the purge of the older files
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['t.stdout.1', 't.stdout.2']);
    expect(read(1)).to.equal('efgh');
    expect(read(2)).to.equal('ij');
  });

  it('continues the newest file after a restart, and starts a new one when it is full', async () => {
    const r = new FileRotator({ dir, baseName: 't.stdout', maxFiles: 5, fileSize: 4 });
    r.open();
    await r.write(Buffer.from('ab'));
    await r.close();
    const r2 = new FileRotator({ dir, baseName: 't.stdout', maxFiles: 5, fileSize: 4 });
    r2.open();
    await r2.write(Buffer.from('cd'));
    await r2.close();
    expect(read(0)).to.equal('abcd');
    const r3 = new FileRotator({ dir, baseName: 't.stdout', maxFiles: 5, fileSize: 4 });
    r3.open();
    expect(r3.index).to.equal(1);
    await r3.write(Buffer.from('e'));
    await r3.close();
    expect(read(1)).to.equal('e');
  });
});
