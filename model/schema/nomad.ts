/**
 * Nomad's API JSON (PascalCase, durations in nanoseconds, Go's zero values for "unset") to berth's
 * camelCase and back, from one table per object. Every key of Nomad's Job, TaskGroup, Task (and
 * the blocks inside them) is in a table: mapped, deliberately ignored (server bookkeeping that
 * changes nothing on a node), or refused as a stanza berth does not run. A key in no table is an
 * unknown field with a did-you-mean, never a silent drop.
 * @module
 */
import { renderPath, unknownKeyProblem } from './issues.ts';
import type { UnsupportedStanza } from '../errors.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How one Nomad key maps. */
type Kind =
  | 'plain' // same value
  | 'str' // string; '' means unset
  | 'num' // number; 0 means unset
  | 'dur' // ns <-> ms
  | 'durSet' // ns <-> ms, 0 kept (a duration whose zero means something)
  | 'time' // ns since epoch or RFC 3339 <-> ms; zero time means unset
  | 'true' // boolean; false means unset
  | { obj: string } // nested object
  | { list: string } // list of nested objects
  | { map: string }; // map of nested objects

/** A mapped key: Nomad name, berth name, kind. */
type Field = [nomad: string, berth: string, kind: Kind];

interface Table {
  fields: Field[];
  /** Nomad keys berth reads no meaning from on a node (server bookkeeping, cosmetic), with why in the docs. */
  ignored?: string[];
  /** Nomad keys naming a stanza berth refuses, when set to anything but its empty value: key -> stanza name. */
  unsupported?: Record<string, string>;
}

