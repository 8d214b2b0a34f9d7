/**
 * Nomad's API `Canonicalize` on a parsed job (PascalCase, nanoseconds): the defaults a job file
 * leaves out, as `/v1/jobs/parse` with `Canonicalize: true` fills them. Values come from berth's
 * job defaults (the same numbers Nomad uses), converted to nanoseconds.
 * @module
 */
import {
  DEFAULT_EPHEMERAL_DISK_MB,
  DEFAULT_JOB_PRIORITY,
  DEFAULT_KILL_TIMEOUT_MS,
  DEFAULT_LOGS,
  DEFAULT_MIGRATE,
  DEFAULT_UPDATE,
  defaultReschedulePolicy,
  defaultRestartPolicy,
  type Job,
} from '../../index.ts';
import { posix } from 'node:path';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const ns = (ms: number) => ms * 1e6;

/** Sets `o[k]` to `v` when it is undefined or null. */
function dflt(o: Obj, k: string, v: unknown): void {
  if (o[k] === undefined || o[k] === null) o[k] = v;
}

function defaultUpdate(): Obj {
  const u = DEFAULT_UPDATE;
  return {
    Stagger: ns(u.staggerMs),
    MaxParallel: u.maxParallel,
    HealthCheck: u.healthCheck,
    MinHealthyTime: ns(u.minHealthyTimeMs),
    HealthyDeadline: ns(u.healthyDeadlineMs),
    ProgressDeadline: ns(u.progressDeadlineMs),
    AutoRevert: u.autoRevert,
    AutoPromote: u.autoPromote,
    Canary: u.canary,
  };
}

/** Nomad's `UpdateStrategy.Empty`: nothing set to a non-zero value. */
function updateEmpty(u: Obj | undefined): boolean {
  return !u || Object.values(u).every((v) => v === undefined || v === null || v === 0 || v === '' || v === false);
}

/** Fields of `over` that are set win over `base` (Nomad's `Merge`). */
function merge(base: Obj, over: Obj | undefined): Obj {
  const out = { ...base };
  for (const [k, v] of Object.entries(over ?? {})) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

function restartFor(type: Job['type']): Obj {
  const r = defaultRestartPolicy(type);
  return { Attempts: r.attempts, Interval: ns(r.intervalMs), Delay: ns(r.delayMs), Mode: r.mode, RenderTemplates: false };
}

function rescheduleFor(type: Job['type']): Obj {
  const r = defaultReschedulePolicy(type);
  if (!r) return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: '', MaxDelay: 0, Unlimited: false };
  return {
    Attempts: r.attempts,
    Interval: ns(r.intervalMs),
    Delay: ns(r.delayMs),
    DelayFunction: r.delayFunction,
    MaxDelay: ns(r.maxDelayMs),
    Unlimited: r.unlimited,
  };
}

