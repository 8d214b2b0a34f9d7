/**
 * `parseAllocation`: accepts berth's camelCase allocation JSON and the PascalCase JSON Nomad's HTTP
 * API returns, maps Nomad's onto berth's, and validates it with THE allocation schema
 * (`schema/allocation.ts`), reporting every offending path at once: unknown keys with a
 * did-you-mean, stanzas berth does not run by name, values no task could start with.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { InvalidAllocationError, JobspecError, UnsupportedStanzaError, type UnsupportedStanza } from './errors.ts';
import { jsonValueProblems } from './json-value.ts';
import { allocationSchema, jobSchema } from './schema/allocation.ts';
import { issueLines, renderPath, unknownKeyProblem } from './schema/issues.ts';
import { fromNomad, nomadTime, toNomad, type FromNomadReport } from './schema/nomad.ts';
import { findUnsupported } from './schema/unsupported.ts';
import { completeReschedulePolicy } from './job-defaults.ts';
import { completeRestartPolicy, defaultRestartPolicy } from './restart-defaults.ts';
import type { Allocation, Job, ReschedulePolicy, RestartPolicy, Task, TaskEvent, TaskGroup, TaskState } from './types.ts';

export { isUUID, MAX_TASK_NAME_BYTES, RESERVED_TASK_NAMES, pathComponentProblem, taskNameProblem } from './names.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How {@link parseAllocation} treats what it cannot run. */
export interface ParseAllocationOptions {
  /**
   * A stanza berth does not run (template, vault, volumes, ...): `'refuse'` (the
   * default) throws {@link UnsupportedStanzaError}; `'warn'` leaves it out and reports it through
   * `onWarning` (and in {@link checkAllocation}'s `warnings`). A refused driver stays refused.
   */
  unsupported?: 'refuse' | 'warn';
  /** Called once per stanza left out in `'warn'` mode. */
  onWarning?: (warning: UnsupportedStanza) => void;
  /** The node id filled in when the JSON has none (a client passes its own; default `local`). */
  nodeId?: string;
  /** The drivers the host has; a task with another driver is an `unknown driver` issue. */
  drivers?: readonly string[];
  /** The node's CPU cores: a group whose tasks reserve more `cores` than that can never start. */
  nodeCores?: number;
}

/** The node id {@link parseAllocation} fills in when neither the JSON nor the options give one. */
export const DEFAULT_NODE_ID = 'local';

/** Nomad's allocation keys berth reads, ignores (server bookkeeping) or maps; anything else is unknown. */
const NOMAD_ALLOC_KEYS = {
  mapped: [
    'ID',
    'Namespace',
    'NodeID',
    'JobID',
    'Job',
    'TaskGroup',
    'DesiredStatus',
    'ClientStatus',
    'ClientDescription',
    'PreviousAllocation',
    'PreemptedAllocations',
    'MigrateToken',
    'AllocModifyIndex',
    'CreateTime',
    'Name',
    'DesiredTransition',
    'TaskStates',
    'EvalID',
    'DesiredDescription',
    'DeploymentID',
    'DeploymentStatus',
    'RescheduleTracker',
    'FollowupEvalID',
    'AllocatedResources',
    'ModifyTime',
  ],
  ignored: [
    'NodeName',
    'Resources',
    'SharedResources',
    'TaskResources',
    'Metrics',
    'NextAllocation',
    'PreemptedByAllocation',
    'CreateIndex',
    'ModifyIndex',
    'AllocStates',
    'NetworkStatus',
    'SignedIdentities',
    'SigningKeyID',
    'NodePool',
    'JobVersion',
    // Consul service names (Nomad's Allocation.Services): berth registers no Consul services.
    'Services',
  ],
};

const nullToUndef = (v: unknown) => (v === null ? undefined : v);
const nsToMs = (v: unknown) => (typeof v === 'number' ? v / 1e6 : v);