const TABLES: Record<string, Table> = {
  Job: {
    fields: [
      ['ID', 'id', 'plain'],
      ['Name', 'name', 'str'],
      ['Namespace', 'namespace', 'str'],
      ['Type', 'type', 'str'],
      ['Priority', 'priority', 'num'],
      ['Region', 'region', 'str'],
      ['Datacenters', 'datacenters', 'plain'],
      ['Meta', 'meta', 'plain'],
      ['TaskGroups', 'taskGroups', { list: 'TaskGroup' }],
      ['Version', 'version', 'plain'],
      ['ParentID', 'parentId', 'str'],
      ['ParameterizedJob', 'parameterized', { obj: 'ParameterizedJob' }],
      ['Payload', 'payload', 'str'],
      ['Dispatched', 'dispatched', 'true'],
      ['Periodic', 'periodic', { obj: 'Periodic' }],
      ['Stop', 'stop', 'true'],
      ['Update', 'update', { obj: 'Update' }],
      ['SubmitTime', 'submitTime', 'time'],
      ['Constraints', 'constraints', { list: 'Constraint' }],
      ['Affinities', 'affinities', { list: 'Affinity' }],
      ['Spreads', 'spreads', { list: 'Spread' }],
    ],
    ignored: [
      'AllAtOnce',
      'NodePool',
      'Status',
      'StatusDescription',
      'Stable',
      'CreateIndex',
      'ModifyIndex',
      'JobModifyIndex',
      'ConsulToken',
      'VaultToken',
      'ConsulNamespace',
      'VaultNamespace',
      'NomadTokenID',
      'DispatchIdempotencyToken',
      'VersionTag',
      'UI',
      // Job-level defaults: merged into every group below (as Canonicalize does).
      'Reschedule',
      'Migrate',
    ],
    unsupported: {
      Multiregion: 'multiregion',
    },
  },
  TaskGroup: {
    fields: [
      ['Name', 'name', 'plain'],
      ['Count', 'count', 'plain'],
      ['Tasks', 'tasks', { list: 'Task' }],
      ['EphemeralDisk', 'ephemeralDisk', { obj: 'EphemeralDisk' }],
      ['RestartPolicy', 'restartPolicy', { obj: 'RestartPolicy' }],
      ['Meta', 'meta', 'plain'],
      ['ShutdownDelay', 'shutdownDelayMs', 'dur'],
      ['MaxRunDuration', 'maxRunDurationMs', 'dur'],
      ['Disconnect', 'disconnect', { obj: 'Disconnect' }],
      ['MaxClientDisconnect', 'maxClientDisconnectMs', 'dur'],
      ['ReschedulePolicy', 'reschedulePolicy', { obj: 'ReschedulePolicy' }],
      ['Migrate', 'migrate', { obj: 'Migrate' }],
      ['Update', 'update', { obj: 'Update' }],
      ['Networks', 'networks', { list: 'Network' }],
      ['Services', 'services', { list: 'Service' }],
      ['Constraints', 'constraints', { list: 'Constraint' }],
      ['Affinities', 'affinities', { list: 'Affinity' }],
      ['Spreads', 'spreads', { list: 'Spread' }],
    ],
    // StopAfterClientDisconnect is the old spelling of disconnect.stop_on_client_after (mapped below);
    // PreventRescheduleOnLost only changes what servers do with a lost node's allocs.
    ignored: ['StopAfterClientDisconnect', 'PreventRescheduleOnLost'],
    unsupported: { Volumes: 'volume', Scaling: 'scaling', Consul: 'consul' },
  },
  Task: {
    fields: [
      ['Name', 'name', 'plain'],
      ['Driver', 'driver', 'plain'],
      ['Config', 'config', 'plain'],
      ['Env', 'env', 'plain'],
      ['User', 'user', 'str'],
      ['Leader', 'leader', 'true'],
      ['Lifecycle', 'lifecycle', { obj: 'Lifecycle' }],
      ['KillTimeout', 'killTimeoutMs', 'durSet'],
      ['KillSignal', 'killSignal', 'str'],
      ['RestartPolicy', 'restartPolicy', { obj: 'RestartPolicy' }],
      ['LogConfig', 'logs', { obj: 'LogConfig' }],
      ['Meta', 'meta', 'plain'],
      ['Resources', 'resources', { obj: 'Resources' }],
      ['ShutdownDelay', 'shutdownDelayMs', 'dur'],
      ['Artifacts', 'artifacts', { list: 'Artifact' }],
      ['Services', 'services', { list: 'Service' }],
      ['Constraints', 'constraints', { list: 'Constraint' }],
      ['Affinities', 'affinities', { list: 'Affinity' }],
      ['DispatchPayload', 'dispatchPayload', { obj: 'DispatchPayload' }],
      ['Templates', 'templates', { list: 'Template' }],
    ],
    ignored: ['Kind'],
    unsupported: {
      Vault: 'vault',
      Consul: 'consul',
      VolumeMounts: 'volume_mount',
      CSIPluginConfig: 'csi_plugin',
      ScalingPolicies: 'scaling',
      Secrets: 'secret',
      Identity: 'identity',
      Identities: 'identity',
      Actions: 'action',
      Schedule: 'schedule',
    },
  },
  ParameterizedJob: {
    fields: [
      ['Payload', 'payload', 'str'],
      ['MetaRequired', 'metaRequired', 'plain'],
      ['MetaOptional', 'metaOptional', 'plain'],
    ],
  },
  DispatchPayload: { fields: [['File', 'file', 'str']] },
  Template: {
    fields: [
      ['EmbeddedTmpl', 'data', 'str'],
      ['SourcePath', 'source', 'str'],
      ['DestPath', 'destination', 'str'],
      ['ChangeMode', 'changeMode', 'str'],
      ['ChangeSignal', 'changeSignal', 'str'],
      ['Splay', 'splayMs', 'dur'],
      ['Perms', 'perms', 'str'],
      ['Envvars', 'env', 'true'],
      ['LeftDelim', 'leftDelimiter', 'str'],
      ['RightDelim', 'rightDelimiter', 'str'],
      ['ErrMissingKey', 'errorOnMissingKey', 'true'],
      ['Once', 'once', 'true'],
      ['ChangeScript', 'changeScript', { obj: 'ChangeScript' }],
      ['Wait', 'wait', { obj: 'WaitConfig' }],
      ['Uid', 'uid', 'plain'],
      ['Gid', 'gid', 'plain'],
    ],
    // Vault's lease grace: berth serves no Vault secrets.
    ignored: ['VaultGrace'],
  },
  ChangeScript: {
    fields: [
      ['Command', 'command', 'str'],
      ['Args', 'args', 'plain'],
      ['Timeout', 'timeoutMs', 'dur'],
      ['FailOnError', 'failOnError', 'true'],
    ],
    // Running the script on the first render too: berth runs it on changes only.
    unsupported: { RunOnFirstRender: 'run_on_first_render' },
  },
  WaitConfig: {
    fields: [
      ['Min', 'minMs', 'dur'],
      ['Max', 'maxMs', 'dur'],
    ],
  },
  Periodic: {
    fields: [
      ['Enabled', 'enabled', 'plain'],
      ['Spec', 'spec', 'str'],
      ['Specs', 'specs', 'plain'],
      ['SpecType', 'specType', 'str'],
      ['ProhibitOverlap', 'prohibitOverlap', 'plain'],
      ['TimeZone', 'timeZone', 'str'],
    ],
  },
  // Placement: where an alloc may go (constraints) and where it would rather go (affinities, spreads).
  Constraint: {
    fields: [
      ['LTarget', 'lTarget', 'str'],
      ['RTarget', 'rTarget', 'str'],
      ['Operand', 'operand', 'plain'],
    ],
  },
  Affinity: {
    fields: [
      ['LTarget', 'lTarget', 'str'],
      ['RTarget', 'rTarget', 'str'],
      ['Operand', 'operand', 'plain'],
      ['Weight', 'weight', 'plain'],
    ],
  },
  Spread: {
    fields: [
      ['Attribute', 'attribute', 'plain'],
      ['Weight', 'weight', 'plain'],
      ['SpreadTarget', 'spreadTarget', { list: 'SpreadTarget' }],
    ],
  },
  SpreadTarget: {
    fields: [
      ['Value', 'value', 'plain'],
      ['Percent', 'percent', 'plain'],
    ],
  },
  Lifecycle: {
    fields: [
      ['Hook', 'hook', 'plain'],
      ['Sidecar', 'sidecar', 'plain'],
    ],
  },
  LogConfig: {
    fields: [
      ['MaxFiles', 'maxFiles', 'plain'],
      ['MaxFileSizeMB', 'maxFileSizeMB', 'plain'],
    ],
    ignored: ['Enabled'],
    unsupported: { Disabled: 'logs.disabled' },
  },
  EphemeralDisk: {
    fields: [
      ['Sticky', 'sticky', 'plain'],
      ['Migrate', 'migrate', 'plain'],
      ['SizeMB', 'sizeMB', 'plain'],
    ],
  },
  RestartPolicy: {
    fields: [
      ['Attempts', 'attempts', 'plain'],
      ['Interval', 'intervalMs', 'durSet'],
      ['Delay', 'delayMs', 'durSet'],
      ['Mode', 'mode', 'plain'],
      ['RenderTemplates', 'renderTemplates', 'true'],
    ],
  },
  ReschedulePolicy: {
    fields: [
      ['Attempts', 'attempts', 'plain'],
      ['Interval', 'intervalMs', 'durSet'],
      ['Delay', 'delayMs', 'durSet'],
      ['DelayFunction', 'delayFunction', 'plain'],
      ['MaxDelay', 'maxDelayMs', 'durSet'],
      ['Unlimited', 'unlimited', 'plain'],
    ],
  },
  Migrate: {
    fields: [
      ['MaxParallel', 'maxParallel', 'plain'],
      ['HealthCheck', 'healthCheck', 'str'],
      ['MinHealthyTime', 'minHealthyTimeMs', 'durSet'],
      ['HealthyDeadline', 'healthyDeadlineMs', 'durSet'],
    ],
  },
  Update: {
    fields: [
      ['MaxParallel', 'maxParallel', 'plain'],
      ['HealthCheck', 'healthCheck', 'str'],
      ['MinHealthyTime', 'minHealthyTimeMs', 'durSet'],
      ['HealthyDeadline', 'healthyDeadlineMs', 'durSet'],
      ['ProgressDeadline', 'progressDeadlineMs', 'durSet'],
      ['AutoRevert', 'autoRevert', 'plain'],
      ['AutoPromote', 'autoPromote', 'plain'],
      ['Canary', 'canary', 'plain'],
      ['Stagger', 'staggerMs', 'durSet'],
    ],
  },
  Disconnect: {
    fields: [
      ['LostAfter', 'lostAfterMs', 'dur'],
      ['StopOnClientAfter', 'stopOnClientAfterMs', 'dur'],
      ['Replace', 'replace', 'plain'],
      ['Reconcile', 'reconcile', 'str'],
    ],
  },
  Resources: {
    fields: [
      ['CPU', 'cpu', 'num'],
      ['Cores', 'cores', 'num'],
      ['MemoryMB', 'memoryMB', 'num'],
      ['MemoryMaxMB', 'memoryMaxMB', 'num'],
      ['DiskMB', 'diskMB', 'num'],
      ['SecretsMB', 'secretsMB', 'num'],
    ],
    // Networks (a task-level network) is lifted into the group's: see fixUps.
    ignored: ['IOPS', 'Networks'],
    unsupported: { Devices: 'device', NUMA: 'numa' },
  },
  Network: {
    fields: [
      ['Mode', 'mode', 'str'],
      ['ReservedPorts', 'reservedPorts', { list: 'Port' }],
      ['DynamicPorts', 'dynamicPorts', { list: 'Port' }],
    ],
    ignored: ['Device', 'CIDR', 'IP', 'Hostname', 'MBits'],
    unsupported: { DNS: 'network.dns', CNI: 'network.cni' },
  },
  Port: {
    fields: [
      ['Label', 'label', 'plain'],
      ['Value', 'value', 'num'],
      ['To', 'to', 'num'],
      ['HostNetwork', 'hostNetwork', 'str'],
    ],
    unsupported: { IgnoreCollision: 'port.ignore_collision' },
  },
  Service: {
    fields: [
      ['Name', 'name', 'plain'],
      ['PortLabel', 'portLabel', 'str'],
      ['Tags', 'tags', 'plain'],
      ['Meta', 'meta', 'plain'],
      ['AddressMode', 'addressMode', 'str'],
      ['Address', 'address', 'str'],
      ['Provider', 'provider', 'str'],
      ['TaskName', 'taskName', 'str'],
      ['Checks', 'checks', { list: 'Check' }],
    ],
    // CheckRestart is merged into each check (as Nomad's Canonicalize does); the rest are Consul's.
    ignored: ['CheckRestart', 'OnUpdate', 'Cluster', 'EnableTagOverride', 'Kind'],
    unsupported: {
      Connect: 'connect',
      CanaryTags: 'service.canary_tags',
      CanaryMeta: 'service.canary_meta',
      TaggedAddresses: 'service.tagged_addresses',
      Identity: 'identity',
      Weights: 'service.weights',
    },
  },
  Check: {
    fields: [
      ['Name', 'name', 'str'],
      ['Type', 'type', 'plain'],
      ['Path', 'path', 'str'],
      ['Method', 'method', 'str'],
      ['Header', 'header', 'plain'],
      ['Protocol', 'protocol', 'str'],
      ['PortLabel', 'portLabel', 'str'],
      ['Command', 'command', 'str'],
      ['Args', 'args', 'plain'],
      ['TaskName', 'task', 'str'],
      ['Interval', 'intervalMs', 'durSet'],
      ['Timeout', 'timeoutMs', 'durSet'],
      ['InitialStatus', 'initialStatus', 'str'],
      ['SuccessBeforePassing', 'successBeforePassing', 'num'],
      ['FailuresBeforeCritical', 'failuresBeforeCritical', 'num'],
      ['CheckRestart', 'checkRestart', { obj: 'CheckRestart' }],
    ],
    ignored: ['AddressMode', 'Advertise', 'Notes', 'OnUpdate', 'FailuresBeforeWarning', 'TLSServerName', 'GRPCService', 'GRPCUseTLS'],
    unsupported: { Expose: 'check.expose', TLSSkipVerify: 'check.tls_skip_verify', Body: 'check.body' },
  },
  CheckRestart: {
    fields: [
      ['Limit', 'limit', 'plain'],
      ['Grace', 'graceMs', 'durSet'],
      ['IgnoreWarnings', 'ignoreWarnings', 'plain'],
    ],
  },
  Artifact: {
    fields: [
      ['GetterSource', 'source', 'plain'],
      ['RelativeDest', 'destination', 'str'],
      ['GetterMode', 'mode', 'str'],
      ['GetterOptions', 'options', 'plain'],
      ['GetterHeaders', 'headers', 'plain'],
    ],
    unsupported: { GetterInsecure: 'artifact.insecure', Chown: 'artifact.chown' },
  },
};