/** Canonicalises `job` in place (Nomad's `Job.Canonicalize`) and returns it. */
export function canonicalizeJob(job: Obj): Obj {
  dflt(job, 'ID', '');
  dflt(job, 'Name', job.ID);
  dflt(job, 'ParentID', '');
  dflt(job, 'Namespace', 'default');
  dflt(job, 'Priority', DEFAULT_JOB_PRIORITY);
  dflt(job, 'Stop', false);
  dflt(job, 'Region', 'global');
  dflt(job, 'NodePool', '');
  dflt(job, 'Type', 'service');
  dflt(job, 'AllAtOnce', false);
  for (const k of ['ConsulNamespace', 'VaultNamespace', 'NomadTokenID', 'Status', 'StatusDescription']) dflt(job, k, '');
  dflt(job, 'Stable', false);
  for (const k of ['Version', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex']) dflt(job, k, 0);
  const type = job.Type as Job['type'];
  if (isObj(job.Update)) job.Update = merge(defaultUpdate(), job.Update);
  else if (type === 'service' || type === 'system') job.Update = defaultUpdate();
  placementDefaults(job);
  // PeriodicConfig.Canonicalize: no cron is "" and no crons an empty list; an empty time zone is UTC.
  if (isObj(job.Periodic)) {
    const p = merge({ Enabled: true, Spec: '', Specs: [], SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' }, job.Periodic);
    if (p.TimeZone === '') p.TimeZone = 'UTC';
    job.Periodic = p;
  }
  // A parameterized job's payload rule stays as written: Nomad's API canonicalization leaves it
  // (its server reads "" as optional, as berth's dispatch does).
  // JobUIConfig.Canonicalize: no links is null.
  if (isObj(job.UI)) {
    dflt(job.UI, 'Description', '');
    if (!Array.isArray(job.UI.Links) || job.UI.Links.length === 0) job.UI.Links = null;
  }
  for (const g of (job.TaskGroups as Obj[] | undefined) ?? []) canonicalizeGroup(g, job, type);
  return job;
}

function canonicalizeGroup(g: Obj, job: Obj, type: Job['type']): void {
  dflt(g, 'Name', '');
  dflt(g, 'Count', 1);
  g.EphemeralDisk = merge({ Sticky: false, Migrate: false, SizeMB: DEFAULT_EPHEMERAL_DISK_MB }, g.EphemeralDisk as Obj | undefined);
  const ju = job.Update as Obj | undefined;
  const gu = g.Update as Obj | undefined;
  if (ju && gu) g.Update = merge(ju, gu);
  else if (ju && !updateEmpty(ju)) g.Update = { ...ju };
  if (isObj(g.Update)) g.Update = merge(defaultUpdate(), g.Update);
  const jr = job.Reschedule as Obj | undefined;
  if (jr && g.ReschedulePolicy) g.ReschedulePolicy = merge(jr, g.ReschedulePolicy as Obj);
  else if (jr) g.ReschedulePolicy = { ...jr };
  if (!g.ReschedulePolicy && type !== 'sysbatch' && type !== 'system') g.ReschedulePolicy = rescheduleFor(type);
  if (isObj(g.ReschedulePolicy)) g.ReschedulePolicy = merge(rescheduleFor(type), g.ReschedulePolicy);
  const jm = job.Migrate as Obj | undefined;
  if (jm && g.Migrate) g.Migrate = merge(jm, g.Migrate as Obj);
  else if (jm) g.Migrate = { ...jm };
  if (!g.Migrate && type === 'service') g.Migrate = {};
  if (isObj(g.Migrate)) {
    const m = DEFAULT_MIGRATE;
    g.Migrate = merge(
      { MaxParallel: m.maxParallel, HealthCheck: m.healthCheck, MinHealthyTime: ns(m.minHealthyTimeMs), HealthyDeadline: ns(m.healthyDeadlineMs) },
      g.Migrate,
    );
  }
  g.RestartPolicy = merge(restartFor(type), g.RestartPolicy as Obj | undefined);
  placementDefaults(g);
  for (const t of (g.Tasks as Obj[] | undefined) ?? []) canonicalizeTask(t, g, job);
  for (const n of (g.Networks as Obj[] | undefined) ?? [])
    for (const k of ['ReservedPorts', 'DynamicPorts']) for (const p of (n[k] as Obj[] | null) ?? []) portDefaults(p);
  for (const s of (g.Services as Obj[] | undefined) ?? []) canonicalizeService(s, undefined, g, job);
  if (isObj(g.Disconnect)) {
    dflt(g.Disconnect, 'Replace', true);
    dflt(g.Disconnect, 'Reconcile', 'best_score');
  }
}

/** Nomad's Affinity and Spread Canonicalize: weight 50 when unset. */
function placementDefaults(o: Obj): void {
  for (const k of ['Affinities', 'Spreads']) for (const a of Array.isArray(o[k]) ? (o[k] as Obj[]) : []) if (isObj(a)) dflt(a, 'Weight', 50);
}

/**
 * A port's numbers at Go's zero. Nothing more: Nomad's `NetworkResource.Canonicalize` is a no-op,
 * so an unset `host_network` stays "" (its server, not the API, reads that as "default").
 */
function portDefaults(p: Obj): void {
  dflt(p, 'Value', 0);
  dflt(p, 'To', 0);
}

function canonicalizeTask(t: Obj, g: Obj, job: Obj): void {
  const r = (t.Resources ??= {}) as Obj;
  for (const n of (r.Networks as Obj[] | undefined) ?? [])
    for (const k of ['ReservedPorts', 'DynamicPorts']) for (const p of (n[k] as Obj[] | null) ?? []) portDefaults(p);
  if (r.Cores === undefined) {
    r.Cores = 0;
    dflt(r, 'CPU', 100);
  }
  dflt(r, 'CPU', 0);
  dflt(r, 'MemoryMB', 300);
  dflt(t, 'KillTimeout', ns(DEFAULT_KILL_TIMEOUT_MS));
  placementDefaults(t);
  t.LogConfig = merge({ MaxFiles: DEFAULT_LOGS.maxFiles, MaxFileSizeMB: DEFAULT_LOGS.maxFileSizeMB, Disabled: false }, t.LogConfig as Obj | undefined);
  for (const a of (t.Artifacts as Obj[] | undefined) ?? []) {
    // No options or headers is null, as an empty block.
    for (const k of ['GetterOptions', 'GetterHeaders']) if (isObj(a[k]) && Object.keys(a[k]).length === 0) a[k] = null;
    dflt(a, 'GetterMode', 'any');
    dflt(a, 'GetterInsecure', false);
    dflt(a, 'GetterSource', '');
    if (a.RelativeDest === undefined) a.RelativeDest = a.GetterMode === 'file' ? fileModeDest(String(a.GetterSource)) : 'local/';
  }
  for (const tmpl of (t.Templates as Obj[] | undefined) ?? []) canonicalizeTemplate(tmpl);
  for (const s of (t.Services as Obj[] | undefined) ?? []) canonicalizeService(s, t, g, job);
  t.RestartPolicy = merge(g.RestartPolicy as Obj, t.RestartPolicy as Obj | undefined);
  dflt(t, 'Leader', false);
  dflt(t, 'ShutdownDelay', 0);
  dflt(t, 'KillSignal', '');
  dflt(t, 'User', '');
}

/**
 * A file-mode artifact's default destination as Nomad's API writes it: `local/` and the last
 * element of the whole source (Go's `path.Base`, a query string included), cleaned as Go's
 * `filepath.Join` cleans it.
 */
function fileModeDest(source: string): string {
  const trimmed = source.replace(/\/+$/, '');
  const base = source === '' ? '.' : trimmed === '' ? '/' : trimmed.slice(trimmed.lastIndexOf('/') + 1);
  const joined = posix.join('local', base);
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

function canonicalizeService(s: Obj, t: Obj | undefined, g: Obj, job: Obj): void {
  if (!s.Name) s.Name = t ? `${job.Name}-${g.Name}-${t.Name}` : `${job.Name}-${g.Name}`;
  if (!s.AddressMode) s.AddressMode = 'auto';
  if (!s.OnUpdate) s.OnUpdate = 'require_healthy';
  // Nomad defaults to Consul; berth has only Nomad's own catalog, so an unset provider is "nomad".
  if (!s.Provider) s.Provider = 'nomad';
  // Nomad writes the default Consul cluster's name into every service, whatever its provider.
  if (!s.Cluster) s.Cluster = 'default';
  // No meta is null, as Nomad's Service.Canonicalize writes an empty block.
  for (const k of ['Meta', 'CanaryMeta', 'TaggedAddresses']) if (isObj(s[k]) && Object.keys(s[k]).length === 0) s[k] = null;
  for (const c of (s.Checks as Obj[] | undefined) ?? []) {
    const cr = checkRestartOf(s.CheckRestart as Obj | null | undefined, c.CheckRestart as Obj | null | undefined);
    if (cr) c.CheckRestart = merge({ Limit: 0, Grace: ns(1000), IgnoreWarnings: false }, cr);
    if (!c.OnUpdate) c.OnUpdate = s.OnUpdate;
  }
}

/** Nomad's `Template.Canonicalize`: every unset field at its default, the change signal in capitals. */
function canonicalizeTemplate(t: Obj): void {
  const signal = t.ChangeSignal;
  Object.assign(
    t,
    merge(
      {
        SourcePath: '',
        DestPath: '',
        EmbeddedTmpl: '',
        ChangeMode: 'restart',
        Once: false,
        Splay: ns(5000),
        Perms: '0644',
        LeftDelim: '{{',
        RightDelim: '}}',
        Envvars: false,
        ErrMissingKey: false,
        VaultGrace: 0,
      },
      t,
    ),
  );
  t.ChangeSignal = typeof signal === 'string' ? signal.toUpperCase() : t.ChangeMode === 'signal' ? 'SIGHUP' : '';
  if (isObj(t.ChangeScript)) t.ChangeScript = merge({ Command: '', Args: [], Timeout: ns(5000), FailOnError: false, RunOnFirstRender: false }, t.ChangeScript);
}

/**
 * A check's `check_restart`: the service's with the check's over it, as Nomad's
 * `CheckRestart.Merge`: the check's limit only when above 0, its grace when set, its
 * ignore_warnings only when true (a check cannot turn the service's off).
 */
function checkRestartOf(service: Obj | null | undefined, check: Obj | null | undefined): Obj | undefined {
  if (!service) return check ?? undefined;
  const out = { ...service };
  if (!check) return out;
  if (typeof check.Limit === 'number' && check.Limit > 0) out.Limit = check.Limit;
  if (check.Grace !== undefined && check.Grace !== null) out.Grace = check.Grace;
  if (check.IgnoreWarnings === true) out.IgnoreWarnings = true;
  return out;
}
