/**
 * Whether two API jobs have the same spec: a register that changes nothing keeps the version, and
 * an auto-revert to a spec the job already has is a no-op (Nomad's `Job.SpecChanged`).
 * @module
 */
import { completeApiJob } from '../jobspec/complete.ts';
import type { ApiJob } from '../state/types.ts';

/** Same job spec, ignoring the fields the server sets (and whether unset fields were written out). */
export function sameSpec(a: ApiJob, b: ApiJob): boolean {
  const strip = (j: ApiJob) => {
    const { Version: _v, Stop: _s, Status: _st, SubmitTime: _t, CreateIndex: _c, ModifyIndex: _m, JobModifyIndex: _j, Stable: _b, ...rest } = completeApiJob(j);
    return JSON.stringify(rest);
  };
  return strip(a) === strip(b);
}
