/**
 * `parseAllocation`: accepts berth's camelCase allocation JSON and the PascalCase JSON Nomad's HTTP
 * API returns, normalises both to {@link Allocation}, and validates every field, reporting all
 * offending paths at once.
 * @module
 */
import { InvalidAllocationError } from './errors.ts';
import { jsonValueProblems } from './json-value.ts';
import { completeRestartPolicy, defaultRestartPolicy } from './restart-defaults.ts';
import type { Allocation, DesiredTransition, Disconnect, Job, Resources, RestartPolicy, Task, TaskEvent, TaskGroup, TaskState } from './types.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DESIRED = ['run', 'stop', 'evict'];
const CLIENT = ['pending', 'running', 'complete', 'failed', 'lost', 'unknown'];
const JOB_TYPES = ['service', 'batch', 'system', 'sysbatch'];
const HOOKS = ['prestart', 'poststart', 'poststop'];
const TASK_STATES = ['pending', 'running', 'dead'];
const RECONCILE = ['best_score', 'keep_original', 'keep_replacement', 'longest_running'];

/** True when `s` is a 36-character UUID. */
export function isUUID(s: unknown): s is string {
  return typeof s === 'string' && s.length === 36 && UUID_RE.test(s);
}

/** Longest task name, in UTF-8 bytes: leaves room under NAME_MAX and PATH_MAX for berth's own paths. */
export const MAX_TASK_NAME_BYTES = 128;

/** Names a task cannot take: the alloc dir's own entries (`alloc/` is shared by every task). */
export const RESERVED_TASK_NAMES: readonly string[] = ['alloc'];

/**
 * Why `name` cannot be a single path component (an alloc id's directory), or undefined when it
 * can: a non-empty string, not `.` or `..`, without `/` or NUL.
 */
export function pathComponentProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'must be a non-empty string';
  if (name === '.' || name === '..') return `must not be "${name}"`;
  if (name.includes('/')) return 'must not contain "/"';
  if (name.includes('\0')) return 'must not contain NUL';
  return undefined;
}

/**
 * Why `name` cannot be a task (directory) name, or undefined when it can. As Nomad: no slashes
 * (`/` or `\\`) and no NUL; and, since the name becomes a directory beside the shared `alloc/`,
 * not `.`, `..`, not a reserved name ({@link RESERVED_TASK_NAMES}), and at most
 * {@link MAX_TASK_NAME_BYTES} bytes. Shared by parseAllocation and AllocDir.newTaskDir.
 */
export function taskNameProblem(name: unknown): string | undefined {
  const p = pathComponentProblem(name);
  if (p) return p;
  const n = name as string;
  if (n.includes('\\')) return 'must not contain "\\"';
  if (RESERVED_TASK_NAMES.includes(n)) return `must not be "${n}" (reserved by the alloc dir)`;
  const bytes = Buffer.byteLength(n);
  if (bytes > MAX_TASK_NAME_BYTES) return `must be at most ${MAX_TASK_NAME_BYTES} bytes (got ${bytes})`;
  return undefined;
}

type Obj = Record<string, unknown>;

/** Copies the named keys of `from` (when present) into `to`, unvalidated: round-3 fields pass through until the schema checks them. */
function passThrough(from: Obj, to: object, keys: readonly string[]): void {
  for (const k of keys) if (from[k] !== undefined && from[k] !== null) (to as Obj)[k] = structuredClone(from[k]);
}
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nanoseconds (Nomad) to milliseconds. */
const nsToMs = (v: unknown) => (typeof v === 'number' ? v / 1e6 : v);

/** Nomad's zero time ("0001-01-01T00:00:00Z" or 0) means absent; otherwise ms since epoch. */
function nomadTime(v: unknown): unknown {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v === 'string') {
    if (v.startsWith('0001-01-01')) return undefined;
    const t = Date.parse(v);
    return Number.isNaN(t) ? v : t;
  }
  if (typeof v === 'number') return v / 1e6; // UnixNano
  return v;
}

const nullToUndef = (v: unknown) => (v === null ? undefined : v);

function fromNomadRestart(p: unknown): unknown {
  if (!isObj(p)) return nullToUndef(p);
  return { attempts: p.Attempts, intervalMs: nsToMs(p.Interval), delayMs: nsToMs(p.Delay), mode: p.Mode };
}

