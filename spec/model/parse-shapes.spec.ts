import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  checkAllocation,
  checkJob,
  InvalidAllocationError,
  JobspecError,
  jobToNomad,
  parseAllocation,
  parseJob,
  UnsupportedStanzaError,
  type UnsupportedStanza,
} from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const ID = '6f3c5a2e-8d1b-4c7e-9a0f-1b2c3d4e5f60';
const OTHER = '0e4b7a52-3c7f-4b8e-8d1a-2f6a9b0c1d2e';
const nomadJson = () => JSON.parse(readFileSync(new URL('../fixtures/nomad-alloc.json', import.meta.url), 'utf8'));
const berth = () => JSON.parse(JSON.stringify(makeAlloc([mockTask('t', { run_for: '1s' })], { id: ID })));

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

describe('parseAllocation: the allocation parts of Nomad JSON', () => {
  it("maps task states and their events: Go's zero values are unset, nanoseconds become ms", () => {
    const j = nomadJson();
    j.TaskStates = {
      redis: {
        State: 'dead',
        Failed: true,
        Restarts: 2,
        LastRestart: '2026-12-02T12:00:00Z',
        StartedAt: '0001-01-01T00:00:00Z',
        FinishedAt: 1.7e18,
        Events: [
          { Type: 'Terminated', Time: 1.7e18, Message: 'exit 1', DisplayMessage: 'Exit Code: 1', Details: { exit_code: '1' } },
          { Type: 'Received', Time: 0, Message: '' },
        ],
      },
      other: { State: 'pending' },
    };
    const a = parseAllocation(j);
    expect(a.taskStates).to.deep.equal({
      redis: {
        state: 'dead',
        failed: true,
        restarts: 2,
        lastRestart: Date.parse('2026-12-02T12:00:00Z'),
        finishedAt: 1.7e12,
        events: [
          { type: 'Terminated', time: 1.7e12, message: 'exit 1', displayMessage: 'Exit Code: 1', details: { exit_code: '1' } },
          { type: 'Received', time: 0, displayMessage: '', details: {} },
        ],
      },
      other: { state: 'pending', failed: false, restarts: 0, events: [] },
    });
  });

  it('a task state or event that is not an object is refused with its path', () => {
    const j = nomadJson();
    j.TaskStates = { redis: 'running', b: { State: 'running', Events: ['x'] } };
    expect((thrown(() => parseAllocation(j)) as InvalidAllocationError).issues).to.deep.equal([
      'taskStates.redis: must be an object',
      'taskStates.b.events[0]: must be an event with a type',
    ]);
  });

  it('maps allocated resources: shares, memory, reserved cores, ports (missing numbers are 0)', () => {
    const j = nomadJson();
    j.AllocatedResources = {
      Tasks: {
        redis: { Cpu: { CpuShares: 500, ReservedCores: [0, 1] }, Memory: { MemoryMB: 256, MemoryMaxMB: 512 } },
        bare: {},
        junk: 'x',
      },
      Shared: { Ports: [{ Label: 'db', Value: 23456 }] },
    };
    expect(parseAllocation(j).allocatedResources).to.deep.equal({
      tasks: { redis: { cpu: 500, memoryMB: 256, memoryMaxMB: 512, cores: [0, 1] }, bare: { cpu: 0, memoryMB: 0 } },
      shared: { diskMB: 0, ports: [{ label: 'db', value: 23456, to: 0, hostIp: '' }] },
    });
    j.AllocatedResources = { Tasks: 'x', Shared: { DiskMB: 10, Ports: ['x'] } };
    expect((thrown(() => parseAllocation(j)) as InvalidAllocationError).issues).to.deep.equal(['allocatedResources.shared.ports[0]: must be an object']);
    j.AllocatedResources = { Tasks: {}, Shared: { DiskMB: 10 } };
    expect(parseAllocation(j).allocatedResources).to.deep.equal({ tasks: {}, shared: { diskMB: 10, ports: [] } });
    j.AllocatedResources = 'x';
    expect(parseAllocation(j).allocatedResources).to.equal(undefined);
  });

  it('maps the reschedule tracker, the deployment status and the desired transition', () => {
    const j = nomadJson();
    j.RescheduleTracker = {
      Events: [
        { RescheduleTime: 1.7e18, PrevAllocID: OTHER, PrevNodeID: 'n1', Delay: 30e9 },
        { PrevAllocID: OTHER, PrevNodeID: 'n2' },
      ],
    };
    j.DeploymentStatus = { Healthy: null, Timestamp: '0001-01-01T00:00:00Z', Canary: true };
    j.DesiredTransition = { Migrate: true, Reschedule: null, ForceReschedule: false, NoShutdownDelay: true };
    const a = parseAllocation(j);
    expect(a.rescheduleTracker).to.deep.equal({
      events: [
        { rescheduleTime: 1.7e12, prevAllocId: OTHER, prevNodeId: 'n1', delayMs: 30_000 },
        { rescheduleTime: 0, prevAllocId: OTHER, prevNodeId: 'n2', delayMs: 0 },
      ],
    });
    expect(a.deploymentStatus).to.deep.equal({ canary: true });
    expect(a.desiredTransition).to.deep.equal({ migrate: true, forceReschedule: false, noShutdownDelay: true });
    j.RescheduleTracker = { Events: null };
    expect(parseAllocation(j).rescheduleTracker).to.deep.equal({ events: [] });
    // A delay that is not a number of ns is refused, not divided into a tiny number of ms.
    for (const Delay of [true, '5', [1]]) {
      j.RescheduleTracker = { Events: [{ PrevAllocID: OTHER, PrevNodeID: 'n', Delay }] };
      expect((thrown(() => parseAllocation(j)) as InvalidAllocationError).issues, JSON.stringify(Delay)).to.deep.equal([
        'rescheduleTracker.events[0].delayMs: must be a number',
      ]);
    }
  });

  it("takes Nomad's empty strings for unset, and the job's version as the alloc's", () => {
    const j = nomadJson();
    Object.assign(j, {
      Namespace: '',
      ClientDescription: '',
      MigrateToken: '',
      DesiredDescription: '',
      DeploymentID: '',
      FollowupEvalID: '',
      EvalID: '',
      Name: '',
      PreviousAllocation: '',
    });
    j.Job.Version = 7;
    j.Job.Namespace = '';
    const a = parseAllocation(j) as unknown as Record<string, unknown>;
    for (const k of ['clientDescription', 'migrateToken', 'desiredDescription', 'deploymentId', 'followupEvalId', 'evalId', 'name', 'previousAllocation'])
      expect(a, k).not.to.have.property(k);
    expect(a.namespace).to.equal('default');
    expect(a.jobVersion).to.equal(7);
    Object.assign(j, { Namespace: 'ns', ClientDescription: 'cd', MigrateToken: 'tok', DesiredDescription: 'dd', DeploymentID: 'dep', FollowupEvalID: 'fe' });
    const b = parseAllocation(j) as unknown as Record<string, unknown>;
    expect(b).to.deep.include({
      namespace: 'ns',
      clientDescription: 'cd',
      migrateToken: 'tok',
      desiredDescription: 'dd',
      deploymentId: 'dep',
      followupEvalId: 'fe',
    });
    // A job version that is not a number is the job's problem only.
    j.Job.Version = 'seven';
    expect((thrown(() => parseAllocation(j)) as InvalidAllocationError).issues).to.deep.equal(['job.version: must be an integer']);
  });

  it('an unknown top-level key gets a did-you-mean from the alloc keys, ignored ones are accepted', () => {
    const j = nomadJson();
    j.ClientStatuss = 'running';
    j.SignedIdentities = { redis: 'x' };
    j.NodePool = 'default';
    expect((thrown(() => parseAllocation(j)) as InvalidAllocationError).issues).to.deep.equal([
      'ClientStatuss: unknown field "ClientStatuss" (did you mean "ClientStatus"?)',
    ]);
  });

  it('is read as Nomad JSON by any of its top-level keys, and as berth JSON when it has a job', () => {
    for (const k of ['ID', 'Job', 'NodeID', 'TaskGroup', 'JobID']) {
      const issues = (thrown(() => parseAllocation({ [k]: ID })) as InvalidAllocationError).issues;
      expect(issues, k).to.include(k === 'Job' ? 'job: must be an object' : 'job: is required');
      expect(issues.join('\n'), k).not.to.match(/unknown field/);
    }
    // With a `job`, the keys are berth's: `ID` is then an unknown field.
    expect((thrown(() => parseAllocation({ ...berth(), ID })) as InvalidAllocationError).issues).to.deep.equal(['ID: unknown field "ID" (did you mean "id"?)']);
  });
});

