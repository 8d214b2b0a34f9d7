/**
 * The sweep of dead `-dev` agents' dirs, run directly on a temp dir (real locks, a real client
 * restore of each dir): only marked `berth-dev-*` dirs of this user whose lock no one holds are
 * cleaned and removed; a dir it cannot clean is kept and reported, its lock let go.
 */
import { expect } from 'chai';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../../actors/client/client.ts';
import { lockDataDir, type DataDirLock } from '../../../agent/state/data-dir-lock.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { DEV_DIR_PREFIX, DEV_MARKER, markDevDir, sweepDeadDevAgents } from '../../../agent/state/dev-sweep.ts';

describe('agent state: sweeping dead dev agents’ dirs', function () {
  this.timeout(20_000);
  let tmp: string;
  let lines: string[];
  const held: DataDirLock[] = [];
  const devDir = (name: string, marked = true) => {
    const d = join(tmp, name);
    mkdirSync(d);
    if (marked) markDevDir(d);
    return d;
  };
  const sweep = () => sweepDeadDevAgents(tmp, (l) => lines.push(l));
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'berth-sweep-'));
    lines = [];
  });
  afterEach(() => {
    for (const l of held.splice(0)) l.release();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('marks a dev dir with the agent’s pid', () => {
    const d = devDir(`${DEV_DIR_PREFIX}x`);
    expect(existsSync(join(d, DEV_MARKER))).to.equal(true);
    expect(DEV_MARKER).to.equal('dev-agent');
    expect(DEV_DIR_PREFIX).to.equal('berth-dev-');
  });

  it('removes a dead dev agent’s dir and leaves a live one, an unmarked one, another user’s, a file and other names', async () => {
    const dead = devDir('berth-dev-dead');
    const live = devDir('berth-dev-live');
    held.push(lockDataDir(live));
    const unmarked = devDir('berth-dev-unmarked', false);
    const foreign = devDir('berth-dev-foreign');
    chownSync(foreign, 65534, 65534);
    writeFileSync(join(tmp, 'berth-dev-file'), '');
    const other = devDir('other-dir');
    const result = await sweep();
    expect(result).to.deep.equal({ removed: [dead], failed: [] });
    expect(lines).to.deep.equal([`removed what a dead dev agent left in ${dead} (0 allocations destroyed)`]);
    expect([dead, live, unmarked, foreign, other].map((d) => existsSync(d))).to.deep.equal([false, true, true, true, true]);
  });

  it('keeps a dir it cannot lock or clean, says why, and lets its lock go for the next sweep', async () => {
    const broken = devDir('berth-dev-broken');
    writeFileSync(join(broken, 'client'), 'not a dir'); // the client's state cannot be made under it
    const unlockable = devDir('berth-dev-unlockable');
    mkdirSync(join(unlockable, 'agent.lock'));
    const result = await sweep();
    expect(result.removed).to.deep.equal([]);
    expect(result.failed.map((f) => f.dir).sort()).to.deep.equal([broken, unlockable]);
    for (const f of result.failed) expect(f.error).to.be.a('string').and.not.equal('');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(new RegExp(`^cannot clean up the dead dev agent's dir ${broken}: .+`));
    expect([existsSync(broken), existsSync(unlockable)]).to.deep.equal([true, true]);
    held.push(lockDataDir(broken));
  });

  it('finds nothing to do in a temp dir that is not there', async () => {
    expect(await sweepDeadDevAgents(join(tmp, 'missing'), (l) => lines.push(l))).to.deep.equal({ removed: [], failed: [] });
    expect(lines).to.deep.equal([]);
  });

  it('destroys the allocation a dead agent left running, and repairs a damaged client store on the way', async () => {
    const withAlloc = devDir('berth-dev-alloc');
    const left = createClient({ dataDir: withAlloc });
    const runner = left.addAlloc(makeAlloc([mockTask('t', { run_for: '1h' })]));
    await new Promise<void>((resolve) => {
      const sub = left.updates$.subscribe((a) => a.id === runner.alloc().id && a.clientStatus === 'running' && (sub.unsubscribe(), resolve()));
    });
    await left.shutdown(); // as a kill -9 would leave it: the alloc in the store, not destroyed
    const damaged = devDir('berth-dev-damaged');
    mkdirSync(join(damaged, 'client'));
    writeFileSync(join(damaged, 'client', 'state.db'), 'x'.repeat(4096));
    const result = await sweep();
    expect({ ...result, removed: [...result.removed].sort() }).to.deep.equal({ removed: [withAlloc, damaged].sort(), failed: [] });
    expect(lines.sort()).to.deep.equal(
      [
        `removed what a dead dev agent left in ${withAlloc} (1 allocation destroyed)`,
        `removed what a dead dev agent left in ${damaged} (0 allocations destroyed)`,
      ].sort(),
    );
  });
});