/** Whether a Nomad value is its type's empty value (what Canonicalize leaves for "not set"). */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) return Object.keys(v).length === 0;
  return false;
}

/**
 * The values Nomad's servers write into a refused stanza nobody set (`Table.key`): a stanza holding
 * only these (or empty values) asks for nothing, so it is not a use of the stanza. Nomad 1.7+ writes
 * every group's `consul { cluster = "default" }` and every task's default workload identity (which
 * is never exposed to the task).
 */
const NOMAD_WRITTEN_DEFAULTS: Record<string, Obj> = {
  'TaskGroup.Consul': { Cluster: 'default' },
  'Task.Consul': { Cluster: 'default' },
  'Task.Identity': { Name: 'default', Audience: ['nomadproject.io'] },
};

/** Whether `v` (the value of refused key `key` in table `type`) is empty or only Nomad's written defaults. */
function isUnusedStanza(type: string, key: string, v: unknown): boolean {
  if (isEmpty(v)) return true;
  const defaults = NOMAD_WRITTEN_DEFAULTS[`${type}.${key}`];
  if (!defaults || !isObj(v)) return false;
  return Object.entries(v).every(([k, x]) => isEmpty(x) || (k in defaults && JSON.stringify(x) === JSON.stringify(defaults[k])));
}

