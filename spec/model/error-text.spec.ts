import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errorText, errorTextWithoutPath } from '../../model/error-text.ts';

/** A real errno error from the kernel, as alloc-fs meets them. */
async function realErrno(): Promise<NodeJS.ErrnoException> {
  const missing = path.join(os.tmpdir(), `berth-no-such-${process.pid}`, 'file');
  return fsp.readFile(missing).then(
    () => expect.fail('read a file that does not exist'),
    (err: NodeJS.ErrnoException) => err,
  );
}

describe('model: errorText', () => {
  it('is an Error message, and anything else thrown as a string', () => {
    expect(errorText(new TypeError('bad'))).to.equal('bad');
    expect(errorText('plain')).to.equal('plain');
    expect(errorText(42)).to.equal('42');
    expect(errorText(undefined)).to.equal('undefined');
  });
});

describe('model: errorTextWithoutPath', () => {
  it("drops a real errno error's path tail and keeps its code and text", async () => {
    const err = await realErrno();
    expect(err.message).to.include(os.tmpdir()); // what would leak
    expect(errorTextWithoutPath(err)).to.equal('ENOENT: no such file or directory');
  });

  it('keeps a message whose syscall is not in it whole (nothing to cut, no character lost)', () => {
    const err = Object.assign(new Error('EIO: i/o error'), { syscall: 'read' });
    expect(errorTextWithoutPath(err)).to.equal('EIO: i/o error');
  });

  it('keeps the message of an error without a syscall whole, even if it reads like a tail', () => {
    expect(errorTextWithoutPath(new Error('too large, open it elsewhere'))).to.equal('too large, open it elsewhere');
  });

  it('cuts at the very start when the message is all tail', () => {
    const err = Object.assign(new Error(", open '/data/alloc/x'"), { syscall: 'open' });
    expect(errorTextWithoutPath(err)).to.equal('');
  });

  it('is errorText for anything thrown that is not an Error', () => {
    expect(errorTextWithoutPath('EACCES, open /x')).to.equal('EACCES, open /x');
    expect(errorTextWithoutPath(undefined)).to.equal('undefined');
    expect(errorTextWithoutPath({ syscall: 'open', message: 'm, open p' })).to.equal('[object Object]');
  });
});
