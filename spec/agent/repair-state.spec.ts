/**
 * `berth agent` on a damaged client state store: without `-repair-state` it refuses to start and
 * names that flag (not a library option an agent user cannot set); with it, the damaged file is
 * moved aside and the tasks the crashed agent left are reattached or stopped, never orphaned.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAMAGE } from '../actors/state/support/damage.ts';
import { AgentProcess, markerJobHcl, pidsWith, waitFor } from '../support/agent.ts';
import { runCli, stopCliProcesses } from '../support/cli.ts';

describe('agent: -repair-state', function () {
  this.timeout(120_000);
  let agent: AgentProcess | undefined;
  let dir: string;
  const marker = `repair-spec-${process.pid}-${Date.now()}`;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-repair-'));
  });

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
    // A -dev agent on the same data dir restores every alloc and destroys it on the way out
    // (tasks, mounts); the repair run's damaged store is left aside, so it opens clean.
    if (existsSync(join(dir, 'data'))) {
      const sweeper = await new AgentProcess(['-dev', '-data-dir', join(dir, 'data'), '-repair-state']).ready();
      // Once what it restored has settled (a stop in the middle of a task's reattach is another spec's matter).
      await waitFor(sweeper, '/v1/allocations', (l: any[]) => l.every((a) => a.ClientStatus !== 'pending'), 'restored allocs settled');
      await sweeper.stop();
    }
    for (const pid of pidsWith(marker)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a damaged client/state.db naming -repair-state, then repairs it with the flag and leaves no task orphaned', async () => {
    const job = join(dir, 'repair.nomad.hcl');
    writeFileSync(job, markerJobHcl('repair', marker));
    const dataDir = join(dir, 'data');
    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    const run = await agent.cli(['job', 'run', job]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const pids = pidsWith(marker);
    expect(pids.length).to.be.greaterThan(0);
    await agent.crash();
    agent = undefined;
    const db = join(dataDir, 'client', 'state.db');
    DAMAGE['random header (first 100 bytes)']!(db, {}, Math.random);

    // Without the flag: a failed start that says what to do, and touches nothing.
    const refused = await runCli(['agent', '-port', '0', '-data-dir', dataDir]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include(db);
    expect(refused.stderr).to.include('start the agent with -repair-state');
    expect(refused.stderr).to.not.include('repairStateStore');
    expect(readdirSync(join(dataDir, 'client')).filter((f) => f.includes('damaged'))).to.deep.equal([]);
    expect(pidsWith(marker)).to.deep.equal(pids);

    // With it: the file moved aside; the task the store no longer knows is stopped and its
    // alloc dir (mounts included) removed, the alloc reported lost, and the scheduler replaces it.
    agent = await new AgentProcess(['-data-dir', dataDir, '-repair-state']).ready();
    expect(agent.proc.stderr).to.match(/state store \S+state\.db was damaged: moved aside to \S+state\.db\.damaged-\d+/);
    expect(readdirSync(join(dataDir, 'client')).some((f) => f.startsWith('state.db.damaged'))).to.equal(true);
    const allocs = await waitFor(
      agent,
      '/v1/allocations',
      (l: any[]) => l.length === 2 && l.some((a) => a.ClientStatus === 'lost') && l.some((a) => a.ClientStatus === 'running'),
      'the lost alloc and its replacement running',
    );
    const lost = allocs.find((a: any) => a.ClientStatus === 'lost');
    const replacement = allocs.find((a: any) => a.ClientStatus === 'running');
    expect(lost.ClientDescription).to.match(/no state for this allocation/);
    expect(existsSync(join(dataDir, 'alloc', lost.ID))).to.equal(false);
    const now = pidsWith(marker);
    expect(now.length).to.equal(1);
    expect(now.some((p) => pids.includes(p))).to.equal(false);
    const cat = await agent.req('GET', `/v1/client/fs/stat/${replacement.ID}?path=alloc`);
    expect(cat.status).to.equal(200);
  });
});
