/**
 * The agent's one seam to the jobspec: job file text → Nomad API job, and Nomad API job →
 * berth's {@link Job}. berth's full parser (`parseJobspec`, `jobFromApi`) plugs in here; until
 * it does, a small reading of HCL2/JSON job files covers job, group and task with their common
 * keys, so the agent and its specs run end to end.
 * @module
 */
import { parse as parseHcl } from '@cdktf/hcl2json';
import { randomUUID } from 'node:crypto';
import { BerthError, parseAllocation, parseGoDuration, type Job } from '../../index.ts';
import type { ApiJob } from '../state/types.ts';

/** A job file or an API job the agent cannot read; the message names the file or field. */
export class JobFileError extends BerthError {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Options of {@link parseJobFile}. */
export interface ParseJobFileOptions {
  filename?: string;
  /** `-var k=v` values, substituted for `${var.k}` / `var.k` references. */
  vars?: Record<string, string>;
}

/** A job file (HCL2, or JSON either `{Job: ...}` or the bare API job) → the Nomad API job. */
export async function parseJobFile(text: string, opts: ParseJobFileOptions = {}): Promise<ApiJob> {
  const filename = opts.filename ?? 'job.nomad.hcl';
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new JobFileError(`${filename}: ${(e as Error).message}`);
    }
    const job = isObj(doc) && isObj(doc.Job) ? doc.Job : doc;
    return canonicalize(job, filename);
  }
  let doc: unknown;
  try {
    doc = await parseHcl(filename, text);
  } catch (e) {
    throw new JobFileError(`${filename}: ${(e as Error).message.replace(/^parse config: /, '')}`);
  }
  doc = substituteVars(doc, opts.vars ?? {}, filename);
  const jobs = isObj(doc) && isObj(doc.job) ? Object.entries(doc.job) : [];
  if (jobs.length !== 1) throw new JobFileError(`${filename}: expected exactly one job block, found ${jobs.length}`);
  const [name, blocks] = jobs[0]!;
  return canonicalize(hclJob(name, one(blocks)), filename);
}

/** The berth job an API job describes (validated as parseAllocation validates any Nomad job). */
export function apiJobToJob(apiJob: ApiJob): Job {
  const group = (apiJob.TaskGroups as Obj[] | undefined)?.[0]?.Name ?? 'group';
  return parseAllocation({
    ID: randomUUID(),
    NodeID: 'node',
    JobID: apiJob.ID,
    TaskGroup: group,
    Job: apiJob,
    DesiredStatus: 'run',
    ClientStatus: 'pending',
    AllocModifyIndex: 1,
  }).job;
}

const one = (v: unknown): Obj => (Array.isArray(v) ? Object.assign({}, ...v.filter(isObj)) : isObj(v) ? v : {});
const many = (v: unknown): Array<[string, Obj]> => (isObj(v) ? Object.entries(v).map(([k, b]) => [k, one(b)]) : []);

function substituteVars(v: unknown, vars: Record<string, string>, filename: string): unknown {
  if (typeof v === 'string')
    return v.replace(/\$\{var\.([A-Za-z0-9_-]+)\}/g, (_, k: string) => {
      if (!(k in vars)) throw new JobFileError(`${filename}: variable ${JSON.stringify(k)} has no value (give -var ${k}=...)`);
      return vars[k]!;
    });
  if (Array.isArray(v)) return v.map((x) => substituteVars(x, vars, filename));
  if (isObj(v))
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'variable')
        .map(([k, x]) => [k, substituteVars(x, vars, filename)]),
    );
  return v;
}

const ns = (v: unknown): number | undefined => (v === undefined ? undefined : typeof v === 'number' ? v * 1e9 : parseGoDuration(String(v)) * 1e6);

