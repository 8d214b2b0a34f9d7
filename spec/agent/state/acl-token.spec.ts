/**
 * The management token against a real state file and server dir: made once and kept across
 * reopens, made again only when the reset file names the current reset index (a stale one is
 * logged and ignored), dated when older state lacks its reset index or accessor.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACL_RESET_FILE, aclResetIndex, managementToken, managementTokenInfo } from '../../../agent/state/acl-token.ts';
import { AgentState } from '../../../agent/state/store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('agent state: the management token', () => {
  let dir: string;
  let lines: string[];
  const open: AgentState[] = [];
  const state = (file = 'state.db') => {
    const s = new AgentState(join(dir, file));
    open.push(s);
    return s;
  };
  const token = (s: AgentState) => managementToken(s, dir, (l) => lines.push(l));
  const resetFile = () => join(dir, ACL_RESET_FILE);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-acl-'));
    lines = [];
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has no token record and reset index 0 before the first token', () => {
    const s = state();
    expect(managementTokenInfo(s)).to.equal(undefined);
    expect(aclResetIndex(s)).to.equal(0);
  });

  it('makes a token at the first start, with its own accessor and the index it was made at, and keeps it across a reopen', () => {
    const s = state();
    const before = Date.now();
    const t = token(s);
    expect(t).to.match(UUID);
    const info = managementTokenInfo(s)!;
    expect(info.secretId).to.equal(t);
    expect(info.accessorId).to.match(UUID).and.not.equal(t);
    expect(info.createIndex).to.equal(s.waiters.index).and.equal(aclResetIndex(s));
    expect(info.createTime).to.be.within(before, Date.now());
    s.close();
    const again = state();
    expect(token(again)).to.equal(t);
    expect(managementTokenInfo(again)).to.deep.equal(info);
    expect(lines).to.deep.equal([]);
  });

  it('ignores a reset file naming another index (logged, the file left), and makes a new token for one naming the reset index', () => {
    const s = state();
    const old = token(s);
    const index = aclResetIndex(s);
    writeFileSync(resetFile(), `${index + 1}\n`);
    expect(token(s)).to.equal(old);
    expect(lines).to.deep.equal([`ignoring ${resetFile()}: it names reset index "${index + 1}", the reset index is ${index}`]);
    expect(existsSync(resetFile())).to.equal(true);

    writeFileSync(resetFile(), ` ${index}\n`);
    const fresh = token(s);
    expect(fresh).to.match(UUID).and.not.equal(old);
    expect(aclResetIndex(s)).to.be.above(index);
    expect(existsSync(resetFile())).to.equal(false);
    expect(lines[1]).to.equal(`ACL bootstrap reset (${resetFile()}): the old management token no longer works`);
  });

  /** A state as an older agent left it: only these meta rows, reopened. */
  const older = (meta: Record<string, unknown>, file = 'state.db') => {
    const s = state(file);
    s.commit((txn) => Object.entries(meta).forEach(([k, v]) => txn.putMeta(k, v)));
    s.close();
    return state(file);
  };

  it('dates a kept token from older state (no reset index, no accessor) once', () => {
    const s = older({ managementToken: 'kept-secret' });
    expect(managementTokenInfo(s)).to.deep.equal({ accessorId: '', secretId: 'kept-secret', createTime: 0, createIndex: 0 });
    const before = Date.now();
    expect(token(s)).to.equal('kept-secret');
    const info = managementTokenInfo(s)!;
    expect(info.accessorId).to.match(UUID);
    expect(info.createIndex).to.equal(s.waiters.index);
    expect(info.createTime).to.be.within(before, Date.now());
    const index = s.waiters.index;
    expect(token(s)).to.equal('kept-secret');
    expect(s.waiters.index, 'nothing left to date: no commit').to.equal(index);
  });

  it('dates only what older state lacks: the accessor beside a kept reset index, the reset index beside a kept accessor', () => {
    const a = older({ managementToken: 's1', aclBootstrapIndex: 1 });
    token(a);
    expect(managementTokenInfo(a)!.createIndex).to.equal(1);
    expect(managementTokenInfo(a)!.accessorId).to.match(UUID);
    const b = older({ managementToken: 's2', managementAccessor: 'acc', managementTokenCreateTime: 5 }, 'other.db');
    token(b);
    expect(managementTokenInfo(b)).to.deep.equal({ accessorId: 'acc', secretId: 's2', createTime: 5, createIndex: b.waiters.index });
  });

  it('a reset file it cannot read stops the start with the read error', () => {
    const s = state();
    token(s);
    mkdirSync(resetFile());
    expect(() => token(s)).to.throw(/EISDIR/);
  });
});