function fromNomadResources(r: unknown): unknown {
  if (!isObj(r)) return nullToUndef(r);
  // Nomad sends 0 for "not set" in most resource fields.
  const pos = (v: unknown) => (v === 0 || v === null ? undefined : v);
  return dropUndef({ cpu: pos(r.CPU), memoryMB: pos(r.MemoryMB), memoryMaxMB: pos(r.MemoryMaxMB), cores: pos(r.Cores), secretsMB: pos(r.SecretsMB) });
}

function fromNomadTask(t: unknown): unknown {
  if (!isObj(t)) return t;
  const lc = isObj(t.Lifecycle) ? { hook: t.Lifecycle.Hook, sidecar: t.Lifecycle.Sidecar } : undefined;
  const logs = isObj(t.LogConfig) ? { maxFiles: t.LogConfig.MaxFiles, maxFileSizeMB: t.LogConfig.MaxFileSizeMB } : undefined;
  return dropUndef({
    name: t.Name,
    driver: t.Driver,
    config: t.Config ?? {},
    env: nullToUndef(t.Env),
    user: t.User || undefined,
    leader: t.Leader || undefined,
    lifecycle: lc && lc.hook ? lc : undefined,
    killTimeoutMs: t.KillTimeout === undefined ? undefined : nsToMs(t.KillTimeout),
    killSignal: t.KillSignal || undefined,
    restartPolicy: fromNomadRestart(t.RestartPolicy),
    logs,
    meta: nullToUndef(t.Meta),
    resources: fromNomadResources(t.Resources),
    shutdownDelayMs: t.ShutdownDelay === undefined || t.ShutdownDelay === null ? undefined : nsToMs(t.ShutdownDelay),
  });
}

function fromNomadGroup(g: unknown): unknown {
  if (!isObj(g)) return g;
  const d = isObj(g.EphemeralDisk) ? { sticky: g.EphemeralDisk.Sticky, migrate: g.EphemeralDisk.Migrate, sizeMB: g.EphemeralDisk.SizeMB } : undefined;
  return dropUndef({
    name: g.Name,
    count: nullToUndef(g.Count),
    tasks: Array.isArray(g.Tasks) ? g.Tasks.map(fromNomadTask) : g.Tasks,
    ephemeralDisk: d,
    restartPolicy: fromNomadRestart(g.RestartPolicy),
    meta: nullToUndef(g.Meta),
    shutdownDelayMs: g.ShutdownDelay === undefined || g.ShutdownDelay === null ? undefined : nsToMs(g.ShutdownDelay),
    maxRunDurationMs: g.MaxRunDuration === undefined || g.MaxRunDuration === null ? undefined : nsToMs(g.MaxRunDuration),
    maxClientDisconnectMs: g.MaxClientDisconnect === undefined || g.MaxClientDisconnect === null ? undefined : nsToMs(g.MaxClientDisconnect),
    disconnect: isObj(g.Disconnect)
      ? dropUndef({
          lostAfterMs: g.Disconnect.LostAfter ? nsToMs(g.Disconnect.LostAfter) : undefined,
          stopOnClientAfterMs: g.Disconnect.StopOnClientAfter ? nsToMs(g.Disconnect.StopOnClientAfter) : undefined,
          replace: nullToUndef(g.Disconnect.Replace),
          reconcile: g.Disconnect.Reconcile || undefined,
        })
      : undefined,
  });
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

/** Converts Nomad's API JSON for an allocation to berth's camelCase shape (no validation). */
function fromNomad(a: Obj): Obj {
  const j = isObj(a.Job) ? a.Job : undefined;
  return dropUndef({
    id: a.ID,
    namespace: a.Namespace || undefined,
    nodeId: a.NodeID,
    jobId: a.JobID,
    job: j
      ? dropUndef({
          id: j.ID,
          name: j.Name,
          namespace: j.Namespace,
          type: j.Type,
          priority: j.Priority,
          region: j.Region || undefined,
          datacenters: nullToUndef(j.Datacenters),
          meta: nullToUndef(j.Meta),
          taskGroups: Array.isArray(j.TaskGroups) ? j.TaskGroups.map(fromNomadGroup) : j.TaskGroups,
        })
      : a.Job,
    taskGroup: a.TaskGroup,
    desiredStatus: a.DesiredStatus,
    clientStatus: a.ClientStatus,
    clientDescription: a.ClientDescription || undefined,
    previousAllocation: a.PreviousAllocation || undefined,
    preemptedAllocations: nullToUndef(a.PreemptedAllocations),
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
  });
}

function dropUndef<T extends Obj>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/** Collects `path: problem` lines. */
class Issues {
  readonly list: string[] = [];
  add(path: string, problem: string) {
    this.list.push(`${path}: ${problem}`);
  }
}

function str(v: unknown, path: string, is: Issues, opts: { required?: boolean } = {}): string | undefined {
  if (v === undefined || v === null) {
    if (opts.required) is.add(path, 'is required');
    return undefined;
  }
  if (typeof v !== 'string') {
    is.add(path, 'must be a string');
    return undefined;
  }
  if (opts.required && v === '') is.add(path, 'must not be empty');
  return v;
}

function nonNegInt(v: unknown, path: string, is: Issues, fallback?: number): number | undefined {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    is.add(path, 'must be an integer');
    return undefined;
  }
  if (v < 0) is.add(path, 'must not be negative');
  return v;
}

