/**
 * The two API shapes of an allocation, Nomad's `AllocationListStub` and `Allocation` (and of an
 * evaluation, `EvaluationStub` and `Evaluation`), are made from one field list each
 * (agent/http/encode.ts): each shape keeps its own fields in Nomad's order (the JSON key order
 * Nomad's Go client tests read), and a field both hold is filled the same in both.
 */
import { expect } from 'chai';
import type { Allocation } from '../../../index.ts';
import { apiAlloc, apiAllocStub, apiEval, apiEvalStub } from '../../../agent/http/encode.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { ApiJob, Evaluation, JobRecord, NodeRecord, ServerAlloc } from '../../../agent/state/types.ts';

/** Nomad's `AllocationListStub`, in its order. */
const STUB_KEYS =
  'ID EvalID Name Namespace NodeID NodeName JobID JobType JobVersion TaskGroup AllocatedResources DesiredStatus DesiredDescription ClientStatus ClientDescription TaskStates DeploymentStatus FollowupEvalID NextAllocation RescheduleTracker PreemptedAllocations PreemptedByAllocation CreateIndex ModifyIndex CreateTime ModifyTime'.split(
    ' ',
  );

/** Nomad's `Allocation` as berth fills it, in its order. */
const FULL_KEYS =
  'ID Namespace EvalID Name NodeID NodeName JobID Job TaskGroup Resources TaskResources AllocatedResources Services Metrics DesiredStatus DesiredDescription DesiredTransition ClientStatus ClientDescription TaskStates DeploymentID DeploymentStatus FollowupEvalID PreviousAllocation NextAllocation RescheduleTracker NetworkStatus PreemptedAllocations PreemptedByAllocation CreateIndex ModifyIndex AllocModifyIndex CreateTime ModifyTime'.split(
    ' ',
  );

/** Nomad's `Evaluation`, in its order. */
const EVAL_KEYS =
  'ID Priority Type TriggeredBy Namespace JobID JobModifyIndex NodeID NodeModifyIndex DeploymentID Status StatusDescription Wait WaitUntil NextEval PreviousEval BlockedEval RelatedEvals FailedTGAllocs PlanAnnotations ClassEligibility EscapedComputedClass QuotaLimitReached MissingNonNodeResources AnnotatePlan QueuedAllocations SnapshotIndex CreateIndex ModifyIndex CreateTime ModifyTime'.split(
    ' ',
  );

/** Nomad's `EvaluationStub`, in its order. */
const EVAL_STUB_KEYS =
  'ID Priority Type TriggeredBy Namespace JobID NodeID DeploymentID Status StatusDescription WaitUntil NextEval PreviousEval BlockedEval CreateIndex ModifyIndex CreateTime ModifyTime'.split(
    ' ',
  );

const alloc: Allocation = {
  id: 'a1',
  namespace: 'prod',
  nodeId: 'n1',
  jobId: 'web',
  job: {
    id: 'web',
    type: 'service',
    taskGroups: [
      {
        name: 'g',
        tasks: [
          { name: 'a', driver: 'mock_driver', config: {}, resources: { cpu: 200, memoryMB: 64 } },
          { name: 'b', driver: 'mock_driver', config: {}, resources: { cpu: 50, memoryMB: 32, memoryMaxMB: 128 } },
        ],
      },
    ],
  },
  taskGroup: 'g',
  desiredStatus: 'run',
  clientStatus: 'running',
  allocModifyIndex: 7,
  createTime: 1_000,
  modifyTime: 2_500,
  name: 'web.g[0]',
  evalId: 'e1',
  jobVersion: 1,
  deploymentId: 'd1',
  deploymentStatus: { healthy: true, timestamp: 3_000, canary: true },
  previousAllocation: 'a0',
  preemptedAllocations: ['v1'],
  desiredTransition: { migrate: true },
  rescheduleTracker: { events: [{ rescheduleTime: 500, prevAllocId: 'a0', prevNodeId: 'n0', delayMs: 30 }] },
};

const record = (version: number, name: string): JobRecord => ({
  id: 'web',
  namespace: 'prod',
  version,
  apiJob: { ID: 'web', Name: name, Version: version } as ApiJob,
  createIndex: 1,
  modifyIndex: 1,
  jobModifyIndex: 1,
  submitTime: 0,
  stop: false,
});