function hclJob(name: string, j: Obj): Obj {
  return {
    ID: name,
    Name: name,
    Type: j.type,
    Priority: j.priority,
    Datacenters: j.datacenters,
    Region: j.region,
    Namespace: j.namespace,
    Meta: j.meta ? one(j.meta) : undefined,
    TaskGroups: many(j.group).map(([gname, g]) => ({
      Name: gname,
      Count: g.count,
      Meta: g.meta ? one(g.meta) : undefined,
      RestartPolicy: g.restart ? hclRestart(one(g.restart)) : undefined,
      EphemeralDisk: g.ephemeral_disk
        ? { Sticky: one(g.ephemeral_disk).sticky, Migrate: one(g.ephemeral_disk).migrate, SizeMB: one(g.ephemeral_disk).size }
        : undefined,
      Update: g.update ? hclUpdate(one(g.update)) : undefined,
      Tasks: many(g.task).map(([tname, t]) => ({
        Name: tname,
        Driver: t.driver,
        User: t.user,
        Leader: t.leader,
        Config: t.config ? one(t.config) : {},
        Env: t.env ? one(t.env) : undefined,
        Meta: t.meta ? one(t.meta) : undefined,
        KillTimeout: ns(t.kill_timeout),
        KillSignal: t.kill_signal,
        Resources: t.resources ? { CPU: one(t.resources).cpu, MemoryMB: one(t.resources).memory, MemoryMaxMB: one(t.resources).memory_max } : undefined,
        RestartPolicy: t.restart ? hclRestart(one(t.restart)) : undefined,
        Lifecycle: t.lifecycle ? { Hook: one(t.lifecycle).hook, Sidecar: one(t.lifecycle).sidecar } : undefined,
      })),
    })),
    Update: j.update ? hclUpdate(one(j.update)) : undefined,
  };
}

function hclRestart(r: Obj): Obj {
  return { Attempts: r.attempts, Interval: ns(r.interval), Delay: ns(r.delay), Mode: r.mode };
}

function hclUpdate(u: Obj): Obj {
  return { MaxParallel: u.max_parallel, HealthCheck: u.health_check, MinHealthyTime: ns(u.min_healthy_time), HealthyDeadline: ns(u.healthy_deadline) };
}

const drop = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Nomad's defaults for what the file left out (the part berth's scheduler and client read). */
function canonicalize(job: unknown, filename: string): ApiJob {
  if (!isObj(job) || typeof job.ID !== 'string' || job.ID === '') throw new JobFileError(`${filename}: the job needs an ID (a job "name" block)`);
  const type = (job.Type as string | undefined) ?? 'service';
  const groups = Array.isArray(job.TaskGroups) ? (job.TaskGroups as Obj[]) : [];
  if (groups.length === 0) throw new JobFileError(`${filename}: job ${JSON.stringify(job.ID)} has no group`);
  return drop({
    ...job,
    Name: job.Name ?? job.ID,
    Namespace: job.Namespace ?? 'default',
    Region: job.Region ?? 'global',
    Type: type,
    Priority: job.Priority ?? 50,
    Datacenters: job.Datacenters ?? ['*'],
    TaskGroups: groups.map((g) =>
      drop({
        ...g,
        Count: g.Count ?? 1,
        EphemeralDisk: { SizeMB: 300, Sticky: false, Migrate: false, ...drop((g.EphemeralDisk as Obj | undefined) ?? {}) },
        RestartPolicy:
          g.RestartPolicy ??
          (type === 'batch' ? { Attempts: 3, Interval: 86400e9, Delay: 15e9, Mode: 'fail' } : { Attempts: 2, Interval: 1800e9, Delay: 15e9, Mode: 'fail' }),
        Update: g.Update ?? job.Update,
        Tasks: ((g.Tasks as Obj[] | undefined) ?? []).map((t) =>
          drop({
            ...t,
            Config: t.Config ?? {},
            KillTimeout: t.KillTimeout ?? 5e9,
            Resources: { CPU: 100, MemoryMB: 300, ...drop((t.Resources as Obj | undefined) ?? {}) },
            LogConfig: t.LogConfig ?? { MaxFiles: 10, MaxFileSizeMB: 10 },
          }),
        ),
      }),
    ),
  }) as ApiJob;
}