/** A copy of `o` without its undefined fields (built fresh: `delete` would slow every later access). */
function dropUndef<T extends Obj>(o: T): T {
  const out: Obj = {};
  for (const k of Object.keys(o)) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

function fromNomadTaskState(s: unknown): unknown {
  if (!isObj(s)) return s;
  return dropUndef({
    state: s.State,
    failed: !!s.Failed,
    restarts: s.Restarts ?? 0,
    lastRestart: nomadTime(s.LastRestart),
    startedAt: nomadTime(s.StartedAt),
    finishedAt: nomadTime(s.FinishedAt),
    events: Array.isArray(s.Events)
      ? s.Events.map((e) =>
          isObj(e)
            ? dropUndef({
                type: e.Type,
                time: nomadTime(e.Time) ?? 0,
                message: e.Message || undefined,
                displayMessage: e.DisplayMessage ?? '',
                details: e.Details ?? {},
              })
            : e,
        )
      : [],
  });
}

function fromNomadAllocatedResources(r: unknown): unknown {
  if (!isObj(r)) return undefined;
  const tasks: Obj = {};
  for (const [name, t] of Object.entries(isObj(r.Tasks) ? r.Tasks : {})) {
    if (!isObj(t)) continue;
    const cpu = isObj(t.Cpu) ? t.Cpu : {};
    const mem = isObj(t.Memory) ? t.Memory : {};
    tasks[name] = dropUndef({
      cpu: cpu.CpuShares ?? 0,
      memoryMB: mem.MemoryMB ?? 0,
      memoryMaxMB: mem.MemoryMaxMB || undefined,
      cores: Array.isArray(cpu.ReservedCores) && cpu.ReservedCores.length ? cpu.ReservedCores : undefined,
    });
  }
  const shared = isObj(r.Shared) ? r.Shared : {};
  const ports = (Array.isArray(shared.Ports) ? shared.Ports : []).map((p: unknown) =>
    isObj(p) ? { label: p.Label, value: p.Value, to: p.To ?? 0, hostIp: p.HostIP ?? '' } : p,
  );
  return { tasks, shared: { diskMB: shared.DiskMB ?? 0, ports } };
}

/** Converts Nomad's API JSON for an allocation to berth's camelCase shape (keys checked, values not). */
function fromNomadAlloc(a: Obj, report: FromNomadReport): Obj {
  const known = [...NOMAD_ALLOC_KEYS.mapped, ...NOMAD_ALLOC_KEYS.ignored];
  for (const k of Object.keys(a)) if (!known.includes(k)) report.issues.push(`${renderPath([k])}: ${unknownKeyProblem(k, known)}`);
  const job = isObj(a.Job) ? (fromNomad(a.Job, 'Job', 'job', report) as Obj) : a.Job;
  const ds = isObj(a.DeploymentStatus) ? a.DeploymentStatus : undefined;
  const rt = isObj(a.RescheduleTracker) ? a.RescheduleTracker : undefined;
  return dropUndef({
    id: a.ID || undefined,
    namespace: a.Namespace || undefined,
    nodeId: a.NodeID || undefined,
    jobId: a.JobID,
    job,
    taskGroup: a.TaskGroup,
    desiredStatus: a.DesiredStatus,
    clientStatus: a.ClientStatus,
    clientDescription: a.ClientDescription || undefined,
    previousAllocation: a.PreviousAllocation || undefined,
    preemptedAllocations: nullToUndef(a.PreemptedAllocations),
    migrateToken: a.MigrateToken || undefined,
    allocModifyIndex: a.AllocModifyIndex,
    createTime: nomadTime(a.CreateTime),
    name: a.Name || undefined,
    desiredTransition: isObj(a.DesiredTransition)
      ? dropUndef({
          migrate: nullToUndef(a.DesiredTransition.Migrate),
          reschedule: nullToUndef(a.DesiredTransition.Reschedule),
          forceReschedule: nullToUndef(a.DesiredTransition.ForceReschedule),
          noShutdownDelay: nullToUndef(a.DesiredTransition.NoShutdownDelay),
        })
      : undefined,
    taskStates: isObj(a.TaskStates) ? Object.fromEntries(Object.entries(a.TaskStates).map(([k, v]) => [k, fromNomadTaskState(v)])) : undefined,
    evalId: a.EvalID || undefined,
    jobVersion: isObj(a.Job) && typeof a.Job.Version === 'number' ? a.Job.Version : undefined,
    desiredDescription: a.DesiredDescription || undefined,
    deploymentId: a.DeploymentID || undefined,
    deploymentStatus: ds ? dropUndef({ healthy: nullToUndef(ds.Healthy), timestamp: nomadTime(ds.Timestamp), canary: ds.Canary || undefined }) : undefined,
    rescheduleTracker: rt
      ? {
          events: (Array.isArray(rt.Events) ? rt.Events : []).map((e: unknown) =>
            isObj(e)
              ? { rescheduleTime: nomadTime(e.RescheduleTime) ?? 0, prevAllocId: e.PrevAllocID, prevNodeId: e.PrevNodeID, delayMs: nsToMs(e.Delay ?? 0) }
              : e,
          ),
        }
      : undefined,
    followupEvalId: a.FollowupEvalID || undefined,
    allocatedResources: fromNomadAllocatedResources(a.AllocatedResources),
    modifyTime: nomadTime(a.ModifyTime),
  });
}

/** A deep copy of a value already checked to be plain JSON (faster than structuredClone). */
function copyJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copyJson);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) out[k] = copyJson(v[k]);
  return out;
}