function nonNegNum(v: unknown, path: string, is: Issues): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    is.add(path, 'must be a number');
    return undefined;
  }
  if (v < 0) is.add(path, 'must not be negative');
  return v;
}

function oneOf<T extends string>(v: unknown, allowed: string[], path: string, is: Issues, fallback?: T): T | undefined {
  if (v === undefined || v === null || v === '') {
    if (fallback === undefined) is.add(path, 'is required');
    return fallback;
  }
  if (typeof v !== 'string' || !allowed.includes(v)) {
    is.add(path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
    return undefined;
  }
  return v as T;
}

/** The fields given; {@link job} completes them over the job type's defaults (Nomad's Canonicalize). */
function restartPolicy(v: unknown, path: string, is: Issues): RestartPolicy | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    is.add(path, 'must be an object');
    return undefined;
  }
  const out: Partial<RestartPolicy> = {};
  const attempts = nonNegInt(v.attempts, `${path}.attempts`, is);
  if (attempts !== undefined) out.attempts = attempts;
  const intervalMs = nonNegNum(v.intervalMs, `${path}.intervalMs`, is);
  if (intervalMs !== undefined) out.intervalMs = intervalMs;
  const delayMs = nonNegNum(v.delayMs, `${path}.delayMs`, is);
  if (delayMs !== undefined) out.delayMs = delayMs;
  if (v.mode !== undefined) {
    const mode = oneOf<'fail' | 'delay'>(v.mode, ['fail', 'delay'], `${path}.mode`, is);
    if (mode !== undefined) out.mode = mode;
  }
  return out as RestartPolicy;
}

function stringRecord(v: unknown, path: string, is: Issues): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    is.add(path, 'must be an object of strings');
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') is.add(`${path}.${k}`, 'must be a string');
    else out[k] = val;
  }
  return out;
}

function stringList(v: unknown, path: string, is: Issues): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    is.add(path, 'must be an array of strings');
    return undefined;
  }
  const out: string[] = [];
  v.forEach((s, i) => (typeof s === 'string' ? out.push(s) : is.add(`${path}[${i}]`, 'must be a string')));
  return out;
}

/** Nomad's task resource validation (minimums as `structs.Resources.Validate` words them). */
function resources(v: unknown, path: string, is: Issues): Resources | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    is.add(path, 'must be an object');
    return undefined;
  }
  const out: Resources = {};
  for (const k of ['cpu', 'memoryMB', 'memoryMaxMB', 'cores', 'secretsMB', 'diskMB'] as const) {
    const n = nonNegInt(v[k], `${path}.${k}`, is);
    if (n !== undefined) out[k] = n;
  }
  if (out.cpu !== undefined && out.cpu < 1) is.add(`${path}.cpu`, `minimum CPU value is 1; got ${out.cpu}`);
  if (out.memoryMB !== undefined && out.memoryMB < 10) is.add(`${path}.memoryMB`, `minimum MemoryMB value is 10; got ${out.memoryMB}`);
  if (out.memoryMaxMB !== undefined && out.memoryMB !== undefined && out.memoryMaxMB < out.memoryMB) {
    is.add(`${path}.memoryMaxMB`, `MemoryMaxMB value (${out.memoryMaxMB}) should be larger than MemoryMB value (${out.memoryMB})`);
  }
  return out;
}