/** Where {@link fromNomad} reports. */
export interface FromNomadReport {
  issues: string[];
  unsupported: UnsupportedStanza[];
}

const nsToMs = (v: unknown) => (typeof v === 'number' ? v / 1e6 : v);

/** Nomad's zero time ("0001-01-01T00:00:00Z" or 0) means absent; otherwise ms since epoch. */
export function nomadTime(v: unknown): unknown {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v === 'string') {
    if (v.startsWith('0001-01-01')) return undefined;
    const t = Date.parse(v);
    return Number.isNaN(t) ? v : t;
  }
  if (typeof v === 'number') return v / 1e6; // UnixNano
  return v;
}

/**
 * Converts a Nomad object of table `type` to berth's camelCase (no validation beyond the keys):
 * unknown keys and refused stanzas are reported with berth paths (`path` is the berth path of `v`).
 */
export function fromNomad(v: unknown, type: string, path: string, report: FromNomadReport): unknown {
  if (!isObj(v)) return v === null ? undefined : v;
  const table = TABLES[type]!;
  const out: Obj = {};
  const known = new Set([...table.fields.map((f) => f[0]), ...(table.ignored ?? []), ...Object.keys(table.unsupported ?? {})]);
  for (const key of Object.keys(v)) {
    if (!known.has(key)) report.issues.push(`${renderPath([key], path)}: ${unknownKeyProblem(key, [...known])}`);
    else if (table.unsupported?.[key] !== undefined && !isUnusedStanza(type, key, v[key]))
      report.unsupported.push({ stanza: table.unsupported[key]!, path: renderPath([camel(key)], path) });
  }
  for (const [n, b, kind] of table.fields) {
    const val = v[n];
    if (val === undefined || val === null) continue;
    const p = renderPath([b], path);
    let m: unknown;
    if (kind === 'plain') m = val;
    else if (kind === 'str') m = val === '' ? undefined : val;
    else if (kind === 'num') m = val === 0 ? undefined : val;
    else if (kind === 'dur') m = val === 0 ? undefined : nsToMs(val);
    else if (kind === 'durSet') m = nsToMs(val);
    else if (kind === 'time') m = nomadTime(val);
    else if (kind === 'true') m = val === false ? undefined : val;
    else if ('obj' in kind) m = fromNomad(val, kind.obj, p, report);
    else if ('list' in kind) m = Array.isArray(val) ? val.map((x, i) => fromNomad(x, kind.list, `${p}[${i}]`, report)) : val;
    else m = isObj(val) ? Object.fromEntries(Object.entries(val).map(([k, x]) => [k, fromNomad(x, kind.map, renderPath([k], p), report)])) : val;
    if (m !== undefined) out[b] = m;
  }
  fixUps(type, v, out, path, report);
  return out;
}

