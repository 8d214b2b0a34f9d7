/**
 * `/v1/jobs`, `/v1/jobs/parse`, `/v1/job/:id[/...]`: jobs, their versions, allocations,
 * evaluations, summary, scale, deployments and plan.
 * @module
 */
import type { AgentCore } from '../core.ts';
import { InvalidJobError, InvalidPeriodicError, JobNotFoundError } from '../errors.ts';
import { ApiError, httpAnswer } from './errors.ts';
import { planReply } from './plan-reply.ts';
import type { ApiJob } from '../state/types.ts';
import { blocking } from './blocking.ts';
import { completeApiJob } from '../jobspec/complete.ts';
import { apiAllocStub, apiDeployment, apiEval, apiJob, apiJobStub, apiJobSummary, jobStable, jobSummary } from './encode.ts';
import type { Req, Router } from './router.ts';
import type { z } from 'zod';
import { decodeBody, dispatchBody, parseBody, parsed, planBody, registerBody, scaleBody, validateBody } from './bodies.ts';
import { errorText } from '../../index.ts';
import { changedValueWarnings } from '../jobs/changed-values.ts';
import { jobDiff } from '../jobs/diff/job.ts';
import type { JobDiff } from '../jobs/diff/types.ts';

/** Nomad's 400 for a body naming another job than the path. */
const PAYLOAD_JOB_MISMATCH = 'job ID in payload did not match URL';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `Job` of a register or plan body, through the body's schema, with Nomad's 400s for a missing
 * job or ID, and for an ID that is not the path's.
 */
async function jobFromBody<B extends { Job: Obj }>(req: Req, schema: z.ZodType<B>, mismatch: string): Promise<{ job: ApiJob; body: B }> {
  const raw = await req.json();
  if (!isObj(raw) || raw.Job === undefined || raw.Job === null) throw new ApiError(400, 'Job must be specified');
  const body = parsed(schema, raw) as B;
  const job = body.Job;
  if (typeof job.ID !== 'string' || job.ID === '') throw new ApiError(400, 'Job ID must be specified');
  if (req.params.id !== undefined && req.params.id !== job.ID) throw new ApiError(400, mismatch);
  return { job: job as unknown as ApiJob, body };
}

const registerReply = (r: { evalId: string; evalCreateIndex: number; jobModifyIndex: number; warnings: string; index: number }) => ({
  body: {
    EvalID: r.evalId,
    EvalCreateIndex: r.evalCreateIndex,
    JobModifyIndex: r.jobModifyIndex,
    Warnings: r.warnings,
    Index: r.index,
    LastContact: 0,
    KnownLeader: true,
  },
  index: r.index,
});