/** Maps whose values are data (a null there is a value, reported by the schema), not fields. */
const DATA_KEYS = new Set(['config', 'env', 'meta', 'details', 'options', 'headers', 'header']);

/** berth's JSON with `null` (and `undefined`) fields removed: both mean absent, as in Nomad's JSON. */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined) continue; // absent, as JSON would have it
    out[k] = DATA_KEYS.has(k) ? copyJson(x) : dropNulls(x);
  }
  return out;
}

const isNomadShape = (j: Obj) => !('job' in j) && ['ID', 'Job', 'NodeID', 'TaskGroup', 'JobID'].some((k) => k in j);

/** The result of {@link checkAllocation}. */
export interface CheckedAllocation {
  alloc: Allocation;
  /** Stanzas left out (only in `unsupported: 'warn'` mode). */
  warnings: UnsupportedStanza[];
}

/**
 * Parses and validates an allocation, returning it with the stanzas left out in `'warn'` mode.
 * @throws UnsupportedStanzaError when a stanza is refused (it lists every other problem too)
 * @throws InvalidAllocationError naming every offending field path, in berth's camelCase names.
 */
export function checkAllocation(json: unknown, opts: ParseAllocationOptions = {}): CheckedAllocation {
  if (!isObj(json)) throw new InvalidAllocationError(['(root): must be an object']);
  // First: only plain JSON within bounds (no BigInt, cycles, functions, getters; bounded depth
  // and sizes), so nothing below can recurse too deep or meet a value it cannot copy or store.
  const notJson = jsonValueProblems(json);
  if (notJson.length) throw new InvalidAllocationError(notJson);
  const report: FromNomadReport = { issues: [], unsupported: [] };
  const src = (isNomadShape(json) ? fromNomadAlloc(json, report) : dropNulls(json)) as Obj;
  const found = findUnsupported(src.job, 'job', true);
  // Only the alloc's own group runs here: what another group of the job uses is not this alloc's.
  const groups = isObj(src.job) && Array.isArray(src.job.taskGroups) ? src.job.taskGroups : [];
  const gi = groups.findIndex((g) => isObj(g) && g.name === src.taskGroup);
  const mine = (u: UnsupportedStanza) => gi < 0 || !u.path.startsWith('job.taskGroups[') || u.path.startsWith(`job.taskGroups[${gi}]`);
  const unsupported = [...report.unsupported, ...found.removable].filter(mine);
  const fatal = found.fatal.filter(mine);

  const issues = [...report.issues];
  const r = allocationSchema.safeParse(src);
  if (!r.success) issues.push(...issueLines(r.error));
  if (opts.drivers && gi >= 0) {
    const tasks = (groups[gi] as Obj).tasks;
    (Array.isArray(tasks) ? tasks : []).forEach((t, ti) => {
      const d = isObj(t) ? t.driver : undefined;
      if (typeof d === 'string' && d !== '' && !opts.drivers!.includes(d) && !fatal.some((f) => f.path === `job.taskGroups[${gi}].tasks[${ti}].driver`))
        issues.push(`job.taskGroups[${gi}].tasks[${ti}].driver: unknown driver ${JSON.stringify(d)} (have ${[...opts.drivers!].sort().join(', ')})`);
    });
  }
  if (opts.nodeCores !== undefined && gi >= 0) {
    let reserved = 0;
    const tasks = (groups[gi] as Obj).tasks;
    (Array.isArray(tasks) ? tasks : []).forEach((t, ti) => {
      const cores = isObj(t) && isObj(t.resources) && typeof t.resources.cores === 'number' ? t.resources.cores : 0;
      reserved += cores;
      if (cores > 0 && reserved > opts.nodeCores!)
        issues.push(
          `job.taskGroups[${gi}].tasks[${ti}].resources.cores: the group's tasks reserve ${reserved} cores up to here; this node has ${opts.nodeCores}`,
        );
    });
  }
  const refused = opts.unsupported === 'warn' ? fatal : [...fatal, ...unsupported];
  if (refused.length) throw new UnsupportedStanzaError(refused, issues);
  if (issues.length || !r.success) throw new InvalidAllocationError(issues);
  const warnings = opts.unsupported === 'warn' ? unsupported : [];
  for (const w of warnings) opts.onWarning?.(w);
  return { alloc: normalise(r.data as Obj, opts), warnings };
}

