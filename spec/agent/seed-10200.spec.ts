/**
 * The seed's repro of Nomad #10200, as a user runs it: `berth agent -dev -config
 * examples/seed-10200/agent.hcl`, `berth job run lo.nomad.hcl`, `berth job run hi.nomad.hcl`, on
 * real raw_exec processes. `hi` evicts two `lo` allocs; its runner waits for each with its own
 * watcher, each watching its own id (never `previousAllocation`); `hi` runs once both stopped.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { AgentProcess, pidsWith, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { expectSeedStory } from '../support/seed-story.ts';

const DIR = fileURLToPath(new URL('../../examples/seed-10200/', import.meta.url));

describe('agent: the seed #10200 repro, end to end', function () {
  this.timeout(90_000);
  let agent: AgentProcess | undefined;

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
  });

  it('evicts two lo allocs, one watcher per evicted alloc, then runs hi', async () => {
    agent = await new AgentProcess(['-dev', '-config', `${DIR}agent.hcl`]).ready();
    const lo = await agent.cli(['job', 'run', `${DIR}lo.nomad.hcl`]);
    expect(lo.code, lo.stderr).to.equal(0);
    expect(lo.stdout.match(/Allocation "\w+" created/g)).to.have.length(3);
    expect(lo.stdout.match(/-> "running"/g)).to.have.length(3);

    const hi = await agent.cli(['job', 'run', `${DIR}hi.nomad.hcl`]);
    expect(hi.code, hi.stdout + hi.stderr).to.equal(0);
    expectSeedStory(hi.stdout);

    // The same story over the API: the victims' desired status and description, hi's list.
    const allocs = (await agent.req('GET', '/v1/allocations')).json as any[];
    const hiAlloc = allocs.find((a) => a.JobID === 'hi');
    expect(hiAlloc.ClientStatus).to.equal('running');
    const victims = allocs.filter((a) => a.DesiredStatus === 'evict');
    expect(victims).to.have.length(2);
    for (const v of victims) {
      expect(v.DesiredDescription).to.equal(`Preempted by alloc ID ${hiAlloc.ID}`);
      expect(v.ClientStatus).to.equal('complete');
    }
    const full = (await agent.req('GET', `/v1/allocation/${hiAlloc.ID}`)).json;
    expect([...full.PreemptedAllocations].sort()).to.deep.equal(victims.map((v) => v.ID).sort());
    // The event stream shows each watcher with its own id (replayed from the buffer).
    const ac = new AbortController();
    const events = await new Promise<string>((resolve) => {
      let text = '';
      void import('node:http').then(({ get }) => {
        const req = get(`${agent!.url}/v1/event/stream?index=1&topic=Client:${hiAlloc.ID}`, { signal: ac.signal }, (res) => {
          res.on('data', (c: Buffer) => {
            text += c.toString();
            if ((text.match(/watcher\.released/g) ?? []).length >= 2) {
              ac.abort();
              resolve(text);
            }
          });
        });
        req.on('error', () => resolve(text));
      });
    });
    const waiting = events
      .split('\n')
      .filter((l) => l.includes('"watcher.waiting"'))
      .map((l) => JSON.parse(l).Events[0].Payload.Message);
    expect(waiting.map((m) => m.watchedAllocId).sort()).to.deep.equal(victims.map((v) => v.ID).sort());
    for (const m of waiting) expect(m.role).to.equal('preempted');

    // Real processes: one lo task and the hi task are alive, the two victims' are gone.
    const job = await waitFor(agent, '/v1/job/lo/summary', (j) => j.Summary.lo.Running === 1, 'lo running once');
    expect(job.Summary.lo.Complete).to.equal(2);
    expect(pidsWith('echo hi running')).to.have.length.greaterThan(0);
    expect(pidsWith('echo lo $NOMAD_ALLOC_INDEX running')).to.have.length(1);

    await agent.stop();
    agent = undefined;
    // -dev: the agent destroyed its allocs on the way out.
    expect(pidsWith('echo hi running')).to.deep.equal([]);
    expect(pidsWith('echo lo $NOMAD_ALLOC_INDEX running')).to.deep.equal([]);
  });
});
