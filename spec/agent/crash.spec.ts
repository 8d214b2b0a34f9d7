/**
 * kill -9 of the agent: every job, alloc and evaluation is there after the restart, the running
 * raw_exec tasks are reattached (the same processes, checked in /proc), nothing is run again.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, markerJobHcl, pidsWith, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

describe('agent: kill -9 and restart', function () {
  this.timeout(120_000);
  let agent: AgentProcess | undefined;
  let dir: string;
  const marker = `crash-spec-${process.pid}-${Date.now()}`;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-crash-'));
  });

  afterEach(async function () {
    const failed = this.currentTest?.state !== 'passed';
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
    // Whatever a failed run left: a -dev agent on the same data dir restores every alloc and
    // destroys it on the way out (tasks, mounts, cgroups).
    if (failed) await (await new AgentProcess(['-dev', '-data-dir', join(dir, 'data')]).ready()).stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every job, alloc and evaluation, reattaches the running tasks and re-runs nothing', async () => {
    const job = join(dir, 'crash.nomad.hcl');
    writeFileSync(job, markerJobHcl('crash', marker, { count: 2, script: 'echo started $NOMAD_ALLOC_ID >> ${NOMAD_ALLOC_DIR}/starts' }));
    const dataDir = join(dir, 'data');
    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    const run = await agent.cli(['job', 'run', job]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const before = (await agent.req('GET', '/v1/allocations')).json as any[];
    expect(before.map((a) => a.ClientStatus)).to.deep.equal(['running', 'running']);
    const evalsBefore = ((await agent.req('GET', '/v1/evaluations')).json as any[]).map((e) => e.ID).sort();
    const pids = pidsWith(marker).sort();
    expect(pids.length).to.be.greaterThan(0);

    await agent.crash();
    // The tasks outlive the agent.
    expect(pidsWith(marker).sort()).to.deep.equal(pids);

    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    const jobAfter = await agent.req('GET', '/v1/job/crash');
    expect(jobAfter.status).to.equal(200);
    expect(jobAfter.json.Version).to.equal(0);
    const after = await waitFor(agent, '/v1/allocations', (l: any[]) => l.length === 2 && l.every((a) => a.ClientStatus === 'running'), 'both allocs running');
    expect(after.map((a: any) => a.ID).sort()).to.deep.equal(before.map((a) => a.ID).sort());
    expect(((await agent.req('GET', '/v1/evaluations')).json as any[]).map((e) => e.ID).sort()).to.deep.equal(evalsBefore);
    // Reattached, not restarted: the same processes, each task started once.
    expect(pidsWith(marker).sort()).to.deep.equal(pids);
    for (const a of after) {
      const starts = await agent.req('GET', `/v1/client/fs/cat/${a.ID}?path=alloc/starts`);
      expect(starts.text.trim().split('\n')).to.deep.equal([`started ${a.ID}`]);
      const full = (await agent.req('GET', `/v1/allocation/${a.ID}`)).json;
      expect(full.TaskStates.t.Restarts).to.equal(0);
    }

    // And the restored agent still controls them: stop the job, the processes end.
    const stop = await agent.cli(['job', 'stop', 'crash']);
    expect(stop.code, stop.stderr).to.equal(0);
    await waitFor(agent, '/v1/allocations', (l: any[]) => l.every((a) => a.ClientStatus === 'complete'), 'both allocs complete');
    expect(pidsWith(marker)).to.deep.equal([]);
    const gc = await agent.req('POST', '/v1/client/gc');
    expect(gc.json.Collected).to.have.length(2);
  });

  it('without -dev a stop leaves the tasks running (exit 0); the next agent on the data dir reattaches them, starting nothing again', async () => {
    const job = join(dir, 'stop.nomad.hcl');
    writeFileSync(job, markerJobHcl('kept', marker, { script: 'echo started $NOMAD_ALLOC_ID >> ${NOMAD_ALLOC_DIR}/starts' }));
    const dataDir = join(dir, 'data');
    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    expect(agent.proc.stdout.split('\n')[0]).to.match(/^berth agent listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(agent.url).port).to.not.equal('0');
    const run = await agent.cli(['job', 'run', job]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const [alloc] = (await agent.req('GET', '/v1/allocations')).json as any[];
    const pids = pidsWith(marker).sort();
    expect(pids.length).to.be.greaterThan(0);

    const stopped = await agent.stop();
    expect(stopped.code, stopped.stderr).to.equal(0);
    expect(pidsWith(marker).sort()).to.deep.equal(pids);

    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    await waitFor(agent, '/v1/allocations', (l: any[]) => l.length === 1 && l[0].ClientStatus === 'running', 'the alloc running');
    expect(pidsWith(marker).sort()).to.deep.equal(pids);
    const starts = await agent.req('GET', `/v1/client/fs/cat/${alloc.ID}?path=alloc/starts`);
    expect(starts.text.trim().split('\n')).to.deep.equal([`started ${alloc.ID}`]);
    expect((await agent.cli(['job', 'stop', 'kept'])).code).to.equal(0);
    await waitFor(agent, '/v1/allocations', (l: any[]) => l.every((a) => a.ClientStatus === 'complete'), 'the alloc complete');
    expect(pidsWith(marker)).to.deep.equal([]);
    expect((await agent.req('POST', '/v1/client/gc')).json.Collected).to.deep.equal([alloc.ID]);
  });
});
