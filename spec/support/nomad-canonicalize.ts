/**
 * This Source Code Form is subject to the terms of the Mozilla Public License, v. 2.0. If a copy
 * of the MPL was not distributed with this file, You can obtain one at
 * https://mozilla.org/MPL/2.0/.
 *
 * Ported from hashicorp/nomad api/jobs.go, api/tasks.go, api/services.go, api/resources.go,
 * api/consul.go and api/scaling.go at aa026cc99cfb74a77e519a1c1f0c78ba1b452705 (MPL-2.0).
 *
 * An oracle for specs: Nomad's API `Job.Canonicalize` (and every `Canonicalize`, `Merge`, `Copy`
 * and default it calls), written again over the API JSON, independently of berth's own
 * `agent/jobspec/canonicalize.ts` (which it must not import: the point is a second opinion).
 * Go's nil is a field that is absent or `null`; durations are nanoseconds. It sets exactly what
 * Nomad's canonicalization sets; the zero values Go's encoder writes for non-pointer fields are
 * the caller's to add (`completeApiJob`), on both sides of a comparison.
 * @module
 */

type Obj = Record<string, unknown>;

/** A part of Nomad's canonicalization this port does not cover, met in a job. */
export class NotPortedError extends Error {
  /** @param what the struct whose `Canonicalize` is not ported. */
  constructor(readonly what: string) {
    super(`nomad-canonicalize: ${what}.Canonicalize is not ported (berth refuses it, so no job berth parses has one)`);
    this.name = 'NotPortedError';
  }
}

const S = 1e9;
const MIN = 60 * S;
const H = 60 * MIN;

/** Go's nil: a pointer, slice or map field left out or `null`. */
const isNil = (v: unknown): v is null | undefined => v === undefined || v === null;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The elements of a slice (nil is none). */
const each = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
/** A non-pointer string's value (absent is Go's zero, ""). */
const str = (o: Obj, k: string): string => (isNil(o[k]) ? '' : String(o[k]));
/** A non-pointer int's value (absent is 0). */
const int = (o: Obj, k: string): number => (isNil(o[k]) ? 0 : Number(o[k]));
/** `len(m) == 0` for a map or slice (nil has length 0). */
const empty = (v: unknown): boolean => isNil(v) || (Array.isArray(v) ? v.length === 0 : isObj(v) && Object.keys(v).length === 0);
/** `if o.k == nil { o.k = v }`. */
function dflt(o: Obj, k: string, v: unknown): void {
  if (isNil(o[k])) o[k] = v;
}
/** Go's shallow struct copy (`*n = *m`): nested pointers shared, which JSON cannot tell apart. */
const copy = (o: Obj): Obj => ({ ...o });
/** The `Merge` of the policy structs: each non-nil field of `over` replaces `base`'s. */
function mergeSet(base: Obj, over: Obj, fields: readonly string[]): void {
  for (const f of fields) if (!isNil(over[f])) base[f] = over[f];
}

const UPDATE_FIELDS = ['Stagger', 'MaxParallel', 'HealthCheck', 'MinHealthyTime', 'HealthyDeadline', 'ProgressDeadline', 'AutoRevert', 'Canary', 'AutoPromote'];
const RESCHEDULE_FIELDS = ['Interval', 'Attempts', 'Delay', 'DelayFunction', 'MaxDelay', 'Unlimited'];
const RESTART_FIELDS = ['Interval', 'Attempts', 'Delay', 'Mode', 'RenderTemplates'];
const MIGRATE_FIELDS = ['MaxParallel', 'HealthCheck', 'MinHealthyTime', 'HealthyDeadline'];

// --- api/jobs.go

/** `DefaultUpdateStrategy`. */
function defaultUpdateStrategy(): Obj {
  return {
    Stagger: 30 * S,
    MaxParallel: 1,
    HealthCheck: 'checks',
    MinHealthyTime: 10 * S,
    HealthyDeadline: 5 * MIN,
    ProgressDeadline: 10 * MIN,
    AutoRevert: false,
    Canary: 0,
    AutoPromote: false,
  };
}

/** `UpdateStrategy.Canonicalize`: every nil field from the default. */
function canonicalizeUpdate(u: Obj): void {
  const d = defaultUpdateStrategy();
  for (const f of UPDATE_FIELDS) dflt(u, f, d[f]);
}

