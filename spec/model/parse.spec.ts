import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  checkAllocation,
  InvalidAllocationError,
  isUUID,
  parseAllocation,
  UnsupportedStanzaError,
  type Task,
  type UnsupportedStanza,
} from '../../model/index.ts';
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
    expect(issuesOf(() => parseAllocation(a))).to.include('taskGroup: failed to lookup task group "nope"');
  });

  it('fills a missing id (a new UUID) and nodeId (the host\'s, else "local") in berth\'s own JSON', () => {
    const a = makeAlloc([mockTask('web')]) as unknown as Record<string, unknown>;
    delete a.id;
    delete a.nodeId;
    const p1 = parseAllocation(a);
    const p2 = parseAllocation(a, { nodeId: 'node-7' });
    expect(isUUID(p1.id) && isUUID(p2.id) && p1.id !== p2.id).to.equal(true);
    expect([p1.nodeId, p2.nodeId]).to.deep.equal(['local', 'node-7']);
    expect(issuesOf(() => parseAllocation({ ...a, id: 'short' }))).to.include('id: must be a 36-character UUID');
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

describe('parseAllocation: one schema, no silent drops, no impossible values (#23, #24 item 3, #20 item 10)', () => {
  const task = (over: Partial<Task> & Record<string, unknown>) => makeAlloc([mockTask('t', { run_for: '1s' }, over as Partial<Task>)]);
  const T = 'job.taskGroups[0].tasks[0]';

  it('misspelled keys are errors with a did-you-mean, at any depth and for Nomad JSON', () => {
    expect(issuesOf(() => parseAllocation(task({ enviroment: { A: 'b' } })))).to.include(`${T}.enviroment: unknown field "enviroment" (did you mean "env"?)`);
    expect(issuesOf(() => parseAllocation(task({ resources: { memory: 64 } as never })))).to.include(
      `${T}.resources.memory: unknown field "memory" (did you mean "memoryMB"?)`,
    );
    const raw = makeAlloc([{ name: 't', driver: 'raw_exec', config: { command: '/bin/echo', arg: ['x'] } }]);
    expect(issuesOf(() => parseAllocation(raw))).to.include(`${T}.config.arg: unknown field "arg" (did you mean "args"?)`);
    expect(issuesOf(() => parseAllocation({ ...makeAlloc([mockTask('t')]), taskgroup: 'web' }))).to.include(
      'taskgroup: unknown field "taskgroup" (did you mean "taskGroup"?)',
    );
    const j = nomadJson();
    j.Job.TaskGroups[0].Tasks[0].KillTimout = 1;
    expect(issuesOf(() => parseAllocation(j))).to.include(`${T}.KillTimout: unknown field "KillTimout" (did you mean "KillTimeout"?)`);
  });

  it('driver configs are checked by the driver schema: config {}, command as an array, args as a string', () => {
    const raw = (config: Record<string, unknown>) => makeAlloc([{ name: 't', driver: 'raw_exec', config }]);
    expect(issuesOf(() => parseAllocation(raw({})))).to.deep.equal([`${T}.config.command: missing required config "command" (a non-empty string)`]);
    expect(issuesOf(() => parseAllocation(raw({ command: ['/bin/true'] })))).to.deep.equal([`${T}.config.command: must be a string`]);
    expect(issuesOf(() => parseAllocation(raw({ command: '/bin/echo', args: 'a b' })))).to.deep.equal([`${T}.config.args: must be a list of strings`]);
    expect(issuesOf(() => parseAllocation(task({ config: { run_for: '10' } })))).to.deep.equal([`${T}.config.run_for: time: missing unit in duration "10"`]);
  });

  it('impossible values are refused at parse with their path', () => {
    expect(issuesOf(() => parseAllocation(task({ resources: { memoryMB: 2 ** 34 } })))[0]).to.match(
      /resources\.memoryMB: must be at most 8589934592 MB \(2\^53 bytes/,
    );
    expect(issuesOf(() => parseAllocation(task({ env: { A: 'x\0y' } })))).to.include(`${T}.env.A: must not contain NUL`);
    expect(issuesOf(() => parseAllocation(task({ env: { 'A\0B': 'x' } })))).to.include(`${T}.env["A\\u0000B"]: the key must not contain NUL`);
    expect(issuesOf(() => parseAllocation(task({ meta: { k: 'a\0' } })))).to.include(`${T}.meta.k: must not contain NUL`);
    const big = 'x'.repeat(200 * 1024);
    expect(issuesOf(() => parseAllocation(task({ env: { BIG: big } })))[0]).to.match(
      /env\.BIG: the entry is \d+ bytes, past the kernel's 131072-byte limit for one argument \(MAX_ARG_STRLEN\)/,
    );
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`V${i}`, 'y'.repeat(100 * 1024)]));
    expect(issuesOf(() => parseAllocation(task({ env: many }))).join('\n')).to.match(
      /env: is \d+ bytes as environment variables, past the kernel's 2097152-byte limit \(ARG_MAX\)/,
    );
    // Cores beyond the node (the client passes its own count).
    const cores = makeAlloc([mockTask('a', undefined, { resources: { cores: 2 } }), mockTask('b', undefined, { resources: { cores: 3 } })]);
    expect(issuesOf(() => parseAllocation(cores, { nodeCores: 4 }))).to.deep.equal([
      `job.taskGroups[0].tasks[1].resources.cores: the group's tasks reserve 5 cores up to here; this node has 4`,
    ]);
    expect(() => parseAllocation(cores, { nodeCores: 5 })).to.not.throw();
    // Meta becomes NOMAD_META_* in every task's environment: job meta counts for each task.
    const meta = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`m${i}`, 'z'.repeat(100 * 1024)]));
    const a = makeAlloc([mockTask('t')]);
    a.job.meta = meta;
    expect(issuesOf(() => parseAllocation(a)).join('\n')).to.match(/tasks\[0\]\.env: with job, group and task meta the environment is \d+ bytes/);
  });

  it('stanzas berth does not run are refused by name (typed), or left out with a warning when asked', () => {
    const j = nomadJson();
    j.Job.TaskGroups[0].Tasks[0].Vault = { Policies: ['x'] };
    j.Job.TaskGroups[0].Volumes = { data: { Type: 'csi', Source: 'd' } };
    j.Job.Multiregion = { Regions: [{ Name: 'west' }] };
    let err: unknown;
    try {
      parseAllocation(j);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnsupportedStanzaError);
    expect((err as UnsupportedStanzaError).unsupported).to.have.deep.members([
      { stanza: 'vault', path: `${T}.vault` },
      { stanza: 'volume', path: 'job.taskGroups[0].volumes' },
      { stanza: 'multiregion', path: 'job.multiregion' },
    ]);
    expect((err as Error).message).to.include(`vault is not supported by berth (${T}.vault)`);
    const warned: UnsupportedStanza[] = [];
    const { alloc, warnings } = checkAllocation(j, { unsupported: 'warn', onWarning: (w) => warned.push(w) });
    expect(warnings).to.have.length(3);
    expect(warned).to.deep.equal(warnings);
    expect(alloc.job.taskGroups[0]!.tasks[0]!.name).to.equal('redis');
    // Empty stanzas (Nomad's null / []) are not refusals.
    expect(() => parseAllocation(nomadJson())).to.not.throw();
  });

  it('maps the round-3 fields from Nomad JSON and keeps them on a camelCase round trip', () => {
    const j = nomadJson();
    j.DeploymentStatus = { Healthy: true, Timestamp: '2026-12-02T12:00:00Z', Canary: false };
    j.AllocatedResources = {
      Tasks: { redis: { Cpu: { CpuShares: 500, ReservedCores: [] }, Memory: { MemoryMB: 256, MemoryMaxMB: 0 } } },
      Shared: { DiskMB: 300, Ports: [{ Label: 'db', Value: 23456, To: 6379, HostIP: '10.0.0.1' }] },
    };
    j.Job.TaskGroups[0].Networks = [{ Mode: 'host', DynamicPorts: [{ Label: 'db', Value: 0, To: 6379, HostNetwork: 'default' }], ReservedPorts: null }];
    j.Job.TaskGroups[0].Services = [{ Name: 'redis', PortLabel: 'db', Provider: 'nomad', Checks: [{ Type: 'tcp', Interval: 10e9, Timeout: 2e9 }] }];
    const a = parseAllocation(j);
    expect(a.evalId).to.equal('0e4b7a52-3c7f-4b8e-8d1a-2f6a9b0c1d2e');
    expect(a.jobVersion).to.equal(0);
    expect(a.modifyTime).to.equal(1764676801000);
    expect(a.deploymentStatus).to.deep.equal({ healthy: true, timestamp: Date.parse('2026-12-02T12:00:00Z') });
    expect(a.allocatedResources).to.deep.equal({
      tasks: { redis: { cpu: 500, memoryMB: 256 } },
      shared: { diskMB: 300, ports: [{ label: 'db', value: 23456, to: 6379, hostIp: '10.0.0.1' }] },
    });
    const g = a.job.taskGroups[0]!;
    expect(g.networks).to.deep.equal([{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'db', to: 6379, hostNetwork: 'default' }] }]);
    expect(g.services![0]!.checks![0]).to.deep.include({ type: 'tcp', intervalMs: 10_000, timeoutMs: 2000 });
    expect(g.reschedulePolicy).to.deep.equal({
      attempts: 0,
      intervalMs: 0,
      delayMs: 30_000,
      delayFunction: 'exponential',
      maxDelayMs: 3_600_000,
      unlimited: true,
    });
    expect(g.migrate).to.deep.equal({ maxParallel: 1, healthCheck: 'checks', minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000 });
    expect(a.job.update).to.include({ maxParallel: 1, staggerMs: 30_000 });
    expect(parseAllocation(JSON.parse(JSON.stringify(a)))).to.deep.equal(a);
  });

  it("a job-level reschedule or migrate block is every group's default (Nomad's merge), not dropped", () => {
    const j = nomadJson();
    j.Job.Reschedule = { Attempts: 5, Interval: 3600e9 };
    j.Job.Migrate = { MaxParallel: 3 };
    delete j.Job.TaskGroups[0].ReschedulePolicy;
    j.Job.TaskGroups[0].Migrate = { HealthCheck: 'task_states' };
    const g = parseAllocation(j).job.taskGroups[0]!;
    expect(g.reschedulePolicy).to.deep.include({ attempts: 5, intervalMs: 3_600_000, delayFunction: 'exponential' });
    expect(g.migrate).to.deep.equal({ maxParallel: 3, healthCheck: 'task_states', minHealthyTimeMs: 10_000, healthyDeadlineMs: 300_000 });
  });

  it('jobId defaults to job.id, and one given must match it', () => {
    const a = makeAlloc([mockTask('web')]) as unknown as Record<string, unknown>;
    const id = (a.job as { id: string }).id;
    delete a.jobId;
    expect(parseAllocation(a).jobId).to.equal(id);
    expect(parseAllocation({ ...a, jobId: id }).jobId).to.equal(id);
    expect(issuesOf(() => parseAllocation({ ...a, jobId: 'other' }))).to.deep.equal([`jobId: must match job.id ${JSON.stringify(id)}`]);
  });
});