/** Adds the job routes. */
export function jobRoutes(r: Router, core: AgentCore): void {
  const { state } = core;
  const job = (id: string) => {
    const j = state.jobs.get(id);
    if (!j) throw new JobNotFoundError(id);
    return j;
  };

  r.on(
    'GET',
    '/v1/jobs',
    blocking(state, ['jobs', 'allocs', 'evals'], (req) => {
      const prefix = req.query.get('prefix') ?? '';
      return [...state.jobs.values()]
        .filter((j) => j.id.startsWith(prefix))
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((j) => apiJobStub(j, state));
    }),
  );
  const register = async (req: Req) => {
    const { job: apiJobIn, body } = await jobFromBody(req, registerBody, 'Job ID does not match name');
    const canonical = await canonicalJob(core, apiJobIn);
    // What the job as submitted sets that berth changes or ignores is said in the response's warnings.
    const warnings = changedValueWarnings(apiJobIn);
    return registerReply(core.register(canonical, { enforceIndex: body.EnforceIndex === true, jobModifyIndex: Number(body.JobModifyIndex ?? 0), warnings }));
  };
  r.on('POST', '/v1/jobs', register);
  // Nomad's `Job.Validate`: a job it would refuse is a 200 whose `ValidationErrors` say why.
  const validate = async (req: Req) => {
    const { job: apiJobIn } = await jobFromBody(req, validateBody, 'Job ID does not match');
    try {
      const warnings = core.validate(await canonicalJob(core, apiJobIn), changedValueWarnings(apiJobIn));
      return { body: { DriverConfigValidated: true, ValidationErrors: null, Error: '', Warnings: warnings } };
    } catch (e) {
      // What register would refuse with a 400 (the job as berth decodes it, its periodic block).
      const refusal = e instanceof ApiError || e instanceof InvalidJobError || e instanceof InvalidPeriodicError ? httpAnswer(e) : undefined;
      if (refusal?.status !== 400) throw e;
      return { body: { DriverConfigValidated: true, ValidationErrors: refusal.text.split('\n'), Error: refusal.text, Warnings: '' } };
    }
  };
  r.on('PUT', '/v1/validate/job', validate);
  r.on('POST', '/v1/validate/job', validate);
  r.on('POST', '/v1/jobs/parse', async (req) => {
    const raw = await req.json();
    if (!isObj(raw) || raw.JobHCL === undefined || raw.JobHCL === '') throw new ApiError(400, 'Job spec is empty');
    const body = parsed(parseBody, raw);
    // As Nomad: Variables is var-file content (HCL `name = value` lines, or JSON); defaults only when asked.
    const text = body.Variables ?? '';
    const varFiles = text.trim() ? [{ filename: text.trimStart().startsWith('{') ? 'Variables.json' : 'Variables.hcl', text }] : [];
    try {
      // Nomad's answer is its API job marshalled: every field, unset ones zero.
      return { body: completeApiJob(await core.jobspec.parse(body.JobHCL, { varFiles, canonicalize: body.Canonicalize === true })) };
    } catch (e) {
      throw new ApiError(400, errorText(e));
    }
  });
  r.on(
    'GET',
    '/v1/job/:id',
    blocking(state, ['jobs', 'allocs', 'deployments'], (req) => apiJob(job(req.params.id!), state)),
  );
  r.on('POST', '/v1/job/:id', register);
  r.on('DELETE', '/v1/job/:id', (req) => {
    const out = core.deregister(req.params.id!, req.query.get('purge') === 'true');
    return {
      body: { EvalID: out.evalId, EvalCreateIndex: out.index, JobModifyIndex: out.jobModifyIndex, Index: out.index, LastContact: 0, KnownLeader: true },
      index: out.index,
    };
  });
  r.on(
    'GET',
    '/v1/job/:id/allocations',
    blocking(state, ['allocs'], (req) =>
      [...state.allocs.values()]
        .filter((s) => s.alloc.jobId === req.params.id)
        .sort((a, b) => a.createIndex - b.createIndex)
        .map((s) => apiAllocStub(s, state)),
    ),
  );
  r.on(
    'GET',
    '/v1/job/:id/evaluations',
    blocking(state, ['evals', 'allocs'], (req) =>
      [...state.evals.values()]
        .filter((e) => e.jobId === req.params.id)
        .sort((a, b) => b.createIndex - a.createIndex)
        .map((e) => apiEval(e, state)),
    ),
  );
  r.on(
    'GET',
    '/v1/job/:id/summary',
    blocking(state, ['jobs', 'allocs', 'evals'], (req) => apiJobSummary(job(req.params.id!), state)),
  );
  r.on(
    'GET',
    '/v1/job/:id/versions',
    blocking(state, ['jobs', 'deployments'], (req) => {
      job(req.params.id!);
      const versions = [...(state.versions.get(req.params.id!) ?? [])].reverse().map((v) => completeApiJob({ ...v.apiJob, Stable: jobStable(v, state) }));
      return { Versions: versions, Diffs: versionDiffs(versions, req.query) };
    }),
  );
  r.on(
    'GET',
    '/v1/job/:id/deployments',
    blocking(state, ['deployments'], (req) =>
      [...state.deployments.values()]
        .filter((d) => d.jobId === req.params.id)
        .sort((a, b) => b.createIndex - a.createIndex)
        .map(apiDeployment),
    ),
  );
  r.on(
    'GET',
    '/v1/job/:id/deployment',
    blocking(state, ['deployments'], (req) => {
      const d = [...state.deployments.values()].filter((x) => x.jobId === req.params.id).sort((a, b) => b.createIndex - a.createIndex)[0];
      return d ? apiDeployment(d) : null;
    }),
  );
  r.on(
    'GET',
    '/v1/job/:id/scale',
    blocking(state, ['jobs', 'allocs', 'evals'], (req) => {
      const j = job(req.params.id!);
      const summary = jobSummary(j.id, state);
      const groups = (j.apiJob.TaskGroups as Array<{ Name: string; Count: number }>) ?? [];
      return {
        JobID: j.id,
        Namespace: j.namespace,
        JobCreateIndex: j.createIndex,
        JobModifyIndex: j.jobModifyIndex,
        JobStopped: j.stop,
        TaskGroups: Object.fromEntries(
          groups.map((g) => [
            g.Name,
            {
              Desired: g.Count,
              Placed: (summary[g.Name]?.Running ?? 0) + (summary[g.Name]?.Starting ?? 0),
              Running: summary[g.Name]?.Running ?? 0,
              Healthy: 0,
              Unhealthy: 0,
              Events: null,
            },
          ]),
        ),
      };
    }),
  );
  r.on('POST', '/v1/job/:id/scale', async (req) => {
    const raw = await req.json();
    if (isObj(raw) && typeof raw.Count === 'number' && raw.Count < 0) throw new ApiError(400, "scaling action count can't be negative");
    const body = await decodeBody(req, scaleBody, { given: raw });
    if (body.Target.Job !== undefined && body.Target.Job !== req.params.id) throw new ApiError(400, PAYLOAD_JOB_MISMATCH);
    if (typeof body.Target.Group !== 'string' || body.Target.Group === '') throw new ApiError(400, 'missing task group name for scaling action');
    return registerReply(core.scale(req.params.id!, body.Target.Group, body.Count, Number(body.JobModifyIndex ?? 0)));
  });
  r.on('POST', '/v1/job/:id/dispatch', async (req) => {
    const body = await decodeBody(req, dispatchBody, { emptyIs: {} });
    if (body.JobID !== undefined && body.JobID !== '' && body.JobID !== req.params.id) throw new ApiError(400, PAYLOAD_JOB_MISMATCH);
    // The Go client sends the token as ?idempotency_token= (WriteOptions); a body may carry it too.
    const token = req.query.get('idempotency_token') || body.IdempotencyToken || undefined;
    const r = core.dispatch(req.params.id!, {
      ...(body.Payload ? { payload: Buffer.from(body.Payload, 'base64') } : {}),
      ...(body.Meta ? { meta: body.Meta } : {}),
      ...(token ? { idempotencyToken: token } : {}),
    });
    return {
      body: {
        DispatchedJobID: r.dispatchedJobId,
        EvalID: r.evalId,
        EvalCreateIndex: r.evalCreateIndex,
        JobCreateIndex: r.jobCreateIndex,
        // Nomad's WriteMeta: the index only.
        Index: r.index,
      },
      index: r.index,
    };
  });
  r.on('POST', '/v1/job/:id/periodic/force', (req) => {
    const f = core.forcePeriodic(req.params.id!);
    return { body: { EvalID: f.evalId, EvalCreateIndex: f.evalCreateIndex, Index: f.index }, index: f.index };
  });
  r.on('POST', '/v1/job/:id/evaluate', (req) => {
    const r = core.evaluate(req.params.id!);
    return {
      body: { EvalID: r.evalId, EvalCreateIndex: r.evalCreateIndex, JobModifyIndex: r.jobModifyIndex, Index: r.index, LastContact: 0, KnownLeader: true },
    };
  });
  r.on('POST', '/v1/job/:id/plan', async (req) => {
    const { job: apiJobIn, body } = await jobFromBody(req, planBody, 'Job ID does not match');
    // Nomad's plan diff is always contextual; berth takes `Contextual` or `?contextual=false` to list changes only.
    const contextual = body.Contextual ?? req.query.get('contextual') !== 'false';
    return { body: planReply(core.planJob(await canonicalJob(core, apiJobIn)), { diff: body.Diff === true, contextual }) };
  });
}

/**
 * `?diffs=true`: each version's contextual diff against the one before it (the oldest has none),
 * or, with `diff_version=N`, against version N, as Nomad's `Job.GetJobVersions` computes them.
 */
function versionDiffs(versions: ApiJob[], query: URLSearchParams): JobDiff[] | null {
  if (query.get('diffs') !== 'true' || versions.length === 0) return null;
  const asked = query.get('diff_version');
  if (asked === null) return versions.slice(0, -1).map((neu, i) => jobDiff(versions[i + 1], neu, true));
  const against = versions.find((v) => String(v.Version) === asked);
  if (!against) throw new ApiError(500, `version ${asked} not found`);
  return versions.map((neu) => jobDiff(against, neu, true));
}

/** A job as submitted over the API, with Nomad's defaults for what it leaves out. */
async function canonicalJob(core: AgentCore, job: ApiJob): Promise<ApiJob> {
  try {
    return await core.jobspec.parse(JSON.stringify(job), { filename: `job ${JSON.stringify(job.ID)}` });
  } catch (e) {
    throw new ApiError(400, errorText(e));
  }
}