/** `UpdateStrategy.Empty`: no field set to a non-zero value. */
function updateEmpty(u: Obj | undefined | null): boolean {
  if (isNil(u)) return true;
  for (const f of ['Stagger', 'MaxParallel', 'MinHealthyTime', 'HealthyDeadline', 'ProgressDeadline', 'Canary']) if (!isNil(u[f]) && u[f] !== 0) return false;
  if (!isNil(u.HealthCheck) && u.HealthCheck !== '') return false;
  if (u.AutoRevert === true || u.AutoPromote === true) return false;
  return true;
}

/** `Multiregion.Canonicalize`. */
function canonicalizeMultiregion(m: Obj): void {
  if (isNil(m.Strategy)) m.Strategy = { MaxParallel: 0, OnFailure: '' };
  else {
    const s = m.Strategy as Obj;
    dflt(s, 'MaxParallel', 0);
    dflt(s, 'OnFailure', '');
  }
  dflt(m, 'Regions', []);
  for (const r of each(m.Regions)) {
    dflt(r, 'Count', 1);
    dflt(r, 'Datacenters', []);
    dflt(r, 'Meta', {});
  }
}

/** `PeriodicConfig.Canonicalize`. */
function canonicalizePeriodic(p: Obj): void {
  dflt(p, 'Enabled', true);
  dflt(p, 'Spec', '');
  dflt(p, 'Specs', []);
  dflt(p, 'SpecType', 'cron');
  dflt(p, 'ProhibitOverlap', false);
  if (isNil(p.TimeZone) || p.TimeZone === '') p.TimeZone = 'UTC';
}

/** `JobUIConfig.Canonicalize`: no links is nil. */
function canonicalizeUi(ui: Obj): void {
  if (empty(ui.Links)) ui.Links = null;
}

/**
 * Nomad's `api.Job.Canonicalize` on a copy of `input` (API JSON): what `/v1/jobs/parse` answers
 * with `Canonicalize: true` for the job it answers without.
 * @throws NotPortedError for a service's `connect` block (berth refuses Connect).
 */