describe("parseAllocation: berth's JSON as given", () => {
  it('takes a null field for absent, but reports a null inside a data map (env, config, meta)', () => {
    const a = berth();
    a.clientDescription = null;
    a.job.taskGroups[0].meta = null;
    a.job.taskGroups[0].tasks[0].user = null;
    expect(parseAllocation(a).job.taskGroups[0]!.tasks[0]).not.to.have.property('user');
    a.job.taskGroups[0].tasks[0].env = { A: null };
    expect((thrown(() => parseAllocation(a)) as InvalidAllocationError).issues).to.deep.equal(['job.taskGroups[0].tasks[0].env.A: must be a string']);
  });

  it('copies what it keeps: changing the input afterwards changes nothing parsed', () => {
    const a = berth();
    a.job.taskGroups[0].tasks[0].config = { run_for: '1s', stdout_string: 'x', exec_command: [{ run_for: '1s' }] };
    a.job.taskGroups[0].tasks[0].env = { A: 'b' };
    a.job.datacenters = ['dc1'];
    const parsed = parseAllocation(a);
    a.job.taskGroups[0].tasks[0].config.exec_command[0].run_for = '9s';
    a.job.taskGroups[0].tasks[0].config.exec_command.push({});
    a.job.taskGroups[0].tasks[0].config.stdout_string = 'changed';
    a.job.taskGroups[0].tasks[0].env.A = 'changed';
    a.job.datacenters.push('dc2');
    const t = parsed.job.taskGroups[0]!.tasks[0]!;
    expect(t.config).to.deep.equal({ run_for: '1s', stdout_string: 'x', exec_command: [{ run_for: '1s' }] });
    expect(t.env).to.deep.equal({ A: 'b' });
    expect(parsed.job.datacenters).to.deep.equal(['dc1']);
  });

  it('normalises task states: typed exit fields only, zero times left out, events completed', () => {
    const a = berth();
    a.taskStates = {
      t: {
        state: 'dead',
        failed: true,
        restarts: 1,
        startedAt: 0,
        finishedAt: 5,
        exitCode: 0,
        signal: 9,
        oomKilled: false,
        events: [{ type: 'Started', time: 3, message: '', displayMessage: 'Task started', details: { a: 'b' } }, { type: 'Killed' }],
      },
      u: {},
    };
    expect(parseAllocation(a).taskStates).to.deep.equal({
      t: {
        state: 'dead',
        failed: true,
        restarts: 1,
        finishedAt: 5,
        exitCode: 0,
        signal: 9,
        oomKilled: false,
        events: [
          { type: 'Started', time: 3, displayMessage: 'Task started', details: { a: 'b' } },
          { type: 'Killed', time: 0, displayMessage: '', details: {} },
        ],
      },
      u: { state: 'pending', failed: false, restarts: 0, events: [] },
    });
    a.taskStates = { t: { events: [{ type: 'Started', message: 'hi' }] } };
    expect(parseAllocation(a).taskStates!.t!.events[0]).to.deep.equal({ type: 'Started', time: 0, message: 'hi', displayMessage: '', details: {} });
  });

  it('drops repeated preempted allocations, an empty list and an empty desired transition', () => {
    const a = berth();
    a.preemptedAllocations = [OTHER, OTHER];
    a.desiredTransition = {};
    const p = parseAllocation(a);
    expect(p.preemptedAllocations).to.deep.equal([OTHER]);
    expect(p).not.to.have.property('desiredTransition');
    expect(parseAllocation(berth())).not.to.have.property('preemptedAllocations');
    a.preemptedAllocations = [];
    a.desiredTransition = { migrate: true };
    const q = parseAllocation(a);
    expect(q).not.to.have.property('preemptedAllocations');
    expect(q.desiredTransition).to.deep.equal({ migrate: true });
  });

  it('refuses what is not an object, or not plain JSON, before anything else', () => {
    for (const v of [null, 'x', 1, [berth()]])
      expect((thrown(() => parseAllocation(v)) as InvalidAllocationError).issues).to.deep.equal(['(root): must be an object']);
    const a = berth();
    a.job.meta = { when: new Date(0) };
    a.taskGroup = 5;
    expect((thrown(() => parseAllocation(a)) as InvalidAllocationError).issues).to.deep.equal(['job.meta.when: must be a JSON value (got a Date)']);
  });
});

