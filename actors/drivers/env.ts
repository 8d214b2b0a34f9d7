/**
 * Nomad's task environment: the `NOMAD_*` variables a task sees, plus the task's own `env`, built
 * the way Nomad's `taskenv.Builder` does.
 *
 * ```
 *  NOMAD_* variables            dirs, limits, alloc/job/group/task ids, dc, region, namespace
 *  + NOMAD_META_<K> and _<k>    job meta < group meta < task meta, values interpolated
 *  + host env (raw_exec)        only names not already set, minus the denylist
 *  + task.env                   values interpolated; wins over everything above
 *  then keys starting NOMAD_META_ are cleaned: any character but [A-Za-z0-9_.] becomes '_'
 * ```
 * For a chroot driver (`exec`) the directory variables are the in-chroot paths
 * `/alloc`, `/local` and `/secrets`; otherwise they are the host paths.
 *
 * Interpolation replaces `${NAME}` (letters, digits, `_`, `-`, `.`), looking first at the node's
 * variables (`node.unique.id`, `node.unique.name`, `node.datacenter`, `node.region`, and those a
 * host gives: `attr.*`, `meta.*`, `node.class`, `node.pool`) and then at the variables built so
 * far; berth also accepts `${env.NAME}`. Anything unknown stays as written.
 * @module
 */
import type { Allocation, Task } from '../../model/types.ts';

/** Nomad's default `env.denylist`: host variables never passed to a raw_exec task. */
export const DEFAULT_ENV_DENYLIST: readonly string[] = [
  'CONSUL_TOKEN',
  'CONSUL_HTTP_TOKEN',
  'CONSUL_LICENSE',
  'VAULT_TOKEN',
  'VAULT_LICENSE',
  'NOMAD_LICENSE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

/** Nomad's agent default region, used when neither the client nor the job names one. */
export const DEFAULT_REGION = 'global';

/** Prefix of the meta variables (Nomad's `MetaPrefix`). */
export const META_PREFIX = 'NOMAD_META_';

/** Inputs of {@link buildTaskEnv}. */
export interface TaskEnvInput {
  alloc: Allocation;
  task: Task;
  /** Host paths of the task dir (only `localDir` and `secretsDir` are used). */
  taskDir: { dir: string; localDir: string; secretsDir: string };
  /** Host paths of the alloc dir (`sharedDir` is `<alloc>/alloc`). */
  allocDir: { dir: string; sharedDir: string };
  /** 'chroot' (exec): directory variables are `/alloc`, `/local`, `/secrets`. Default 'none'. */
  fsIsolation?: 'none' | 'chroot';
  /** The node's datacenter; default: the job's only datacenter, when it names exactly one. */
  datacenter?: string;
  /** The client's region; default: the job's region, else `global`. */
  region?: string;
  /** For `${node.unique.id}` interpolation only: Nomad sets no NOMAD_NODE_ID variable. */
  nodeId?: string;
  /** For `${node.unique.name}` interpolation only: Nomad sets no NOMAD_NODE_NAME variable. */
  nodeName?: string;
  /**
   * The node's other interpolation variables, keys as written in a job file: `attr.cpu.arch`,
   * `meta.rack`, `node.class`, `node.pool` (see {@link nodeVariablesOf}). Interpolation only.
   */
  nodeVariables?: Readonly<Record<string, string>>;
  /** The cgroup berth's tasks live under (`NOMAD_PARENT_CGROUP`), when cgroups are in use. */
  parentCgroup?: string;
  /** Host environment to pass through underneath everything else (Nomad does this for raw_exec). */
  hostEnv?: Record<string, string | undefined>;
  /** Host variables to drop from `hostEnv`; default {@link DEFAULT_ENV_DENYLIST}. */
  envDenylist?: readonly string[];
  /**
   * false: `hostEnv` only resolves `${NAME}` in the task's env and is left out of the result; the
   * driver adds it at spawn (`withHostEnv`). Keeps a copy of the host environment out of
   * every task handle (it was most of a handle's size). Default true.
   */
  includeHostEnv?: boolean;
}

/** The host environment minus the denylist. */
export function filteredHostEnv(
  hostEnv: Record<string, string | undefined> = process.env,
  denylist: readonly string[] = DEFAULT_ENV_DENYLIST,
): Record<string, string> {
  const deny = new Set(denylist);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(hostEnv)) if (v !== undefined && !deny.has(k)) env[k] = v;
  return env;
}

/**
 * The environment to spawn a task with: the (filtered) host environment underneath the task's
 * own when `inheritHostEnv` is set (raw_exec), else the task's own.
 */
export function withHostEnv(config: { env: Record<string, string>; inheritHostEnv?: boolean }): Record<string, string> {
  return config.inheritHostEnv ? { ...filteredHostEnv(), ...config.env } : config.env;
}

/**
 * The alloc's index in its group, from its name as Nomad's `AllocIndexFromName` reads it: the
 * text between `<jobId>.<group>[` and the final `]`; 0 when the name is absent or malformed.
 * @example allocIndexFromName('web.api[3]', 'web', 'api') // 3
 */