/** The berth spelling of a Nomad key (for the path of a refused stanza). */
function camel(key: string): string {
  const special: Record<string, string> = { CSIPluginConfig: 'csiPluginConfig', NUMA: 'numa', DNS: 'dns', CNI: 'cni' };
  return special[key] ?? key[0]!.toLowerCase() + key.slice(1);
}

/**
 * What a table alone cannot say. Blocks merged as defaults (the job's reschedule and migrate, a
 * service's check_restart) have their keys checked here, under the path they were written at.
 */
function fixUps(type: string, v: Obj, out: Obj, path: string, report: FromNomadReport): void {
  if (type === 'Job') {
    // Job-level reschedule and migrate blocks are defaults for every group (Nomad's Merge).
    const jr = isObj(v.Reschedule) ? (fromNomad(v.Reschedule, 'ReschedulePolicy', renderPath(['reschedule'], path), report) as Obj) : undefined;
    const jm = isObj(v.Migrate) ? (fromNomad(v.Migrate, 'Migrate', renderPath(['migrate'], path), report) as Obj) : undefined;
    for (const g of Array.isArray(out.taskGroups) ? (out.taskGroups as Obj[]) : []) {
      if (!isObj(g)) continue;
      if (jr) g.reschedulePolicy = { ...jr, ...((g.reschedulePolicy as Obj) ?? {}) };
      if (jm) g.migrate = { ...jm, ...((g.migrate as Obj) ?? {}) };
    }
  }
  if (type === 'TaskGroup') liftTaskNetworks(v, out, path, report);
  if (type === 'TaskGroup') {
    // The old spelling of disconnect.stop_on_client_after.
    if (typeof v.StopAfterClientDisconnect === 'number' && v.StopAfterClientDisconnect > 0) {
      const d = (out.disconnect ??= {}) as Obj;
      d.stopOnClientAfterMs ??= nsToMs(v.StopAfterClientDisconnect);
    }
  }
  if (type === 'Task') {
    if (!out.config) out.config = {};
    // Nomad's Lifecycle with an empty hook means none.
    if (isObj(out.lifecycle) && !out.lifecycle.hook) delete out.lifecycle;
  }
  if (type === 'Service' && isObj(v.CheckRestart)) {
    // Nomad's Canonicalize: the service's check_restart is every check's default.
    const base = fromNomad(v.CheckRestart, 'CheckRestart', renderPath(['checkRestart'], path), report) as Obj;
    for (const c of Array.isArray(out.checks) ? (out.checks as Obj[]) : []) if (isObj(c)) c.checkRestart = { ...base, ...((c.checkRestart as Obj) ?? {}) };
  }
}