describe('agent: an allocation as the API serves it, stub and full, from one field list', () => {
  let state: AgentState;
  const s: ServerAlloc = { alloc, createIndex: 5, modifyIndex: 9, nextAllocation: 'a2', preemptedBy: 'p1' };

  beforeEach(() => {
    state = new AgentState(':memory:');
    state.node = { name: 'box', nodePool: 'default' } as NodeRecord;
    state.jobs.set('web', record(2, 'newest'));
    state.versions.set('web', [record(1, 'the one it runs'), record(2, 'newest')]);
  });
  afterEach(() => state.close());

  it("keeps each shape's own fields, in Nomad's order", () => {
    expect(Object.keys(apiAllocStub(s, state))).to.deep.equal(STUB_KEYS);
    expect(Object.keys(apiAlloc(s, state))).to.deep.equal(FULL_KEYS);
    expect(JSON.stringify(apiAllocStub(s, state)).startsWith('{"ID":"a1","EvalID":"e1","Name":"web.g[0]","Namespace":"prod"')).to.equal(true);
  });

  it('fills a field both shapes hold the same in both', () => {
    const stub = apiAllocStub(s, state);
    const full = apiAlloc(s, state);
    const shared = STUB_KEYS.filter((k) => FULL_KEYS.includes(k));
    expect(shared).to.have.length(24);
    for (const k of shared) expect(full[k], k).to.deep.equal(stub[k]);
    expect(stub).to.include({
      NodeName: 'box',
      NextAllocation: 'a2',
      PreemptedByAllocation: 'p1',
      CreateIndex: 5,
      ModifyIndex: 9,
      CreateTime: 1e9,
      ModifyTime: 2.5e9,
    });
  });

  it('gives the stub the job type and version, the full allocation the job of the version it runs and the legacy resources', () => {
    expect(apiAllocStub(s, state)).to.include({ JobType: 'service', JobVersion: 1 });
    const full = apiAlloc(s, state);
    expect((full.Job as { Name: string }).Name).to.equal('the one it runs');
    expect(full).to.include({ DeploymentID: 'd1', PreviousAllocation: 'a0', AllocModifyIndex: 7, Services: null, Metrics: null, NetworkStatus: null });
    expect(full.DesiredTransition).to.deep.equal({
      Migrate: true,
      Reschedule: null,
      ForceReschedule: null,
      NoShutdownDelay: null,
      MigrateDisablePlacement: null,
    });
    expect(full.Resources).to.include({ CPU: 250, MemoryMB: 96, MemoryMaxMB: 128, DiskMB: 300 });
    expect((full.TaskResources as Record<string, unknown>).b).to.include({ CPU: 50, MemoryMB: 32, MemoryMaxMB: 128, DiskMB: 0 });
  });

  it("falls back to the job's current version when the version it runs is no longer kept", () => {
    state.versions.set('web', [record(2, 'newest')]);
    expect((apiAlloc(s, state).Job as { Name: string }).Name).to.equal('newest');
  });

  it("does the same for an evaluation and its stub: Nomad's orders, the related evals as stubs, an evicted alloc as its stub", () => {
    state.allocs.set('a1', s);
    const e = {
      id: 'e1',
      priority: 50,
      type: 'service',
      triggeredBy: 'job-register',
      namespace: 'prod',
      jobId: 'web',
      status: 'complete',
      createIndex: 3,
      modifyIndex: 4,
    } as Evaluation;
    const evicting = {
      ...e,
      id: 'e2',
      plan: {
        placed: [],
        stopped: [],
        preempted: [
          { allocId: 'a1', by: 'a9' },
          { allocId: 'gone', by: 'a9' },
        ],
      },
    } as Evaluation;
    const full = apiEval(evicting, state, [e]);
    expect(Object.keys(full)).to.deep.equal(EVAL_KEYS);
    expect(Object.keys(apiEvalStub(e))).to.deep.equal(EVAL_STUB_KEYS);
    expect(full.RelatedEvals).to.deep.equal([apiEvalStub(e)]);
    const preempted = (full.PlanAnnotations as { PreemptedAllocs: Array<Record<string, unknown>> }).PreemptedAllocs;
    expect(preempted[0]).to.deep.equal({ ...apiAllocStub(s, state), PreemptedByAllocation: 'a9' });
    expect(preempted[1]).to.deep.equal({ ID: 'gone', PreemptedByAllocation: 'a9' });
    expect(apiEval(e)).to.include({ RelatedEvals: null, PlanAnnotations: null, JobModifyIndex: 0, NodeID: '', WaitUntil: '0001-01-01T00:00:00Z' });
  });
});