export function nomadCanonicalize(input: Obj): Obj {
  const j = structuredClone(input);
  dflt(j, 'ID', '');
  dflt(j, 'Name', j.ID);
  dflt(j, 'ParentID', '');
  dflt(j, 'Namespace', 'default');
  dflt(j, 'Priority', 50);
  dflt(j, 'Stop', false);
  dflt(j, 'Region', 'global');
  dflt(j, 'NodePool', '');
  dflt(j, 'Type', 'service');
  dflt(j, 'AllAtOnce', false);
  for (const k of ['ConsulNamespace', 'VaultNamespace', 'NomadTokenID', 'Status', 'StatusDescription']) dflt(j, k, '');
  dflt(j, 'Stable', false);
  for (const k of ['Version', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex']) dflt(j, k, 0);
  if (isObj(j.Periodic)) canonicalizePeriodic(j.Periodic);
  if (isObj(j.Update)) canonicalizeUpdate(j.Update);
  else if (j.Type === 'service' || j.Type === 'system') j.Update = defaultUpdateStrategy();
  if (isObj(j.Multiregion)) canonicalizeMultiregion(j.Multiregion);
  for (const tg of each(j.TaskGroups)) canonicalizeGroup(tg, j);
  for (const s of each(j.Spreads)) canonicalizeWeighted(s);
  for (const a of each(j.Affinities)) canonicalizeWeighted(a);
  if (isObj(j.UI)) canonicalizeUi(j.UI);
  return j;
}

// --- api/tasks.go

/** `Affinity.Canonicalize` and `Spread.Canonicalize`: a weight of 50 when nil. */
function canonicalizeWeighted(a: Obj): void {
  dflt(a, 'Weight', 50);
}

/** `NewDefaultReschedulePolicy(jobType)`. */
function defaultReschedulePolicy(jobType: unknown): Obj {
  if (jobType === 'service') return { Delay: 30 * S, DelayFunction: 'exponential', MaxDelay: 1 * H, Unlimited: true, Attempts: 0, Interval: 0 };
  if (jobType === 'batch') return { Attempts: 1, Interval: 24 * H, Delay: 5 * S, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false };
  return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: '', MaxDelay: 0, Unlimited: false };
}

/** `defaultServiceJobRestartPolicy` / `defaultBatchJobRestartPolicy`. */
function defaultRestartPolicy(jobType: unknown): Obj {
  return jobType === 'service' || jobType === 'system'
    ? { Delay: 15 * S, Attempts: 2, Interval: 30 * MIN, Mode: 'fail', RenderTemplates: false }
    : { Delay: 15 * S, Attempts: 3, Interval: 24 * H, Mode: 'fail', RenderTemplates: false };
}

/** `DefaultEphemeralDisk` / `EphemeralDisk.Canonicalize`. */
function canonicalizeEphemeralDisk(e: Obj): void {
  dflt(e, 'Sticky', false);
  dflt(e, 'Migrate', false);
  dflt(e, 'SizeMB', 300);
}

/** `VolumeMount.Canonicalize`. */
function canonicalizeVolumeMount(vm: Obj): void {
  dflt(vm, 'PropagationMode', 'private');
  dflt(vm, 'ReadOnly', false);
  dflt(vm, 'SELinuxLabel', '');
}

/** `TaskGroup.Canonicalize`: defaults, and what the group inherits from the job. */
function canonicalizeGroup(g: Obj, job: Obj): void {
  dflt(g, 'Name', '');
  if (isNil(g.Count)) {
    const scaling = g.Scaling as Obj | null | undefined;
    g.Count = isObj(scaling) && !isNil(scaling.Min) ? Math.trunc(Number(scaling.Min)) : 1;
  }
  if (isObj(g.Scaling)) canonicalizeScaling(g.Scaling, g.Count as number);
  if (isNil(g.EphemeralDisk)) g.EphemeralDisk = {};
  canonicalizeEphemeralDisk(g.EphemeralDisk as Obj);
  if (isObj(g.Consul)) {
    consulMergeNamespace(g.Consul, job.ConsulNamespace);
    canonicalizeConsul(g.Consul);
  }

  const ju = job.Update as Obj | null | undefined;
  if (isObj(ju) && isObj(g.Update)) {
    const jc = copy(ju);
    mergeSet(jc, g.Update, UPDATE_FIELDS);
    g.Update = jc;
  } else if (isObj(ju) && !updateEmpty(ju)) g.Update = copy(ju);
  if (isObj(g.Update)) canonicalizeUpdate(g.Update);

  const jr = job.Reschedule as Obj | null | undefined;
  if (isObj(jr) && isObj(g.ReschedulePolicy)) {
    const c = copy(jr);
    mergeSet(c, g.ReschedulePolicy, RESCHEDULE_FIELDS);
    g.ReschedulePolicy = c;
  } else if (isObj(jr)) g.ReschedulePolicy = copy(jr);
  if (isNil(g.ReschedulePolicy) && job.Type !== 'sysbatch' && job.Type !== 'system') g.ReschedulePolicy = defaultReschedulePolicy(job.Type);
  if (isObj(g.ReschedulePolicy)) {
    const dp = defaultReschedulePolicy(job.Type);
    for (const f of RESCHEDULE_FIELDS) dflt(g.ReschedulePolicy, f, dp[f]);
  }

  const jm = job.Migrate as Obj | null | undefined;
  if (isObj(jm) && isObj(g.Migrate)) {
    const c = copy(jm);
    mergeSet(c, g.Migrate, MIGRATE_FIELDS);
    g.Migrate = c;
  } else if (isObj(jm)) g.Migrate = copy(jm);
  if (isNil(g.Migrate) && job.Type === 'service') g.Migrate = {};
  if (isObj(g.Migrate)) {
    const d: Obj = { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN };
    for (const f of MIGRATE_FIELDS) dflt(g.Migrate, f, d[f]);
  }

  const restart = defaultRestartPolicy(job.Type);
  if (isObj(g.RestartPolicy)) mergeSet(restart, g.RestartPolicy, RESTART_FIELDS);
  g.RestartPolicy = restart;

  for (const t of each(g.Tasks)) canonicalizeTask(t, g, job);
  for (const s of each(g.Spreads)) canonicalizeWeighted(s);
  for (const a of each(g.Affinities)) canonicalizeWeighted(a);
  // NetworkResource.Canonicalize is a no-op (COMPAT(0.13)): ports keep what the file says.
  for (const s of each(g.Services)) canonicalizeService(s, undefined, g, job);
  if (isObj(g.Disconnect)) {
    dflt(g.Disconnect, 'Replace', true);
    dflt(g.Disconnect, 'Reconcile', 'best_score');
  }
}

/** `LogConfig.Canonicalize` (and `DefaultLogConfig` for nil). */
function canonicalizeLogConfig(l: Obj): void {
  dflt(l, 'MaxFiles', 10);
  dflt(l, 'MaxFileSizeMB', 10);
  dflt(l, 'Disabled', false);
}

/** `Task.Canonicalize`. */
function canonicalizeTask(t: Obj, tg: Obj, job: Obj): void {
  if (isNil(t.Resources)) t.Resources = {};
  canonicalizeResources(t.Resources as Obj);
  dflt(t, 'KillTimeout', 5 * S);
  if (isNil(t.LogConfig)) t.LogConfig = {};
  canonicalizeLogConfig(t.LogConfig as Obj);
  for (const a of each(t.Artifacts)) canonicalizeArtifact(a);
  if (isObj(t.Vault)) canonicalizeVault(t.Vault);
  if (isObj(t.Consul)) canonicalizeConsul(t.Consul);
  for (const tmpl of each(t.Templates)) canonicalizeTemplate(tmpl);
  for (const s of each(t.Secrets)) {
    if (empty(s.Config)) s.Config = null;
    if (empty(s.Env)) s.Env = null;
  }
  for (const s of each(t.Services)) canonicalizeService(s, t, tg, job);
  for (const a of each(t.Affinities)) canonicalizeWeighted(a);
  for (const vm of each(t.VolumeMounts)) canonicalizeVolumeMount(vm);
  // Lifecycle.Empty() is `l == nil`: nothing to drop.
  if (isObj(t.CSIPluginConfig)) canonicalizeCsiPlugin(t.CSIPluginConfig);
  if (isNil(t.RestartPolicy)) t.RestartPolicy = tg.RestartPolicy;
  else {
    const r = copy(tg.RestartPolicy as Obj);
    mergeSet(r, t.RestartPolicy as Obj, RESTART_FIELDS);
    t.RestartPolicy = r;
  }
}

/** Go's `path.Base`. */
function goPathBase(p: string): string {
  if (p === '') return '.';
  let s = p.replace(/\/+$/, '');
  const i = s.lastIndexOf('/');
  if (i >= 0) s = s.slice(i + 1);
  return s === '' ? '/' : s;
}

/** Go's `path.Clean` (the lexical rules `filepath.Join` applies on Unix). */
function goPathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
    } else out.push(part);
  }
  const s = (rooted ? '/' : '') + out.join('/');
  return s === '' ? '.' : s;
}