/**
 * A task-level network (`resources { network { port ... } }`, Nomad before 0.12, still placed by
 * its scheduler) becomes ports of the group's network: berth's tasks share the host network, so a
 * task's port is the group's, in every task's environment. A label the group (or another task)
 * already has is refused by name; a mode other than host is refused as a group's would be.
 */
function liftTaskNetworks(v: Obj, out: Obj, path: string, report: FromNomadReport): void {
  const tasks = Array.isArray(v.Tasks) ? v.Tasks : [];
  const lifted: Obj[] = [];
  tasks.forEach((t, ti) => {
    const nets = isObj(t) && isObj(t.Resources) && Array.isArray(t.Resources.Networks) ? t.Resources.Networks : [];
    nets.forEach((n, ni) => {
      const p = renderPath(['tasks', ti, 'resources', 'networks', ni], path);
      const net = fromNomad(n, 'Network', p, report);
      if (!isObj(net)) return;
      if (typeof net.mode === 'string' && net.mode !== 'host') report.unsupported.push({ stanza: `network mode ${JSON.stringify(net.mode)}`, path: renderPath(['mode'], p) });
      else lifted.push({ ...net, path: p });
    });
  });
  if (!lifted.length) return;
  const groupNets = Array.isArray(out.networks) ? (out.networks as Obj[]) : [];
  const target: Obj = groupNets[0] ?? { mode: 'host' };
  if (!groupNets.length) out.networks = [target];
  const labels = new Set<string>();
  for (const k of ['reservedPorts', 'dynamicPorts']) for (const port of (target[k] as Obj[] | undefined) ?? []) labels.add(String(port.label));
  for (const { path: p, ...net } of lifted)
    for (const k of ['reservedPorts', 'dynamicPorts'] as const)
      for (const port of (net[k] as Obj[] | undefined) ?? []) {
        if (labels.has(String(port.label))) {
          // Nomad gives each task its own ports; berth's are the group's, so two of one label cannot be.
          report.unsupported.push({ stanza: `task network port ${JSON.stringify(String(port.label))} that the group or another task also has`, path: String(p) });
          continue;
        }
        labels.add(String(port.label));
        ((target[k] ??= []) as Obj[]).push(port);
      }
}