function task(v: unknown, path: string, is: Issues): Task | undefined {
  if (!isObj(v)) {
    is.add(path, 'must be an object');
    return undefined;
  }
  const nameProblem = taskNameProblem(v.name);
  if (nameProblem) is.add(`${path}.name`, nameProblem);
  const driver = str(v.driver, `${path}.driver`, is, { required: true });
  let config: Record<string, unknown> = {};
  if (v.config !== undefined && v.config !== null) {
    if (!isObj(v.config)) is.add(`${path}.config`, 'must be an object');
    else config = structuredClone(v.config);
  }
  const out: Task = { name: v.name as string, driver: driver ?? '', config };
  const env = stringRecord(v.env, `${path}.env`, is);
  if (env) out.env = env;
  const user = str(v.user, `${path}.user`, is);
  if (user) out.user = user;
  if (v.leader !== undefined && v.leader !== null) {
    if (typeof v.leader !== 'boolean') is.add(`${path}.leader`, 'must be a boolean');
    else if (v.leader) out.leader = true;
  }
  if (v.lifecycle !== undefined && v.lifecycle !== null) {
    if (!isObj(v.lifecycle)) is.add(`${path}.lifecycle`, 'must be an object');
    else {
      const hook = oneOf<'prestart' | 'poststart' | 'poststop'>(v.lifecycle.hook, HOOKS, `${path}.lifecycle.hook`, is);
      if (v.lifecycle.sidecar !== undefined && typeof v.lifecycle.sidecar !== 'boolean') is.add(`${path}.lifecycle.sidecar`, 'must be a boolean');
      if (hook) out.lifecycle = { hook, sidecar: !!v.lifecycle.sidecar };
    }
  }
  const kt = nonNegNum(v.killTimeoutMs, `${path}.killTimeoutMs`, is);
  if (kt !== undefined) out.killTimeoutMs = kt;
  const ks = str(v.killSignal, `${path}.killSignal`, is);
  if (ks) out.killSignal = ks;
  const rp = restartPolicy(v.restartPolicy, `${path}.restartPolicy`, is);
  if (rp) out.restartPolicy = rp;
  if (v.logs !== undefined && v.logs !== null) {
    if (!isObj(v.logs)) is.add(`${path}.logs`, 'must be an object');
    else {
      const maxFiles = nonNegInt(v.logs.maxFiles, `${path}.logs.maxFiles`, is, 10)!;
      const maxFileSizeMB = nonNegNum(v.logs.maxFileSizeMB, `${path}.logs.maxFileSizeMB`, is) ?? 10;
      if (maxFiles < 1) is.add(`${path}.logs.maxFiles`, 'must be at least 1');
      if (maxFileSizeMB <= 0) is.add(`${path}.logs.maxFileSizeMB`, 'must be positive');
      out.logs = { maxFiles, maxFileSizeMB };
    }
  }
  const meta = stringRecord(v.meta, `${path}.meta`, is);
  if (meta) out.meta = meta;
  const res = resources(v.resources, `${path}.resources`, is);
  if (res) out.resources = res;
  const sd = nonNegNum(v.shutdownDelayMs, `${path}.shutdownDelayMs`, is);
  if (sd !== undefined) out.shutdownDelayMs = sd;
  passThrough(v, out, ['artifacts', 'services']);
  return out;
}

