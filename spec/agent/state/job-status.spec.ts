/**
 * A job's status as Nomad derives it (`structs.Job.Status` via the state store's
 * `getJobStatus`): running while an alloc that should run is not terminal, dead once stopped or,
 * for batch work, once its allocs are done; a periodic or parameterized parent runs while
 * registered; otherwise pending.
 */
import { expect } from 'chai';
import { jobStatus } from '../../../agent/state/job-status.ts';
import type { JobRecord, ServerAlloc } from '../../../agent/state/types.ts';

const job = (over: Partial<JobRecord> = {}, api: Record<string, unknown> = {}): JobRecord =>
  ({ id: 'web', stop: false, ...over, apiJob: { ID: 'web', Type: 'service', ...api } }) as unknown as JobRecord;
const alloc = (id: string, desiredStatus: string, clientStatus: string, jobId = 'web'): [string, ServerAlloc] => [
  id,
  { alloc: { id, jobId, desiredStatus, clientStatus } } as unknown as ServerAlloc,
];
const of = (...allocs: Array<[string, ServerAlloc]>) => ({ allocs: new Map(allocs) });

describe('agent state: job status', () => {
  const cases: Array<[string, JobRecord, ReturnType<typeof of>, string]> = [
    ['a service job with no allocs', job(), of(), 'pending'],
    ['an alloc to run, pending on the client', job(), of(alloc('a', 'run', 'pending')), 'running'],
    ['an alloc to run, running', job(), of(alloc('a', 'run', 'running')), 'running'],
    ['a stopped job with an alloc still running', job({ stop: true }), of(alloc('a', 'run', 'running')), 'running'],
    ['a stopped job whose allocs are stopping', job({ stop: true }), of(alloc('a', 'stop', 'running')), 'dead'],
    ['a stopped job with no allocs', job({ stop: true }), of(), 'dead'],
    ['a service job whose only alloc failed', job(), of(alloc('a', 'run', 'failed')), 'pending'],
    ['a service job whose alloc completed', job(), of(alloc('a', 'run', 'complete')), 'pending'],
    ['a service job whose alloc was lost', job(), of(alloc('a', 'run', 'lost')), 'pending'],
    ['another job running', job(), of(alloc('a', 'run', 'running', 'other')), 'pending'],
    ['a batch job with no allocs yet', job({}, { Type: 'batch' }), of(), 'pending'],
    ['a batch job whose alloc completed', job({}, { Type: 'batch' }), of(alloc('a', 'run', 'complete')), 'dead'],
    ['a sysbatch job whose alloc failed', job({}, { Type: 'sysbatch' }), of(alloc('a', 'run', 'failed')), 'dead'],
    ['a batch job with only another job’s allocs', job({}, { Type: 'batch' }), of(alloc('a', 'run', 'complete', 'other')), 'pending'],
    ['a periodic parent', job({}, { Type: 'batch', Periodic: { Enabled: true } }), of(alloc('a', 'run', 'complete')), 'running'],
    ['a parameterized parent', job({}, { Type: 'batch', ParameterizedJob: {} }), of(), 'running'],
    ['a dispatched child, its allocs done', job({}, { Type: 'batch', ParameterizedJob: {}, ParentID: 'p' }), of(alloc('a', 'run', 'complete')), 'dead'],
    ['a periodic child not yet placed', job({}, { Type: 'batch', Periodic: { Enabled: true }, ParentID: 'p' }), of(), 'pending'],
    ['a stopped periodic parent', job({ stop: true }, { Type: 'batch', Periodic: { Enabled: true } }), of(), 'dead'],
  ];
  for (const [what, j, state, want] of cases) it(`${what}: ${want}`, () => expect(jobStatus(j, state)).to.equal(want));
});