/**
 * Parses and validates an allocation given as berth's camelCase JSON or as Nomad's HTTP API JSON
 * (PascalCase, nanosecond durations, Nomad's zero time meaning absent). For berth's own JSON,
 * `id` may be left out (a new UUID) and so may `nodeId` (`opts.nodeId`, else `local`).
 *
 * Before anything else the input must be plain JSON within `JSON_LIMITS` (see
 * `jsonValueProblems`); those problems name the path as given (PascalCase for Nomad input).
 *
 * @throws UnsupportedStanzaError for a stanza berth does not run (unless `unsupported: 'warn'`).
 * @throws InvalidAllocationError naming every offending field path, in berth's camelCase names.
 * @example
 * const alloc = parseAllocation(JSON.parse(fs.readFileSync('alloc.json', 'utf8')));
 */
export function parseAllocation(json: unknown, opts: ParseAllocationOptions = {}): Allocation {
  return checkAllocation(json, opts).alloc;
}

/** The result of {@link checkJob}. */
export interface CheckedJob {
  job: Job;
  /** Stanzas left out (only in `unsupported: 'warn'` mode). */
  warnings: UnsupportedStanza[];
}

/**
 * Parses and validates a job given as berth's camelCase JSON or as Nomad's API `Job` JSON
 * (PascalCase, nanoseconds), with the same schema, mapping and refusals as {@link checkAllocation}.
 * Paths start at `job`.
 * @throws JobspecError listing every problem (`issues`), refused stanzas in `unsupported`.
 */
export function checkJob(json: unknown, opts: Pick<ParseAllocationOptions, 'unsupported' | 'onWarning'> = {}): CheckedJob {
  if (!isObj(json)) throw new JobspecError('job: must be an object', { path: 'job' });
  const notJson = jsonValueProblems(json);
  if (notJson.length) throw new JobspecError(`invalid job: ${notJson.join('; ')}`, { issues: notJson });
  const report: FromNomadReport = { issues: [], unsupported: [] };
  const nomad = !('taskGroups' in json) && ('TaskGroups' in json || 'ID' in json);
  const src = nomad ? fromNomad(json, 'Job', 'job', report) : dropNulls(json);
  const found = findUnsupported(src, 'job', true);
  const unsupported = [...report.unsupported, ...found.removable];
  const issues = [...report.issues];
  const r = jobSchema.safeParse(src);
  if (!r.success) issues.push(...issueLines(r.error, 'job'));
  const refused = opts.unsupported === 'warn' ? found.fatal : [...found.fatal, ...unsupported];
  const lines = [...refused.map((u) => `${u.stanza} is not supported by berth (${u.path})`), ...issues];
  if (lines.length || !r.success) {
    const first = refused[0]?.path ?? issues[0]?.split(': ')[0];
    throw new JobspecError(lines.length === 1 ? lines[0]! : `invalid job (${lines.length} problems):\n  ${lines.join('\n  ')}`, {
      issues: lines,
      path: first,
      unsupported: refused,
    });
  }
  const warnings = opts.unsupported === 'warn' ? unsupported : [];
  for (const w of warnings) opts.onWarning?.(w);
  return { job: normaliseJob(r.data as Obj), warnings };
}

/** {@link checkJob}'s job. */
export function parseJob(json: unknown, opts: Pick<ParseAllocationOptions, 'unsupported' | 'onWarning'> = {}): Job {
  return checkJob(json, opts).job;
}

/** A berth job as Nomad's API `Job` JSON (PascalCase, nanoseconds), the inverse of {@link parseJob}'s mapping. */
export function jobToNomad(job: Job): Record<string, unknown> {
  return toNomad(job, 'Job') as Record<string, unknown>;
}