function group(v: unknown, path: string, is: Issues): TaskGroup | undefined {
  if (!isObj(v)) {
    is.add(path, 'must be an object');
    return undefined;
  }
  const name = str(v.name, `${path}.name`, is, { required: true }) ?? '';
  const out: TaskGroup = { name, tasks: [] };
  const count = nonNegInt(v.count, `${path}.count`, is);
  if (count !== undefined) out.count = count;
  if (!Array.isArray(v.tasks) || v.tasks.length === 0) is.add(`${path}.tasks`, 'must be a non-empty array');
  else {
    const seen = new Set<string>();
    v.tasks.forEach((t, i) => {
      const parsed = task(t, `${path}.tasks[${i}]`, is);
      if (!parsed) return;
      if (typeof parsed.name === 'string' && seen.has(parsed.name)) is.add(`${path}.tasks[${i}].name`, `duplicate task name ${JSON.stringify(parsed.name)}`);
      seen.add(parsed.name);
      out.tasks.push(parsed);
    });
    if (out.tasks.filter((t) => t.leader).length > 1) is.add(`${path}.tasks`, 'only one task may be the leader');
  }
  if (v.ephemeralDisk !== undefined && v.ephemeralDisk !== null) {
    if (!isObj(v.ephemeralDisk)) is.add(`${path}.ephemeralDisk`, 'must be an object');
    else {
      const d = v.ephemeralDisk;
      for (const k of ['sticky', 'migrate'] as const)
        if (d[k] !== undefined && typeof d[k] !== 'boolean') is.add(`${path}.ephemeralDisk.${k}`, 'must be a boolean');
      const sizeMB = nonNegNum(d.sizeMB, `${path}.ephemeralDisk.sizeMB`, is);
      if (sizeMB !== undefined && sizeMB < 10) is.add(`${path}.ephemeralDisk.sizeMB`, `minimum DiskMB value is 10; got ${sizeMB}`);
      out.ephemeralDisk = { sticky: d.sticky === true, migrate: d.migrate === true, ...(sizeMB !== undefined ? { sizeMB } : {}) };
    }
  }
  const rp = restartPolicy(v.restartPolicy, `${path}.restartPolicy`, is);
  if (rp) out.restartPolicy = rp;
  const meta = stringRecord(v.meta, `${path}.meta`, is);
  if (meta) out.meta = meta;
  const sd = nonNegNum(v.shutdownDelayMs, `${path}.shutdownDelayMs`, is);
  if (sd !== undefined) out.shutdownDelayMs = sd;
  if (v.maxRunDurationMs !== undefined && v.maxRunDurationMs !== null) {
    const mrd = nonNegNum(v.maxRunDurationMs, `${path}.maxRunDurationMs`, is);
    if (mrd === 0) is.add(`${path}.maxRunDurationMs`, 'MaxRunDuration must be greater than zero');
    else if (mrd !== undefined) out.maxRunDurationMs = mrd;
  }
  const mcd = nonNegNum(v.maxClientDisconnectMs, `${path}.maxClientDisconnectMs`, is);
  if (mcd !== undefined) out.maxClientDisconnectMs = mcd;
  if (v.disconnect !== undefined && v.disconnect !== null) {
    if (!isObj(v.disconnect)) is.add(`${path}.disconnect`, 'must be an object');
    else {
      const d: Disconnect = {};
      const la = nonNegNum(v.disconnect.lostAfterMs, `${path}.disconnect.lostAfterMs`, is);
      if (la !== undefined) d.lostAfterMs = la;
      const so = nonNegNum(v.disconnect.stopOnClientAfterMs, `${path}.disconnect.stopOnClientAfterMs`, is);
      if (so !== undefined) d.stopOnClientAfterMs = so;
      if (v.disconnect.replace !== undefined) {
        if (typeof v.disconnect.replace !== 'boolean') is.add(`${path}.disconnect.replace`, 'must be a boolean');
        else d.replace = v.disconnect.replace;
      }
      if (v.disconnect.reconcile !== undefined && v.disconnect.reconcile !== null && v.disconnect.reconcile !== '') {
        const rec = oneOf<string>(v.disconnect.reconcile, RECONCILE, `${path}.disconnect.reconcile`, is);
        if (rec) d.reconcile = rec;
      }
      if (d.lostAfterMs !== undefined && mcd !== undefined)
        is.add(`${path}.disconnect.lostAfterMs`, 'using both lost_after and max_client_disconnect is not allowed');
      out.disconnect = d;
    }
  }
  passThrough(v, out, ['reschedulePolicy', 'migrate', 'update', 'networks', 'services']);
  return out;
}

