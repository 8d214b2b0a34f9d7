import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { checkJob, parseAllocation, UnsupportedStanzaError } from '../../model/index.ts';

/**
 * The fixture allocation with the zero-valued stanzas a Nomad 1.7+ server writes into every
 * allocation it hands out (from the api structs' zero values and the server's defaults).
 */
function nomad17Alloc(): Record<string, any> {
  const raw = JSON.parse(readFileSync(new URL('../fixtures/nomad-alloc.json', import.meta.url), 'utf8'));
  const job = raw.Job;
  // A job-level update as the server writes it for a service job: only stagger and max_parallel set.
  job.Update = {
    Stagger: 30_000_000_000,
    MaxParallel: 1,
    HealthCheck: '',
    MinHealthyTime: 0,
    HealthyDeadline: 0,
    ProgressDeadline: 0,
    AutoRevert: false,
    AutoPromote: false,
    Canary: 0,
  };
  for (const g of job.TaskGroups) {
    g.Consul = { Namespace: '', Cluster: 'default', Partition: '' };
    g.Migrate = { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000 };
    for (const t of g.Tasks) {
      // The default workload identity every task gets (never exposed to the task).
      t.Identity = { Name: 'default', Audience: ['nomadproject.io'], ChangeMode: '', ChangeSignal: '', Env: false, File: false, ServiceName: '', TTL: 0 };
      t.Consul = null;
      t.Vault = null;
    }
  }
  return raw;
}

describe('Nomad-written defaults are not uses of a stanza', () => {
  it('parseAllocation accepts the allocation JSON a Nomad 1.7+ server returns', () => {
    const a = parseAllocation(nomad17Alloc());
    expect(a.job.taskGroups[0]!.name).to.equal(nomad17Alloc().Job.TaskGroups[0].Name);
    expect(a.job.taskGroups[0]).to.not.have.property('consul');
  });

  it("the agent's job decode (checkJob) accepts the same job", () => {
    const { job, warnings } = checkJob(nomad17Alloc().Job);
    expect(warnings).to.deep.equal([]);
    expect(job.taskGroups[0]!.tasks[0]).to.not.have.property('identity');
  });

  it('a job-level update with HealthCheck "" means the default health check', () => {
    const { job } = checkJob(nomad17Alloc().Job);
    expect((job as { update?: { healthCheck: string } }).update?.healthCheck).to.equal('checks');
  });

  it('still refuses a Consul namespace, a Consul cluster of its own, and an exposed identity', () => {
    const cases: [(r: Record<string, any>) => void, string][] = [
      [(r) => (r.Job.TaskGroups[0].Consul.Namespace = 'team-a'), 'consul'],
      [(r) => (r.Job.TaskGroups[0].Consul.Cluster = 'east'), 'consul'],
      [(r) => (r.Job.TaskGroups[0].Tasks[0].Identity.Env = true), 'identity'],
      [(r) => (r.Job.TaskGroups[0].Tasks[0].Consul = { Cluster: 'default', Namespace: 'x' }), 'consul'],
    ];
    for (const [change, stanza] of cases) {
      const raw = nomad17Alloc();
      change(raw);
      expect(() => parseAllocation(raw), stanza)
        .to.throw(UnsupportedStanzaError)
        .with.property('message')
        .that.includes(`${stanza} is not supported by berth`);
    }
  });
});