export function allocIndexFromName(name: string | undefined, jobId: string, group: string): number {
  if (!name) return 0;
  const prefix = jobId.length + group.length + 2;
  if (name.length <= 3 || name.length <= prefix) return 0;
  const n = Number.parseInt(name.slice(prefix, -1), 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** Job, group and task meta merged, the task's winning (Nomad's `Job.CombinedTaskMeta`). */
export function combinedTaskMeta(alloc: Allocation, taskName: string): Record<string, string> {
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  const task = group?.tasks.find((t) => t.name === taskName);
  return { ...(alloc.job.meta ?? {}), ...(group?.meta ?? {}), ...(task?.meta ?? {}) };
}

/**
 * Nomad's `helper.CleanEnvVar`: every byte of the name's UTF-8 but letters, `_`, `.` and (past
 * the first position) digits becomes `replacement`. Bytes, as Go indexes a string: `café` is
 * `caf__` (é is two bytes).
 */
export function cleanEnvVar(name: string, replacement = '_'): string {
  const bytes = Buffer.from(name, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const ok = b === 0x5f || b === 0x2e || (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (i > 0 && b >= 0x30 && b <= 0x39);
    out += ok ? String.fromCharCode(b) : replacement;
  }
  return out;
}

/**
 * Builds the environment a task runs with.
 * @example
 * buildTaskEnv({ alloc, task, taskDir, allocDir }).NOMAD_ALLOC_NAME // 'example.cache[0]'
 */
export function buildTaskEnv(input: TaskEnvInput): Record<string, string> {
  const { alloc, task, taskDir, allocDir } = input;
  const chroot = input.fsIsolation === 'chroot';
  const jobId = alloc.job.id ?? alloc.jobId;
  // Nomad's servers always name an alloc; a berth-native one without a name gets index 0.
  const allocName = alloc.name ?? `${jobId}.${alloc.taskGroup}[0]`;
  const datacenter = datacenterOf(input);
  const region = regionOf(input);
  const res = task.resources ?? {};
  const nodeAttrs = nodeScope(input);

  const env = dropEmpty({
    NOMAD_ALLOC_DIR: chroot ? '/alloc' : allocDir.sharedDir,
    NOMAD_TASK_DIR: chroot ? '/local' : taskDir.localDir,
    NOMAD_SECRETS_DIR: chroot ? '/secrets' : taskDir.secretsDir,
    NOMAD_MEMORY_LIMIT: nonZero(res.memoryMB),
    NOMAD_MEMORY_MAX_LIMIT: nonZero(res.memoryMaxMB),
    NOMAD_CPU_LIMIT: nonZero(res.cpu),
    NOMAD_ALLOC_ID: alloc.id,
    NOMAD_SHORT_ALLOC_ID: alloc.id.slice(0, 8),
    NOMAD_ALLOC_NAME: allocName,
    NOMAD_GROUP_NAME: alloc.taskGroup,
    NOMAD_ALLOC_INDEX: String(allocIndexFromName(allocName, jobId, alloc.taskGroup)),
    NOMAD_TASK_NAME: task.name,
    NOMAD_JOB_ID: jobId,
    NOMAD_JOB_NAME: alloc.job.name ?? jobId,
    NOMAD_DC: datacenter,
    NOMAD_NAMESPACE: alloc.namespace ?? alloc.job.namespace ?? 'default',
    NOMAD_REGION: region,
    NOMAD_JOB_PARENT_ID: alloc.job.parentId,
    NOMAD_PARENT_CGROUP: input.parentCgroup,
  });
  Object.assign(env, portEnv(alloc));
  // Host variables left out of the result (includeHostEnv false) still resolve `${NAME}`.
  const hostScope: Record<string, string> = {};
  const lookup = (text: string) => interpolateEnv(text, nodeAttrs, env, hostScope);

  // Meta after the fixed variables: its keys and values may refer to them.
  for (const [k, v] of Object.entries(combinedTaskMeta(alloc, task.name))) {
    const value = String(v);
    env[lookup(META_PREFIX + k.toUpperCase())] = lookup(value);
    env[lookup(META_PREFIX + k)] = lookup(value);
  }
  if (input.hostEnv) {
    const target = input.includeHostEnv === false ? hostScope : env;
    for (const [k, v] of Object.entries(filteredHostEnv(input.hostEnv, input.envDenylist))) {
      // The host never overrides what Nomad set (its own NOMAD_* or meta).
      if (!Object.prototype.hasOwnProperty.call(env, k)) target[k] = target === env ? lookup(v) : v;
    }
  }
  for (const [k, v] of Object.entries(task.env ?? {})) env[k] = lookup(String(v));

  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) out[k.startsWith(META_PREFIX) ? cleanEnvVar(k) : k] = v;
  return out;
}

/**
 * The port variables of the alloc's group network, as Nomad's task environment builder sets them
 * from `allocatedResources.shared.ports`: for each label, `NOMAD_PORT_<label>` and
 * `NOMAD_ALLOC_PORT_<label>` (the `to` port when set, else the host port), `NOMAD_HOST_PORT_<label>`
 * (the host port), `NOMAD_IP_<label>` / `NOMAD_HOST_IP_<label>` (the host address) and
 * `NOMAD_ADDR_<label>` / `NOMAD_HOST_ADDR_<label>` (`ip:port` of the host, brackets for IPv6).
 * @example portEnv(alloc).NOMAD_PORT_http // '23456'
 */
export function portEnv(alloc: Allocation): Record<string, string> {
  const env: Record<string, string> = {};
  for (const p of alloc.allocatedResources?.shared.ports ?? []) {
    const host = String(p.value);
    const addr = joinHostPort(p.hostIp, host);
    const inside = p.to > 0 ? String(p.to) : host;
    env[`NOMAD_ADDR_${p.label}`] = addr;
    env[`NOMAD_HOST_ADDR_${p.label}`] = addr;
    env[`NOMAD_IP_${p.label}`] = p.hostIp;
    env[`NOMAD_HOST_IP_${p.label}`] = p.hostIp;
    env[`NOMAD_PORT_${p.label}`] = inside;
    env[`NOMAD_ALLOC_PORT_${p.label}`] = inside;
    env[`NOMAD_HOST_PORT_${p.label}`] = host;
  }
  return env;
}

/** Go's `net.JoinHostPort`: an IPv6 address goes in brackets. */
export function joinHostPort(host: string, port: string | number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The node's datacenter for a task: given, else the job's only datacenter (not a pattern). */
function datacenterOf(input: Pick<TaskEnvInput, 'alloc' | 'datacenter'>): string | undefined {
  const dcs = input.alloc.job.datacenters ?? [];
  return input.datacenter ?? (dcs.length === 1 && !/[*?]/.test(dcs[0]!) ? dcs[0] : undefined);
}

/** The client's region for a task: given, else the job's, else `global`. */
function regionOf(input: Pick<TaskEnvInput, 'alloc' | 'region'>): string {
  return input.region ?? input.alloc.job.region ?? DEFAULT_REGION;
}

/**
 * What `${...}` may name of the node (interpolation only, never in the task's env): the host's
 * {@link TaskEnvInput.nodeVariables}, then `node.unique.id`, `node.unique.name`,
 * `node.datacenter` and `node.region`. An artifact's source and destination are interpolated
 * with these before the task's env, as Nomad's `TaskEnv.ReplaceEnv` does.
 * @example nodeScope({ alloc, nodeVariables: { 'attr.cpu.arch': 'amd64' } })['attr.cpu.arch'] // 'amd64'
 */
export function nodeScope(input: Pick<TaskEnvInput, 'alloc' | 'datacenter' | 'region' | 'nodeId' | 'nodeName' | 'nodeVariables'>): Record<string, string> {
  return {
    // Kept when empty: `${node.class}` of a node with no class is "", as in Nomad.
    ...input.nodeVariables,
    ...dropEmpty({
      'node.unique.id': input.nodeId,
      'node.unique.name': input.nodeName,
      'node.datacenter': datacenterOf(input),
      'node.region': regionOf(input),
    }),
  };
}

/**
 * A node's interpolation variables as Nomad's task environment names them: each attribute as
 * `attr.<name>`, each meta key as `meta.<key>`, and `node.class`, `node.pool`.
 * @example nodeVariablesOf({ attributes: { 'cpu.arch': 'amd64' } })['attr.cpu.arch'] // 'amd64'
 */
export function nodeVariablesOf(node: {
  attributes?: Readonly<Record<string, string>>;
  meta?: Readonly<Record<string, string>>;
  nodeClass?: string;
  nodePool?: string;
}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(node.attributes ?? {})) out[`attr.${k}`] = v;
  for (const [k, v] of Object.entries(node.meta ?? {})) out[`meta.${k}`] = v;
  if (node.nodeClass !== undefined) out['node.class'] = node.nodeClass;
  if (node.nodePool !== undefined) out['node.pool'] = node.nodePool;
  return out;
}

/**
 * Replaces `${NAME}` and `${env.NAME}` with the first of `sources` that has NAME; unknown
 * references stay as written (Nomad leaves what it cannot resolve).
 * @example interpolateEnv('${NOMAD_TASK_DIR}/app.conf', env) // '/local/app.conf'
 */
export function interpolateEnv(text: string, ...sources: Record<string, string>[]): string {
  return text.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (whole, name: string) => {
    for (const key of name.startsWith('env.') ? [name, name.slice(4)] : [name]) {
      for (const src of sources) if (Object.prototype.hasOwnProperty.call(src, key)) return src[key]!;
    }
    return whole;
  });
}

function nonZero(n: number | undefined): string | undefined {
  return n ? String(n) : undefined;
}

function dropEmpty(o: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}