function job(v: unknown, path: string, is: Issues): Job | undefined {
  if (!isObj(v)) {
    is.add(path, v === undefined || v === null ? 'is required' : 'must be an object');
    return undefined;
  }
  const id = str(v.id, `${path}.id`, is, { required: true }) ?? '';
  const type = oneOf<Job['type']>(v.type, JOB_TYPES, `${path}.type`, is, 'service') ?? 'service';
  const out: Job = { id, type, taskGroups: [] };
  const name = str(v.name, `${path}.name`, is);
  if (name) out.name = name;
  const ns = str(v.namespace, `${path}.namespace`, is);
  if (ns) out.namespace = ns;
  const prio = nonNegInt(v.priority, `${path}.priority`, is);
  if (prio !== undefined) out.priority = prio;
  const region = str(v.region, `${path}.region`, is);
  if (region) out.region = region;
  const dcs = stringList(v.datacenters, `${path}.datacenters`, is);
  if (dcs) out.datacenters = dcs;
  const meta = stringRecord(v.meta, `${path}.meta`, is);
  if (meta) out.meta = meta;
  if (!Array.isArray(v.taskGroups) || v.taskGroups.length === 0) is.add(`${path}.taskGroups`, 'must be a non-empty array');
  else {
    const seen = new Set<string>();
    v.taskGroups.forEach((g, i) => {
      const parsed = group(g, `${path}.taskGroups[${i}]`, is);
      if (!parsed) return;
      if (seen.has(parsed.name)) is.add(`${path}.taskGroups[${i}].name`, `duplicate group name ${JSON.stringify(parsed.name)}`);
      seen.add(parsed.name);
      out.taskGroups.push(parsed);
    });
  }
  passThrough(v, out, ['version', 'parentId', 'stop', 'update', 'submitTime']);
  // A partial restart policy takes the rest from the job type's default (a group's), then from
  // its group's (a task's), as Nomad's Canonicalize does.
  for (const g of out.taskGroups) {
    const groupPolicy = completeRestartPolicy(defaultRestartPolicy(type), g.restartPolicy);
    if (groupPolicy) g.restartPolicy = groupPolicy;
    for (const t of g.tasks) {
      const taskPolicy = completeRestartPolicy(groupPolicy ?? defaultRestartPolicy(type), t.restartPolicy);
      if (taskPolicy) t.restartPolicy = taskPolicy;
    }
  }
  return out;
}

function taskStates(v: unknown, path: string, is: Issues): Record<string, TaskState> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    is.add(path, 'must be an object');
    return undefined;
  }
  const out: Record<string, TaskState> = {};
  for (const [name, s] of Object.entries(v)) {
    const p = `${path}.${name}`;
    if (!isObj(s)) {
      is.add(p, 'must be an object');
      continue;
    }
    const state = oneOf<TaskState['state']>(s.state, TASK_STATES, `${p}.state`, is, 'pending') ?? 'pending';
    const events: TaskEvent[] = [];
    if (Array.isArray(s.events)) {
      s.events.forEach((e, i) => {
        if (!isObj(e) || typeof e.type !== 'string') is.add(`${p}.events[${i}]`, 'must be an event with a type');
        else
          events.push({
            type: e.type,
            time: typeof e.time === 'number' ? e.time : 0,
            ...(typeof e.message === 'string' && e.message ? { message: e.message } : {}),
            displayMessage: typeof e.displayMessage === 'string' ? e.displayMessage : '',
            details: isObj(e.details) ? (structuredClone(e.details) as Record<string, string>) : {},
          });
      });
    }
    const ts: TaskState = { state, failed: s.failed === true, restarts: nonNegInt(s.restarts, `${p}.restarts`, is, 0) ?? 0, events };
    for (const k of ['lastRestart', 'startedAt', 'finishedAt'] as const) {
      const t = nonNegNum(s[k], `${p}.${k}`, is);
      if (t) ts[k] = t;
    }
    if (typeof s.exitCode === 'number') ts.exitCode = s.exitCode;
    if (typeof s.signal === 'number') ts.signal = s.signal;
    if (typeof s.oomKilled === 'boolean') ts.oomKilled = s.oomKilled;
    out[name] = ts;
  }
  return out;
}

/**
 * Parses and validates an allocation given as berth's camelCase JSON or as Nomad's HTTP API JSON
 * (PascalCase, nanosecond durations, Nomad's zero time meaning absent).
 *
 * Before anything else the input must be plain JSON within `JSON_LIMITS` (see
 * `jsonValueProblems`); those problems name the path as given (PascalCase for Nomad input).
 *
 * @throws InvalidAllocationError naming every offending field path, in berth's camelCase names.
 * @example
 * const alloc = parseAllocation(JSON.parse(fs.readFileSync('alloc.json', 'utf8')));
 */