/** `TaskArtifact.Canonicalize`. */
function canonicalizeArtifact(a: Obj): void {
  dflt(a, 'GetterMode', 'any');
  dflt(a, 'GetterInsecure', false);
  dflt(a, 'GetterSource', '');
  if (empty(a.GetterOptions)) a.GetterOptions = null;
  if (empty(a.GetterHeaders)) a.GetterHeaders = null;
  if (isNil(a.RelativeDest)) {
    // File mode: local/<path.Base(source)>, the whole source (a query string too), as Nomad.
    a.RelativeDest = a.GetterMode === 'file' ? goPathClean(`local/${goPathBase(String(a.GetterSource))}`) : 'local/';
  }
}

/** `ChangeScript.Canonicalize`. */
function canonicalizeChangeScript(ch: Obj): void {
  dflt(ch, 'Command', '');
  dflt(ch, 'Args', []);
  dflt(ch, 'Timeout', 5 * S);
  dflt(ch, 'FailOnError', false);
  dflt(ch, 'RunOnFirstRender', false);
}

/** `Template.Canonicalize`. */
function canonicalizeTemplate(t: Obj): void {
  dflt(t, 'SourcePath', '');
  dflt(t, 'DestPath', '');
  dflt(t, 'EmbeddedTmpl', '');
  dflt(t, 'ChangeMode', 'restart');
  if (isNil(t.ChangeSignal)) t.ChangeSignal = t.ChangeMode === 'signal' ? 'SIGHUP' : '';
  else t.ChangeSignal = String(t.ChangeSignal).toUpperCase();
  if (isObj(t.ChangeScript)) canonicalizeChangeScript(t.ChangeScript);
  dflt(t, 'Once', false);
  dflt(t, 'Splay', 5 * S);
  dflt(t, 'Perms', '0644');
  dflt(t, 'LeftDelim', '{{');
  dflt(t, 'RightDelim', '}}');
  dflt(t, 'Envvars', false);
  dflt(t, 'ErrMissingKey', false);
  dflt(t, 'VaultGrace', 0);
}

/** `Vault.Canonicalize`. */
function canonicalizeVault(v: Obj): void {
  dflt(v, 'Env', true);
  dflt(v, 'DisableFile', false);
  dflt(v, 'Namespace', '');
  if (str(v, 'Cluster') === '') v.Cluster = 'default';
  dflt(v, 'ChangeMode', 'restart');
  dflt(v, 'ChangeSignal', 'SIGHUP');
  dflt(v, 'AllowTokenExpiration', false);
}