/** Converts berth camelCase of table `type` back to Nomad's API JSON (ms to ns). */
export function toNomad(v: unknown, type: string): unknown {
  if (!isObj(v)) return v;
  const table = TABLES[type]!;
  const out: Obj = {};
  for (const [n, b, kind] of table.fields) {
    const val = v[b];
    if (val === undefined) continue;
    if (kind === 'dur' || kind === 'durSet') out[n] = typeof val === 'number' ? Math.round(val * 1e6) : val;
    else if (kind === 'time') out[n] = typeof val === 'number' ? Math.round(val * 1e6) : val;
    else if (typeof kind === 'object' && 'obj' in kind) out[n] = toNomad(val, kind.obj);
    else if (typeof kind === 'object' && 'list' in kind) out[n] = Array.isArray(val) ? val.map((x) => toNomad(x, kind.list)) : val;
    else if (typeof kind === 'object' && 'map' in kind)
      out[n] = isObj(val) ? Object.fromEntries(Object.entries(val).map(([k, x]) => [k, toNomad(x, kind.map)])) : val;
    else out[n] = structuredClone(val);
  }
  return out;
}

/** Every Nomad key each table knows (mapped, ignored or refused): for docs and specs. */
export function nomadTableKeys(): Record<string, { mapped: string[]; ignored: string[]; unsupported: Record<string, string> }> {
  return Object.fromEntries(
    Object.entries(TABLES).map(([name, t]) => [name, { mapped: t.fields.map((f) => f[0]), ignored: t.ignored ?? [], unsupported: t.unsupported ?? {} }]),
  );
}

/** The berth (camelCase) keys of table `type` that name a refused stanza: key -> stanza name. */
export function unsupportedCamelKeys(type: string): Readonly<Record<string, string>> {
  let keys = camelUnsupported.get(type);
  if (!keys) camelUnsupported.set(type, (keys = Object.fromEntries(Object.entries(TABLES[type]?.unsupported ?? {}).map(([k, s]) => [camel(k), s]))));
  return keys;
}

const camelUnsupported = new Map<string, Record<string, string>>();