describe('parseAllocation options: the drivers a client has, its cores, warnings', () => {
  const two = () => {
    const a = berth();
    a.job.taskGroups[0].tasks = [
      { name: 'a', driver: 'mock_driver', config: {} },
      { name: 'b', driver: 'raw_exec', config: { command: '/bin/true' } },
      { name: 'c', driver: 'podman', config: {} },
    ];
    return a;
  };

  it('a driver the client does not have is named with the ones it has (a refused driver is not named twice)', () => {
    const err = thrown(() => parseAllocation(two(), { drivers: ['raw_exec', 'exec'] })) as UnsupportedStanzaError;
    expect(err).to.be.instanceOf(UnsupportedStanzaError);
    expect(err.issues).to.deep.equal([
      'driver "podman" is not supported by berth (job.taskGroups[0].tasks[2].driver)',
      'job.taskGroups[0].tasks[0].driver: unknown driver "mock_driver" (have exec, raw_exec)',
    ]);
    const ok = two();
    ok.job.taskGroups[0].tasks.pop();
    expect(() => parseAllocation(ok, { drivers: ['mock_driver', 'raw_exec'] })).not.to.throw();
    ok.job.taskGroups[0].tasks[0].driver = '';
    expect((thrown(() => parseAllocation(ok, { drivers: ['raw_exec'] })) as InvalidAllocationError).issues).to.deep.equal([
      'job.taskGroups[0].tasks[0].driver: must not be empty',
    ]);
    // A driver of the wrong type, or none, is the schema's to name: no "unknown driver" line as well.
    for (const [driver, issue] of [
      [5, 'must be a string'],
      [undefined, 'is required'],
    ] as const) {
      ok.job.taskGroups[0].tasks[0].driver = driver;
      expect((thrown(() => parseAllocation(ok, { drivers: ['raw_exec'] })) as InvalidAllocationError).issues).to.deep.equal([
        `job.taskGroups[0].tasks[0].driver: ${issue}`,
      ]);
    }
  });

  it("checks the drivers and cores of the alloc's own group only", () => {
    const a = berth();
    a.job.taskGroups.push({ name: 'db', tasks: [{ name: 'x', driver: 'qemu2', config: {}, resources: { cores: 64 } }] });
    expect(() => parseAllocation(a, { drivers: ['mock_driver'], nodeCores: 1 })).not.to.throw();
    a.taskGroup = 'db';
    expect((thrown(() => parseAllocation(a, { drivers: ['mock_driver'], nodeCores: 1 })) as InvalidAllocationError).issues).to.deep.equal([
      'job.taskGroups[1].tasks[0].driver: unknown driver "qemu2" (have mock_driver)',
      "job.taskGroups[1].tasks[0].resources.cores: the group's tasks reserve 64 cores up to here; this node has 1",
    ]);
  });

  it('with the group not in the job, every refusal is reported and the driver and core checks are left out', () => {
    const a = berth();
    a.taskGroup = 'db';
    a.job.taskGroups[0].volumes = { v: {} };
    a.job.taskGroups[0].tasks[0].driver = 'podman';
    const err = thrown(() => parseAllocation(a, { drivers: ['raw_exec'], nodeCores: 1 })) as UnsupportedStanzaError;
    expect(err).to.be.instanceOf(UnsupportedStanzaError);
    expect(err.unsupported).to.deep.equal([
      { stanza: 'driver "podman"', path: 'job.taskGroups[0].tasks[0].driver' },
      { stanza: 'volume', path: 'job.taskGroups[0].volumes' },
    ]);
    expect(err.issues.slice(2)).to.deep.equal(['taskGroup: failed to lookup task group "db"']);
  });

  it("another group's container driver is not this alloc's refusal", () => {
    const a = berth();
    a.job.taskGroups.push({ name: 'db', tasks: [{ name: 'x', driver: 'podman', config: {} }] });
    expect(() => parseAllocation(a)).not.to.throw();
  });

  it('counts reserved cores task by task; tasks without cores reserve none', () => {
    const a = berth();
    a.job.taskGroups[0].tasks = [
      { name: 'a', driver: 'mock_driver', config: {}, resources: { cores: 2 } },
      { name: 'b', driver: 'mock_driver', config: {} },
      { name: 'c', driver: 'mock_driver', config: {}, resources: { cpu: 100 } },
      { name: 'd', driver: 'mock_driver', config: {}, resources: { cores: 0 } },
    ];
    expect(() => parseAllocation(a, { nodeCores: 2 })).not.to.throw();
    expect((thrown(() => parseAllocation(a, { nodeCores: 1 })) as InvalidAllocationError).issues).to.deep.equal([
      "job.taskGroups[0].tasks[0].resources.cores: the group's tasks reserve 2 cores up to here; this node has 1",
    ]);
    // A task without cores before one with them.
    a.job.taskGroups[0].tasks.reverse();
    expect((thrown(() => parseAllocation(a, { nodeCores: 1 })) as InvalidAllocationError).issues).to.deep.equal([
      "job.taskGroups[0].tasks[3].resources.cores: the group's tasks reserve 2 cores up to here; this node has 1",
    ]);
  });

  it('in warn mode the refused stanzas are returned and reported, without a callback too', () => {
    const a = berth();
    a.job.taskGroups[0].tasks[0].vault = { policies: ['x'] };
    a.job.taskGroups[0].volumes = { v: {} };
    const want: UnsupportedStanza[] = [
      { stanza: 'volume', path: 'job.taskGroups[0].volumes' },
      { stanza: 'vault', path: 'job.taskGroups[0].tasks[0].vault' },
    ];
    expect(checkAllocation(a, { unsupported: 'warn' }).warnings).to.deep.equal(want);
    expect(checkAllocation(berth()).warnings).to.deep.equal([]);
    expect(checkAllocation(berth(), { unsupported: 'warn' }).warnings).to.deep.equal([]);
  });
});