/** The schema's output in berth's canonical form: empty strings and false flags left out, ids filled. */
function normalise(a: Obj, opts: ParseAllocationOptions): Allocation {
  const job = normaliseJob(a.job as Obj);
  const out = dropUndef({
    ...a,
    $schema: undefined,
    id: (a.id as string | undefined) || randomUUID(),
    nodeId: (a.nodeId as string | undefined) || opts.nodeId || DEFAULT_NODE_ID,
    jobId: (a.jobId as string | undefined) || job.id,
    job,
    namespace: (a.namespace as string | undefined) || job.namespace || 'default',
    clientDescription: a.clientDescription || undefined,
    previousAllocation: a.previousAllocation || undefined,
    migrateToken: a.migrateToken || undefined,
    createTime: a.createTime || undefined,
    name: a.name || undefined,
    evalId: a.evalId || undefined,
    desiredDescription: a.desiredDescription || undefined,
    deploymentId: a.deploymentId || undefined,
    followupEvalId: a.followupEvalId || undefined,
    modifyTime: a.modifyTime || undefined,
  }) as unknown as Allocation;
  const pre = [...new Set((a.preemptedAllocations as string[] | undefined) ?? [])];
  if (pre.length) out.preemptedAllocations = pre;
  else delete out.preemptedAllocations;
  if (out.desiredTransition && !Object.keys(out.desiredTransition).length) delete out.desiredTransition;
  if (out.taskStates) out.taskStates = Object.fromEntries(Object.entries(out.taskStates).map(([k, s]) => [k, normaliseTaskState(s as unknown as Obj)]));
  return out;
}

function normaliseJob(j: Obj): Job {
  const type = j.type as Job['type'];
  return dropUndef({
    ...j,
    $schema: undefined,
    name: j.name || undefined,
    namespace: j.namespace || undefined,
    region: j.region || undefined,
    parentId: j.parentId || undefined,
    stop: j.stop || undefined,
    taskGroups: (j.taskGroups as Obj[]).map((g) => normaliseGroup(g, type)),
  }) as unknown as Job;
}

function normaliseGroup(g: Obj, type: Job['type']): TaskGroup {
  // A partial restart policy is completed over the job type's default, a task's over its group's.
  const groupPolicy = completeRestartPolicy(defaultRestartPolicy(type), g.restartPolicy as Partial<RestartPolicy> | undefined);
  return dropUndef({
    ...g,
    restartPolicy: groupPolicy,
    // A partial reschedule block (Nomad JSON that was not canonicalised) gets the job type's defaults.
    reschedulePolicy: g.reschedulePolicy ? completeReschedulePolicy(type, g.reschedulePolicy as Partial<ReschedulePolicy>) : undefined,
    tasks: (g.tasks as Obj[]).map((t) => normaliseTask(t, groupPolicy ?? defaultRestartPolicy(type))),
  }) as unknown as TaskGroup;
}

function normaliseTask(t: Obj, basePolicy: RestartPolicy): Task {
  return dropUndef({
    ...t,
    restartPolicy: completeRestartPolicy(basePolicy, t.restartPolicy as Partial<RestartPolicy> | undefined),
    config: copyJson(t.config),
    user: t.user || undefined,
    leader: t.leader || undefined,
    killSignal: t.killSignal || undefined,
  }) as unknown as Task;
}

function normaliseTaskState(s: Obj): TaskState {
  const events: TaskEvent[] = ((s.events as Obj[]) ?? []).map((e) => ({
    type: e.type as string,
    time: typeof e.time === 'number' ? e.time : 0,
    ...(typeof e.message === 'string' && e.message ? { message: e.message } : {}),
    displayMessage: typeof e.displayMessage === 'string' ? e.displayMessage : '',
    details: isObj(e.details) ? (copyJson(e.details) as Record<string, string>) : {},
  }));
  const out: TaskState = { state: s.state as TaskState['state'], failed: s.failed === true, restarts: (s.restarts as number) ?? 0, events };
  for (const k of ['lastRestart', 'startedAt', 'finishedAt'] as const) if (s[k]) out[k] = s[k] as number;
  if (typeof s.exitCode === 'number') out.exitCode = s.exitCode;
  if (typeof s.signal === 'number') out.signal = s.signal;
  if (typeof s.oomKilled === 'boolean') out.oomKilled = s.oomKilled;
  return out;
}
