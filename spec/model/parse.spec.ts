import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { InvalidAllocationError, parseAllocation } from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const nomadJson = () => JSON.parse(readFileSync(new URL('../fixtures/nomad-alloc.json', import.meta.url), 'utf8'));

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(InvalidAllocationError);
    return (e as InvalidAllocationError).issues;
  }
  throw new Error('expected InvalidAllocationError');
}

describe('parseAllocation', () => {
  it('accepts Nomad API JSON and converts names, nanoseconds and zero times', () => {
    const a = parseAllocation(nomadJson());
    expect(a.id).to.equal('5a2f6c2e-8f3b-4c1d-9e7a-1b2c3d4e5f60');
    expect(a.nodeId).to.equal('f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b');
    expect(a.jobId).to.equal('example');
    expect(a.taskGroup).to.equal('cache');
    expect(a.allocModifyIndex).to.equal(14);
    expect(a.previousAllocation).to.equal('9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e');
    expect(a.preemptedAllocations).to.have.length(2);
    expect(a.createTime).to.equal(1764676800000);
    const g = a.job.taskGroups[0]!;
    expect(g.ephemeralDisk).to.deep.equal({ sticky: true, migrate: true, sizeMB: 300 });
    expect(g.restartPolicy).to.deep.equal({ attempts: 2, intervalMs: 1_800_000, delayMs: 15_000, mode: 'fail' });
    const [redis, warmup] = g.tasks;
    expect(redis!.config).to.deep.equal({ run_for: '10s', stdout_string: 'ready\n' });
    expect(redis!.killTimeoutMs).to.equal(5000);
    expect(redis!.env).to.deep.equal({ REDIS_PORT: '6379' });
    expect(redis!.lifecycle).to.equal(undefined);
    expect(warmup!.lifecycle).to.deep.equal({ hook: 'prestart', sidecar: false });
    expect(warmup!.killSignal).to.equal('SIGTERM');
    const ts = a.taskStates!.redis!;
    expect(ts.startedAt).to.equal(undefined); // Nomad's zero time means absent
    expect(ts.events[0]!.time).to.equal(1764676800000);
  });

  it('keeps name, region, datacenters, meta, resources and shutdown delays from Nomad JSON', () => {
    const raw = nomadJson();
    raw.Job.Meta = { owner: 'ops' };
    raw.Job.TaskGroups[0].Meta = { tier: 'cache' };
    raw.Job.TaskGroups[0].ShutdownDelay = 5_000_000_000;
    raw.Job.TaskGroups[0].Tasks[0].Meta = { role: 'primary' };
    raw.Job.TaskGroups[0].Tasks[0].ShutdownDelay = 2_000_000_000;
    raw.Job.TaskGroups[0].Tasks[0].Resources = { CPU: 500, MemoryMB: 256, MemoryMaxMB: 512, Cores: 0, DiskMB: 0, SecretsMB: 2 };
    const a = parseAllocation(raw);
    expect(a.name).to.equal('example.cache[0]');
    expect(a.job.region).to.equal('global');
    expect(a.job.datacenters).to.deep.equal(['dc1']);
    expect(a.job.meta).to.deep.equal({ owner: 'ops' });
    const g = a.job.taskGroups[0]!;
    expect(g.meta).to.deep.equal({ tier: 'cache' });
    expect(g.shutdownDelayMs).to.equal(5000);
    expect(g.tasks[0]!.meta).to.deep.equal({ role: 'primary' });
    expect(g.tasks[0]!.shutdownDelayMs).to.equal(2000);
    // Nomad's 0 means "not set".
    expect(g.tasks[0]!.resources).to.deep.equal({ cpu: 500, memoryMB: 256, memoryMaxMB: 512, secretsMB: 2 });
    // And they survive a camelCase round trip.
    expect(parseAllocation(JSON.parse(JSON.stringify(a)))).to.deep.equal(a);
  });

  it('keeps max_run_duration, the disconnect block and the desired transition from Nomad JSON', () => {
    const raw = nomadJson();
    raw.Job.TaskGroups[0].MaxRunDuration = 90_000_000_000;
    raw.Job.TaskGroups[0].Disconnect = { LostAfter: 60_000_000_000, StopOnClientAfter: null, Replace: true, Reconcile: 'keep_original' };
    raw.DesiredTransition = { Migrate: null, Reschedule: null, ForceReschedule: null, NoShutdownDelay: true };
    const a = parseAllocation(raw);
    const g = a.job.taskGroups[0]!;
    expect(g.maxRunDurationMs).to.equal(90_000);
    expect(g.disconnect).to.deep.equal({ lostAfterMs: 60_000, replace: true, reconcile: 'keep_original' });
    expect(a.desiredTransition).to.deep.equal({ noShutdownDelay: true });
    expect(parseAllocation(JSON.parse(JSON.stringify(a)))).to.deep.equal(a);
    const old = nomadJson();
    old.Job.TaskGroups[0].MaxClientDisconnect = 30_000_000_000;
    expect(parseAllocation(old).job.taskGroups[0]!.maxClientDisconnectMs).to.equal(30_000);
  });

  it('validates max_run_duration, disconnect and the desired transition', () => {
    const bad = makeAlloc([mockTask('t')], {
      group: { maxRunDurationMs: 0, maxClientDisconnectMs: 5, disconnect: { lostAfterMs: 5, reconcile: 'coin_toss', replace: 'yes' as never } },
      desiredTransition: { noShutdownDelay: 'yes' as never },
    });
    expect(issuesOf(() => parseAllocation(bad))).to.include.members([
      'job.taskGroups[0].maxRunDurationMs: MaxRunDuration must be greater than zero',
      'job.taskGroups[0].disconnect.replace: must be a boolean',
      'job.taskGroups[0].disconnect.lostAfterMs: using both lost_after and max_client_disconnect is not allowed',
      'desiredTransition.noShutdownDelay: must be a boolean',
    ]);
    expect(issuesOf(() => parseAllocation(bad)).some((i) => i.startsWith('job.taskGroups[0].disconnect.reconcile:'))).to.equal(true);
  });

  it('validates resources as Nomad does', () => {
    const bad = makeAlloc([mockTask('t', undefined, { resources: { cpu: 0, memoryMB: 5, memoryMaxMB: 4, cores: -1 } })]);
    const issues = issuesOf(() => parseAllocation(bad));
    expect(issues).to.include('job.taskGroups[0].tasks[0].resources.cpu: minimum CPU value is 1; got 0');
    expect(issues).to.include('job.taskGroups[0].tasks[0].resources.memoryMB: minimum MemoryMB value is 10; got 5');
    expect(issues).to.include('job.taskGroups[0].tasks[0].resources.memoryMaxMB: MemoryMaxMB value (4) should be larger than MemoryMB value (5)');
    expect(issues).to.include('job.taskGroups[0].tasks[0].resources.cores: must not be negative');
    const worse = makeAlloc([mockTask('t', undefined, { meta: { a: 1 } as never, shutdownDelayMs: 'x' as never })]);
    expect(issuesOf(() => parseAllocation(worse))).to.include.members([
      'job.taskGroups[0].tasks[0].meta.a: must be a string',
      'job.taskGroups[0].tasks[0].shutdownDelayMs: must be a number',
    ]);
  });

  it('round-trips berth camelCase JSON', () => {
    const a = makeAlloc([mockTask('web')]);
    expect(parseAllocation(JSON.parse(JSON.stringify(a)))).to.deep.include({ id: a.id, taskGroup: 'web', namespace: 'default' });
  });

  it('names every offending field path at once, in camelCase even for Nomad input', () => {
    const j = nomadJson();
    j.ID = 'short';
    j.Job.TaskGroups[0].Tasks[1].Name = 'a/b';
    j.Job.TaskGroups[0].Tasks.push({ ...j.Job.TaskGroups[0].Tasks[0] });
    j.AllocModifyIndex = -1;
    j.PreemptedAllocations = [''];
    const issues = issuesOf(() => parseAllocation(j));
    expect(issues).to.include('id: must be a 36-character UUID');
    expect(issues).to.include('job.taskGroups[0].tasks[1].name: must not contain "/"');
    expect(issues).to.include('job.taskGroups[0].tasks[2].name: duplicate task name "redis"');
    expect(issues).to.include('allocModifyIndex: must not be negative');
    expect(issues).to.include('preemptedAllocations[0]: must be a 36-character UUID');
  });

  it('rejects missing ids, an unknown task group and bad task names', () => {
    for (const bad of ['', '.', '..', 'x\0y']) {
      const a = makeAlloc([mockTask(bad)]) as unknown as Record<string, unknown>;
      expect(issuesOf(() => parseAllocation(a)).some((i) => i.startsWith('job.taskGroups[0].tasks[0].name'))).to.equal(true, bad);
    }
    const a = makeAlloc([mockTask('web')], { taskGroup: 'nope' }) as unknown as Record<string, unknown>;
    delete a.id;
    delete a.nodeId;
    const issues = issuesOf(() => parseAllocation(a));
    expect(issues).to.include('id: is required');
    expect(issues).to.include('nodeId: is required');
    expect(issues).to.include('taskGroup: failed to lookup task group "nope"');
  });

  it('rejects non-objects', () => {
    expect(() => parseAllocation(null)).to.throw(InvalidAllocationError);
    expect(() => parseAllocation([1])).to.throw(InvalidAllocationError);
  });

  it("completes a partial restart policy over the job type's default, and a task's over its group's (Nomad's Canonicalize)", () => {
    const a = makeAlloc([mockTask('web', {}, { restartPolicy: { delayMs: 1000 } as never }), mockTask('api')], {
      group: { restartPolicy: { attempts: 5 } as never },
    });
    const parsed = parseAllocation(JSON.parse(JSON.stringify(a)));
    const g = parsed.job.taskGroups[0]!;
    expect(g.restartPolicy).to.deep.equal({ attempts: 5, intervalMs: 1_800_000, delayMs: 15_000, mode: 'fail' });
    expect(g.tasks[0]!.restartPolicy).to.deep.equal({ attempts: 5, intervalMs: 1_800_000, delayMs: 1000, mode: 'fail' });
    expect(g.tasks[1]!.restartPolicy).to.equal(undefined);
    const batch = parseAllocation(
      JSON.parse(JSON.stringify(makeAlloc([mockTask('b')], { jobType: 'batch', group: { restartPolicy: { mode: 'delay' } as never } }))),
    );
    expect(batch.job.taskGroups[0]!.restartPolicy).to.deep.equal({ attempts: 3, intervalMs: 86_400_000, delayMs: 15_000, mode: 'delay' });
  });
});