/** `TaskCSIPluginConfig.Canonicalize`. */
function canonicalizeCsiPlugin(c: Obj): void {
  if (str(c, 'MountDir') === '') c.MountDir = '/csi';
  if (str(c, 'StagePublishBaseDir') === '') c.StagePublishBaseDir = '/local/csi';
  if (int(c, 'HealthTimeout') === 0) c.HealthTimeout = 30 * S;
}

// --- api/resources.go

/** `Resources.Canonicalize` (`DefaultResources`: 100 MHz, no cores, 300 MB). */
function canonicalizeResources(r: Obj): void {
  if (isNil(r.Cores)) {
    r.Cores = 0;
    dflt(r, 'CPU', 100);
  }
  dflt(r, 'CPU', 0);
  dflt(r, 'MemoryMB', 300);
  for (const d of each(r.Devices)) {
    dflt(d, 'Count', 1);
    for (const a of each(d.Affinities)) canonicalizeWeighted(a);
  }
  if (isObj(r.NUMA)) {
    if (str(r.NUMA, 'Affinity') === '') r.NUMA.Affinity = 'none';
    if (empty(r.NUMA.Devices)) r.NUMA.Devices = null;
  }
}

// --- api/services.go

/** `CheckRestart.Merge`: a copy of `c` with `o`'s limit (when > 0), grace and ignore_warnings (when true). */
function mergeCheckRestart(c: Obj | null | undefined, o: Obj | null | undefined): Obj | null | undefined {
  if (isNil(c)) return o;
  const nc: Obj = { Limit: int(c, 'Limit'), IgnoreWarnings: c.IgnoreWarnings === true };
  if (!isNil(c.Grace)) nc.Grace = c.Grace;
  if (isNil(o)) return nc;
  if (int(o, 'Limit') > 0) nc.Limit = o.Limit;
  if (!isNil(o.Grace)) nc.Grace = o.Grace;
  if (o.IgnoreWarnings === true) nc.IgnoreWarnings = true;
  return nc;
}

/** `Service.Canonicalize`: name, address mode, on_update, provider, cluster, and each check. */
function canonicalizeService(s: Obj, t: Obj | undefined, tg: Obj, job: Obj): void {
  if (str(s, 'Name') === '') s.Name = t ? `${job.Name}-${tg.Name}-${str(t, 'Name')}` : `${job.Name}-${tg.Name}`;
  if (str(s, 'AddressMode') === '') s.AddressMode = 'auto';
  if (str(s, 'OnUpdate') === '') s.OnUpdate = 'require_healthy';
  if (str(s, 'Provider') === '') s.Provider = 'consul';
  if (str(s, 'Cluster') === '') s.Cluster = 'default';
  for (const k of ['Meta', 'CanaryMeta', 'TaggedAddresses']) if (empty(s[k])) s[k] = null;
  if (!isNil(s.Connect)) throw new NotPortedError('ConsulConnect');
  if (isObj(s.Weights)) {
    if (int(s.Weights, 'Passing') <= 0) s.Weights.Passing = 1;
    if (int(s.Weights, 'Warning') <= 0) s.Weights.Warning = 1;
  }
  for (const c of each(s.Checks)) {
    const cr = mergeCheckRestart(s.CheckRestart as Obj | null | undefined, c.CheckRestart as Obj | null | undefined);
    c.CheckRestart = cr === undefined ? null : isObj(cr) ? copy(cr) : cr;
    if (isObj(c.CheckRestart)) dflt(c.CheckRestart, 'Grace', 1 * S);
    for (const k of ['SuccessBeforePassing', 'FailuresBeforeCritical', 'FailuresBeforeWarning']) if (int(c, k) < 0) c[k] = 0;
    if (str(c, 'OnUpdate') === '') c.OnUpdate = s.OnUpdate;
  }
}

// --- api/consul.go

/** `Consul.MergeNamespace`: the job's consul namespace when the group sets none. */
function consulMergeNamespace(c: Obj, namespace: unknown): void {
  if (str(c, 'Namespace') === '' && !isNil(namespace)) c.Namespace = namespace;
}

/** `Consul.Canonicalize`: the default cluster. */
function canonicalizeConsul(c: Obj): void {
  if (str(c, 'Cluster') === '') c.Cluster = 'default';
}

// --- api/scaling.go

/** `ScalingPolicy.Canonicalize(taskGroupCount)`. */
function canonicalizeScaling(p: Obj, count: number): void {
  dflt(p, 'Enabled', true);
  dflt(p, 'Min', count);
  if (str(p, 'Type') === '') p.Type = 'horizontal';
}
