// The seed's scenario from job files: HCL parsed and canonicalised by the jobspec package, then
// scheduled. Nomad's canonical defaults (migrate, reschedule, ephemeral disk) flow through.
import { expect } from 'chai';
import { jobFromApi, parseJobspec } from '../../../agent/jobspec/index.ts';
import { node, preemption, World } from './support.ts';

const hcl = (name: string, priority: number, count: number, cpu: number, memory: number) => `
job "${name}" {
  type     = "service"
  priority = ${priority}
  group "g" {
    count = ${count}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["1000"]
      }
      resources {
        cpu    = ${cpu}
        memory = ${memory}
      }
    }
  }
}
`;

describe('scheduler: jobs from jobspecs', () => {
  it('the seed: lo (priority 50, count 3, a third each) then hi (100, two thirds) preempts exactly two lo allocs', async () => {
    const lo = jobFromApi(await parseJobspec(hcl('lo', 50, 3, 1000, 1024), { filename: 'lo.nomad.hcl' }));
    const hi = jobFromApi(await parseJobspec(hcl('hi', 100, 1, 2000, 2048), { filename: 'hi.nomad.hcl' }));
    const w = new World(node({ resources: { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000, cores: 2 } }), preemption('service'));
    expect(w.register(lo).place).to.have.length(3);
    const plan = w.register(hi);
    expect(plan.place).to.have.length(1);
    expect(plan.preempt).to.have.length(2);
    expect(plan.place[0].preemptedAllocations).to.have.members(plan.preempt.map((a) => a.id));
    for (const v of plan.preempt) expect(v.desiredDescription).to.equal(`Preempted by alloc ID ${plan.place[0].id}`);
  });

  it('the same with preemption off: hi is queued', async () => {
    const lo = jobFromApi(await parseJobspec(hcl('lo', 50, 3, 1000, 1024)));
    const hi = jobFromApi(await parseJobspec(hcl('hi', 100, 1, 2000, 2048)));
    const w = new World(node({ resources: { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000, cores: 2 } }));
    w.register(lo);
    const plan = w.register(hi);
    expect(plan.place).to.have.length(0);
    expect(plan.queued).to.deep.equal({ g: 1 });
    expect(plan.evals.map((e) => e.status)).to.deep.equal(['blocked']);
  });
});