export function parseAllocation(json: unknown): Allocation {
  const is = new Issues();
  if (!isObj(json)) throw new InvalidAllocationError(['(root): must be an object']);
  // First: only plain JSON within bounds (no BigInt, cycles, functions, getters; bounded depth
  // and sizes), so nothing below can recurse too deep or meet a value it cannot copy or store.
  const notJson = jsonValueProblems(json);
  if (notJson.length) throw new InvalidAllocationError(notJson);
  const src = 'ID' in json && !('id' in json) ? fromNomad(json) : json;

  const id = str(src.id, 'id', is, { required: true });
  if (id && !isUUID(id)) is.add('id', 'must be a 36-character UUID');
  const nodeId = str(src.nodeId, 'nodeId', is, { required: true }) ?? '';
  const j = job(src.job, 'job', is);
  const jobId = str(src.jobId, 'jobId', is) || j?.id || '';
  if (!jobId) is.add('jobId', 'is required');
  else if (j && j.id && jobId !== j.id) is.add('jobId', `must match job.id ${JSON.stringify(j.id)}`);
  const taskGroup = str(src.taskGroup, 'taskGroup', is, { required: true }) ?? '';
  if (j && taskGroup && !j.taskGroups.some((g) => g.name === taskGroup)) is.add('taskGroup', `failed to lookup task group ${JSON.stringify(taskGroup)}`);
  const desiredStatus = oneOf<Allocation['desiredStatus']>(src.desiredStatus, DESIRED, 'desiredStatus', is, 'run') ?? 'run';
  const clientStatus = oneOf<Allocation['clientStatus']>(src.clientStatus, CLIENT, 'clientStatus', is, 'pending') ?? 'pending';
  const allocModifyIndex = nonNegInt(src.allocModifyIndex, 'allocModifyIndex', is, 0) ?? 0;

  const out: Allocation = { id: id ?? '', nodeId, jobId, job: j ?? ({} as Job), taskGroup, desiredStatus, clientStatus, allocModifyIndex };
  const ns = str(src.namespace, 'namespace', is);
  out.namespace = ns || j?.namespace || 'default';
  const cd = str(src.clientDescription, 'clientDescription', is);
  if (cd) out.clientDescription = cd;
  if (src.previousAllocation !== undefined && src.previousAllocation !== null && src.previousAllocation !== '') {
    if (!isUUID(src.previousAllocation)) is.add('previousAllocation', 'must be a 36-character UUID');
    else if (src.previousAllocation === id) is.add('previousAllocation', 'must not be the allocation itself');
    else out.previousAllocation = src.previousAllocation;
  }
  if (src.preemptedAllocations !== undefined && src.preemptedAllocations !== null) {
    if (!Array.isArray(src.preemptedAllocations)) is.add('preemptedAllocations', 'must be an array of allocation ids');
    else {
      const ids: string[] = [];
      src.preemptedAllocations.forEach((p, i) => {
        if (!isUUID(p)) is.add(`preemptedAllocations[${i}]`, 'must be a 36-character UUID');
        else if (p === id) is.add(`preemptedAllocations[${i}]`, 'must not be the allocation itself');
        else if (!ids.includes(p)) ids.push(p);
      });
      if (ids.length) out.preemptedAllocations = ids;
    }
  }
  const ct = nonNegNum(src.createTime, 'createTime', is);
  if (ct) out.createTime = ct;
  const name = str(src.name, 'name', is);
  if (name) out.name = name;
  const ts = taskStates(src.taskStates, 'taskStates', is);
  if (ts) out.taskStates = ts;
  if (src.desiredTransition !== undefined && src.desiredTransition !== null) {
    if (!isObj(src.desiredTransition)) is.add('desiredTransition', 'must be an object');
    else {
      const dt: DesiredTransition = {};
      for (const k of ['migrate', 'reschedule', 'forceReschedule', 'noShutdownDelay'] as const) {
        const v = src.desiredTransition[k];
        if (v === undefined || v === null) continue;
        if (typeof v !== 'boolean') is.add(`desiredTransition.${k}`, 'must be a boolean');
        else dt[k] = v;
      }
      if (Object.keys(dt).length) out.desiredTransition = dt;
    }
  }
  passThrough(src, out, [
    'evalId',
    'jobVersion',
    'desiredDescription',
    'deploymentId',
    'deploymentStatus',
    'rescheduleTracker',
    'followupEvalId',
    'allocatedResources',
    'modifyTime',
  ]);

  if (is.list.length) throw new InvalidAllocationError(is.list);
  return out;
}