describe('parseJob / checkJob / jobToNomad', () => {
  const job = () => berth().job;

  it("parses berth's job JSON and Nomad's, to the same job, and back to Nomad's", () => {
    const fromBerth = parseJob(job());
    expect(fromBerth.taskGroups[0]!.tasks[0]!.name).to.equal('t');
    const nomad = jobToNomad(fromBerth);
    expect(nomad.ID).to.equal('example');
    expect((nomad.TaskGroups as Array<Record<string, unknown>>)[0]!.Name).to.equal('web');
    expect(parseJob(nomad)).to.deep.equal(fromBerth);
    expect(parseJob({ ID: 'only-an-id', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver' }] }] }).id).to.equal('only-an-id');
    const nomadJob = nomadJson().Job;
    delete nomadJob.TaskGroups;
    expect((thrown(() => parseJob(nomadJob)) as JobspecError).issues).to.deep.equal(['job.taskGroups: is required']);
  });

  it("tells Nomad's job JSON (ID or TaskGroups) from berth's (taskGroups), and reports Nomad's unknown keys", () => {
    expect((thrown(() => parseJob({ id: 'x' })) as JobspecError).issues).to.deep.equal(['job.taskGroups: is required']);
    const groups = [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver' }] }];
    expect((thrown(() => parseJob({ TaskGroups: groups })) as JobspecError).issues).to.deep.equal(['job.id: is required']);
    const e = thrown(() => parseJob({ ID: 'x', Nme: 'y', TaskGroups: groups })) as JobspecError;
    expect(e.issues).to.deep.equal(['job.Nme: unknown field "Nme" (did you mean "Name"?)']);
    expect(e.path).to.equal('job.Nme');
  });

  it('one problem is the message; several are listed under a count; the first path is kept', () => {
    const one = job();
    one.priority = 0;
    const e1 = thrown(() => parseJob(one)) as JobspecError;
    expect(e1).to.be.instanceOf(JobspecError);
    expect(e1.message).to.equal('job.priority: job priority must be between [1, 100]; got 0');
    expect(e1.path).to.equal('job.priority');
    expect(e1.issues).to.deep.equal([e1.message]);
    const two = job();
    two.type = 'cron';
    two.taskGroups[0].tasks[0].vault = { policies: ['x'] };
    const e2 = thrown(() => parseJob(two)) as JobspecError;
    expect(e2.message).to.equal(
      'invalid job (2 problems):\n  vault is not supported by berth (job.taskGroups[0].tasks[0].vault)\n  job.type: must be one of "service", "batch", "system", "sysbatch"',
    );
    expect(e2.path).to.equal('job.taskGroups[0].tasks[0].vault');
    expect(e2.unsupported).to.deep.equal([{ stanza: 'vault', path: 'job.taskGroups[0].tasks[0].vault' }]);
  });

  it("a berth job (taskGroups) that also has Nomad's ID key is read as berth's, the ID refused by name", () => {
    const j = { ...job(), ID: 'x' };
    const e = thrown(() => parseJob(j)) as JobspecError;
    expect(e.issues).to.have.length(1);
    expect(e.issues![0]).to.match(/^job\.ID: unknown field "ID"/);
  });

  it('refuses what is not an object or not plain JSON, naming the job', () => {
    const e = thrown(() => parseJob('job')) as JobspecError;
    expect([e.message, e.path]).to.deep.equal(['job: must be an object', 'job']);
    const bad = job();
    bad.meta = { n: NaN, i: Infinity };
    const e2 = thrown(() => parseJob(bad)) as JobspecError;
    expect(e2.message).to.equal('invalid job: meta.n: must be a JSON value (got NaN); meta.i: must be a JSON value (got Infinity)');
    expect(e2.issues).to.deep.equal(['meta.n: must be a JSON value (got NaN)', 'meta.i: must be a JSON value (got Infinity)']);
  });

  it('a field set to undefined by a JavaScript caller is absent, like null: a refused stanza so set is not refused', () => {
    const j = job();
    j.constraints = undefined;
    j.taskGroups[0].tasks[0].affinities = undefined;
    const r = checkJob(j);
    expect(r.warnings).to.deep.equal([]);
    expect(r.job).not.to.have.property('constraints');
    expect(parseJob(j).taskGroups[0]!.tasks[0]).not.to.have.property('affinities');
  });

  it('in warn mode leaves a stanza out with a warning, but still refuses a container driver', () => {
    const j = job();
    j.multiregion = { regions: [{ name: 'west' }] };
    const warned: UnsupportedStanza[] = [];
    const r = checkJob(j, { unsupported: 'warn', onWarning: (w) => warned.push(w) });
    expect(r.warnings).to.deep.equal([{ stanza: 'multiregion', path: 'job.multiregion' }]);
    expect(warned).to.deep.equal(r.warnings);
    expect(r.job).not.to.have.property('multiregion');
    expect(checkJob(j, { unsupported: 'warn' }).warnings).to.have.length(1);
    expect(checkJob(job()).warnings).to.deep.equal([]);
    j.taskGroups[0].tasks[0].driver = 'podman';
    const e = thrown(() => checkJob(j, { unsupported: 'warn' })) as JobspecError;
    expect(e.message).to.equal('driver "podman" is not supported by berth (job.taskGroups[0].tasks[0].driver)');
  });
});
