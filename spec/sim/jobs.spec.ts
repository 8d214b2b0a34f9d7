import { expect } from 'chai';
import type { JobOp } from '../../sim/jobs.ts';
import { releaseSimDataDir, runSim } from '../../sim/world.ts';

// Jobs through berth's scheduler in the simulator: the plans reach the real client, runners and
// charts on virtual time, and every invariant (I2: a preemptor never starts beside a live victim)
// holds. Seed 98 turns service preemption on (sim/jobs.ts draws it per seed).
describe('simulator: jobs through the scheduler', function () {
  this.timeout(120_000);
  after(releaseSimDataDir);

  const spec = {
    type: 'service' as const,
    tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0 }],
    restart: { attempts: 0, intervalMs: 60_000, delayMs: 300, mode: 'fail' as const },
  };
  const ops: JobOp[] = [
    // The seed: lo (priority 50, count 3, a third of the node each), then hi (100, two thirds).
    { at: 0, op: 'jobRegister', job: 0, spec, count: 3, priority: 50, cpu: 1300, memoryMB: 1365, ports: 1 },
    { at: 2000, op: 'jobRegister', job: 1, spec, count: 1, priority: 100, cpu: 2600, memoryMB: 2730, ports: 1 },
    { at: 4000, op: 'jobTick' },
    { at: 8000, op: 'jobStop', job: 1 },
    { at: 12_000, op: 'jobTick' },
  ];

  it("the seed's scenario as ops: hi evicts exactly two lo allocs, which come back once hi stops", async () => {
    const r = await runSim({ seed: 98, ops });
    expect(r.violations).to.deep.equal([]);
    const evals = r.trace.split('\n').filter((l) => l.includes('  eval '));
    expect(evals[0]).to.match(/eval job-register sjob0: place j\d+=sjob0\.g\[0\],j\d+=sjob0\.g\[1\],j\d+=sjob0\.g\[2\] stop - evict - /);
    expect(evals[1]).to.match(/eval job-register sjob1: place j\d+=sjob1\.g\[0\] stop - evict j\d+,j\d+ inplace/);
    expect(evals[2]).to.match(/eval preemption sjob0: place - .* queued \{"g":2\} -> complete/);
    // hi waited for its victims, then ran.
    const hi = /place (j\d+)=sjob1/.exec(evals[1]!)![1];
    expect(r.trace).to.match(new RegExp(`alloc ${hi} pending -> waiting-prev`));
    expect(r.trace).to.match(new RegExp(`event ${hi}/web Started`));
    // hi stopped: the blocked eval places lo's two again.
    expect(evals.some((l) => /eval queued-allocs sjob0: place j\d+=sjob0\.g\[\d\],j\d+=sjob0\.g\[\d\] .* -> complete/.test(l))).to.equal(true);
  });

  it('generated job ops hold every invariant and replay byte for byte', async () => {
    const a = await runSim({ seed: 40 });
    expect(a.violations).to.deep.equal([]);
    expect(a.trace).to.match(/eval .* evict j\d+/);
    const b = await runSim({ seed: 40 });
    expect(b.trace).to.equal(a.trace);
  });
});
