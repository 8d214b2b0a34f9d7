/**
 * One agent per data dir: the lock is refused at once while held (in this process too, as SQLite
 * tracks it per file), names the holder's pid when it can, and is free again once released.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, lockDataDir, type DataDirLock } from '../../../agent/state/data-dir-lock.ts';

describe('agent state: the data dir lock', () => {
  let dir: string;
  const held: DataDirLock[] = [];
  const lock = (d = dir) => {
    const l = lockDataDir(d);
    held.push(l);
    return l;
  };
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-lock-'))));
  afterEach(() => {
    for (const l of held.splice(0)) l.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a missing data dir, writes its pid beside the lock, and refuses a second holder naming that pid', () => {
    const data = join(dir, 'a', 'b');
    lock(data);
    expect(readFileSync(join(data, 'agent.pid'), 'utf8')).to.equal(`${process.pid}\n`);
    let err: unknown;
    try {
      lock(data);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(DataDirLockedError);
    const e = err as DataDirLockedError;
    expect([e.dataDir, e.holderPid]).to.deep.equal([data, process.pid]);
    expect(e.message).to.equal(`data dir ${data} is in use by another berth agent (pid ${process.pid}): stop it first, or give this one another -data-dir`);
  });

  it('a holder pid it cannot read is left out of the refusal', () => {
    lock();
    for (const text of ['not a pid\n', '0\n', '-3\n', '1.5\n']) {
      writeFileSync(join(dir, 'agent.pid'), text);
      const e = (() => {
        try {
          lockDataDir(dir);
        } catch (err) {
          return err as DataDirLockedError;
        }
        throw new Error('locked twice');
      })();
      expect(e.holderPid, text).to.equal(undefined);
      expect(e.message).to.equal(`data dir ${dir} is in use by another berth agent: stop it first, or give this one another -data-dir`);
    }
    rmSync(join(dir, 'agent.pid'));
    expect(() => lockDataDir(dir)).to.throw(DataDirLockedError, /another berth agent: stop/);
  });

  it('release() frees the dir for the next agent and removes the pid file; twice is harmless', () => {
    const first = lock();
    first.release();
    expect(existsSync(join(dir, 'agent.pid'))).to.equal(false);
    first.release();
    const second = lock();
    expect(existsSync(join(dir, 'agent.pid'))).to.equal(true);
    // the first one's second release did not take the pid file or the lock from the second
    first.release();
    expect(existsSync(join(dir, 'agent.pid'))).to.equal(true);
    expect(() => lockDataDir(dir)).to.throw(DataDirLockedError);
    second.release();
  });

  it('a lock file it cannot open is that error, not "in use"', () => {
    mkdirSync(join(dir, 'agent.lock'));
    let err: unknown;
    try {
      lock();
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(DataDirLockedError);
    expect(existsSync(join(dir, 'agent.pid'))).to.equal(false);
  });

  it('a lock file that is not a database is that error, not "in use"', () => {
    writeFileSync(join(dir, 'agent.lock'), 'x'.repeat(4096));
    let err: unknown;
    try {
      lock();
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(DataDirLockedError);
    expect((err as { code?: string }).code).to.equal('SQLITE_NOTADB');
  });
});
