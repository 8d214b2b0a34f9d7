/**
 * What a docker task becomes on the Engine, as a pure function of its config: the container's
 * name, labels, binds, environment, resources and ports (the body of `POST /containers/create`),
 * and the plugin rules (`allow_privileged`, `allow_caps`, `volumes`) checked before anything runs.
 * @module
 */
import path from 'node:path';
import type Dockerode from 'dockerode';
import { DriverConfigError } from '../../../model/errors.ts';
import { MEMORY_NO_LIMIT } from '../../../model/memory.ts';
import type { DockerTaskConfigInput } from '../../../model/schema/docker-config.ts';
import type { TaskConfig } from '../driver.ts';
import { EXTRA_LABEL_NAMES, normalizeCap, type DockerPluginConfig } from './plugin-config.ts';

/** The label every berth container carries: the alloc that owns it. */
export const LABEL_ALLOC_ID = 'com.hashicorp.nomad.alloc_id';
const LABEL_PREFIX = 'com.hashicorp.nomad.';

type Scalar = string | number | boolean;

/** HCL's list of one block, or the block itself. */
export function one<T>(v: T | T[] | undefined): T | undefined {
  return Array.isArray(v) ? v[0] : v;
}

const strMap = (m: Record<string, Scalar> | Array<Record<string, Scalar>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(one(m) ?? {}).map(([k, v]) => [k, String(v)]));

/** The Engine's name for the task's container (Nomad's `<task>-<alloc id>`). */
export const containerName = (config: TaskConfig): string => `${config.taskName}-${config.allocId}`;

/** Image reference with Nomad's default tag. */
export function imageRef(image: string): string {
  const lastSlash = image.lastIndexOf('/');
  if (image.includes('@') || image.slice(lastSlash + 1).includes(':')) return image;
  return `${image}:latest`;
}

const globMatch = (glob: string, s: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(s);

/** Nomad's labels: the alloc id always, the rest as `extra_labels` selects; then the task's own. */
export function containerLabels(config: TaskConfig, plugin: DockerPluginConfig, own: Record<string, string>): Record<string, string> {
  const env = config.env;
  const values: Record<string, string | undefined> = {
    job_name: env.NOMAD_JOB_NAME,
    job_id: env.NOMAD_JOB_ID,
    task_group_name: env.NOMAD_GROUP_NAME,
    task_name: config.taskName,
    namespace: env.NOMAD_NAMESPACE,
    node_name: env.NOMAD_NODE_NAME,
    node_id: env.NOMAD_NODE_ID,
  };
  const labels: Record<string, string> = { ...own, [LABEL_ALLOC_ID]: config.allocId };
  for (const name of EXTRA_LABEL_NAMES) {
    const v = values[name];
    if (v !== undefined && plugin.extraLabels.some((g) => globMatch(g, name))) labels[LABEL_PREFIX + name] = v;
  }
  return labels;
}

/** A `volumes` entry's host side: relative to the task dir, or absolute (plugin permitting). */
function hostPath(config: TaskConfig, src: string): string {
  return path.isAbsolute(src) ? src : path.resolve(config.taskDir.dir, src);
}

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir + path.sep);

/**
 * The plugin's rules, as Nomad's docker driver applies them at start: privileged mode, added
 * capabilities and host paths outside the task dir. Throws DriverConfigError naming what is refused.
 */
export function checkPluginRules(config: TaskConfig, cfg: DockerTaskConfigInput, plugin: DockerPluginConfig): void {
  const task = config.taskName;
  if (cfg.privileged && !plugin.allowPrivileged)
    throw new DriverConfigError(
      `task "${task}": privileged = true: Docker privileged mode is disabled on this client (plugin "docker" config allow_privileged = false)`,
    );
  const allowAll = plugin.allowCaps.map(normalizeCap).includes('all');
  if (!allowAll && cfg.cap_add?.length) {
    const allowed = new Set(plugin.allowCaps.map(normalizeCap));
    const refused = cfg.cap_add.filter((c) => !allowed.has(normalizeCap(c)));
    if (refused.length)
      throw new DriverConfigError(
        `task "${task}": cap_add: ${refused.join(', ')} not allowed on this client (plugin "docker" config allow_caps: ${plugin.allowCaps.join(', ')})`,
      );
  }
  if (plugin.volumesEnabled) return;
  const outside: string[] = [];
  for (const v of cfg.volumes ?? []) {
    const src = v.split(':')[0] ?? '';
    if (!inside(config.taskDir.dir, hostPath(config, src))) outside.push(src);
  }
  for (const m of [cfg.mount ?? []].flat()) {
    if ((m.type ?? 'volume') === 'tmpfs') continue;
    if ((m.type ?? 'volume') === 'volume') {
      if (m.source) outside.push(`volume ${m.source}`);
      continue;
    }
    if (m.source && !inside(config.taskDir.dir, hostPath(config, m.source))) outside.push(m.source);
  }
  if (outside.length)
    throw new DriverConfigError(
      `task "${task}": volumes are not enabled on this client (plugin "docker" config volumes { enabled = false }); cannot mount ${outside.join(', ')}`,
    );
}

/** One published port: the scheduler's host port on its host IP, to the container port. */
export interface PublishedPort {
  label: string;
  hostIp: string;
  hostPort: number;
  containerPort: number;
}

/**
 * The ports `ports` (and the old `port_map`) publish, from the task's NOMAD_* port variables
 * (the scheduler's choice). `network_mode = "host"` publishes nothing.
 */
export function publishedPorts(config: TaskConfig, cfg: DockerTaskConfigInput): PublishedPort[] {
  if (cfg.network_mode === 'host') return [];
  const env = config.env;
  const portMap = one(cfg.port_map) ?? {};
  const labels = [...new Set([...(cfg.ports ?? []), ...Object.keys(portMap)])];
  const out: PublishedPort[] = [];
  for (const label of labels) {
    const host = env[`NOMAD_HOST_PORT_${label}`];
    if (host === undefined) throw new DriverConfigError(`task "${config.taskName}": ports: no port labeled "${label}" in the group's network block`);
    const to = portMap[label] ?? Number(env[`NOMAD_PORT_${label}`] ?? host);
    out.push({ label, hostIp: env[`NOMAD_HOST_IP_${label}`] ?? '127.0.0.1', hostPort: Number(host), containerPort: to });
  }
  return out;
}

/**
 * Nomad's memory mapping: with `memory_max`, `memory` is the reservation and `memory_max` the
 * limit; `memory_max = -1` (no hard limit): no limit (0) and `memory` the reservation.
 */
export function memoryLimits(config: TaskConfig): { limit: number; reservation: number } {
  const mb = config.task.resources?.memoryMB ?? 300;
  const max = config.task.resources?.memoryMaxMB;
  const MiB = 1024 * 1024;
  if (max === MEMORY_NO_LIMIT) return { limit: 0, reservation: mb * MiB };
  if (max && max > 0) return { limit: max * MiB, reservation: mb * MiB };
  return { limit: mb * MiB, reservation: 0 };
}

/** The task env as the container sees it: the dirs at their in-container paths. */
export function containerEnv(config: TaskConfig): string[] {
  const env = { ...config.env, NOMAD_ALLOC_DIR: '/alloc', NOMAD_TASK_DIR: '/local', NOMAD_SECRETS_DIR: '/secrets' };
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** Mounts of `mount` blocks, in the Engine's shape. */
function mounts(config: TaskConfig, cfg: DockerTaskConfigInput): NonNullable<Dockerode.HostConfig['Mounts']> {
  return [cfg.mount ?? []].flat().map((m): Dockerode.MountSettings => {
    const type = m.type ?? 'volume';
    const base = { Target: m.target, Source: '', Type: type, ReadOnly: !!m.readonly };
    if (type === 'tmpfs') {
      const t = one(m.tmpfs_options);
      return { ...base, TmpfsOptions: { SizeBytes: t?.size ?? 0, Mode: t?.mode ?? 0o1777 } };
    }
    if (type === 'bind') {
      const b = one(m.bind_options);
      return { ...base, Source: hostPath(config, m.source ?? ''), ...(b?.propagation ? { BindOptions: { Propagation: b.propagation as 'rprivate' } } : {}) };
    }
    const v = one(m.volume_options);
    const d = one(v?.driver_config);
    return {
      ...base,
      Source: m.source ?? '',
      VolumeOptions: {
        NoCopy: !!v?.no_copy,
        Labels: strMap(v?.labels),
        DriverConfig: { Name: d?.name ?? 'local', Options: strMap(d?.options) },
      },
    };
  });
}

/** The Engine's ulimit list from `ulimit { nofile = "1024:2048" }`. */
function ulimits(cfg: DockerTaskConfigInput): Array<{ Name: string; Soft: number; Hard: number }> {
  return Object.entries(strMap(cfg.ulimit)).map(([name, v]) => {
    const [soft, hard] = v.split(':');
    return { Name: name, Soft: Number(soft), Hard: Number(hard ?? soft) };
  });
}

/** The body of the container create, for one task start. `cpuset`: the cores picked for `cores`. */
export function createOptions(
  config: TaskConfig,
  cfg: DockerTaskConfigInput,
  plugin: DockerPluginConfig,
  cpuset: number[] | undefined,
): Dockerode.ContainerCreateOptions {
  const res = config.task.resources ?? {};
  const mem = memoryLimits(config);
  const ports = publishedPorts(config, cfg);
  const logging = one(cfg.logging);
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const p of ports) {
    for (const proto of ['tcp', 'udp']) {
      const key = `${p.containerPort}/${proto}`;
      exposed[key] = {};
      (bindings[key] ??= []).push({ HostIp: p.hostIp, HostPort: String(p.hostPort) });
    }
  }
  const period = cfg.cpu_cfs_period ?? 100_000;
  const mhzPerCore = Number(config.env.NOMAD_CPU_MHZ_PER_CORE ?? 0) || 1000;
  const binds = [
    `${config.allocDir.sharedDir}:/alloc`,
    `${config.taskDir.localDir}:/local`,
    `${config.taskDir.secretsDir}:/secrets`,
    ...(cfg.volumes ?? []).map((v) => {
      const [src = '', ...rest] = v.split(':');
      return [hostPath(config, src), ...rest].join(':');
    }),
  ];
  const hostConfig: Dockerode.HostConfig = {
    Binds: binds,
    Memory: mem.limit,
    MemorySwap: mem.limit, // no swap beyond the limit, as Nomad sets it
    ...(mem.reservation ? { MemoryReservation: mem.reservation } : {}),
    CpuShares: Math.max(2, res.cpu ?? 100),
    ...(cpuset?.length ? { CpusetCpus: cpuset.join(',') } : {}),
    ...(cfg.cpu_hard_limit ? { CpuPeriod: period, CpuQuota: Math.max(1000, Math.floor(((res.cpu ?? 100) / mhzPerCore) * period)) } : {}),
    ...(ports.length ? { PortBindings: bindings } : {}),
    NetworkMode: cfg.network_mode || 'bridge',
    ...(cfg.dns_servers ? { Dns: cfg.dns_servers } : {}),
    ...(cfg.dns_search_domains ? { DnsSearch: cfg.dns_search_domains } : {}),
    ...(cfg.dns_options ? { DnsOptions: cfg.dns_options } : {}),
    ...(cfg.extra_hosts ? { ExtraHosts: cfg.extra_hosts } : {}),
    Privileged: !!cfg.privileged,
    ...(cfg.cap_add ? { CapAdd: cfg.cap_add } : {}),
    ...(cfg.cap_drop ? { CapDrop: cfg.cap_drop } : {}),
    ...(cfg.security_opt ? { SecurityOpt: cfg.security_opt } : {}),
    ...(cfg.ulimit ? { Ulimits: ulimits(cfg) } : {}),
    ...(cfg.shm_size ? { ShmSize: cfg.shm_size } : {}),
    ...(cfg.sysctl ? { Sysctls: strMap(cfg.sysctl) } : {}),
    ...(cfg.init ? { Init: true } : {}),
    ...(cfg.pid_mode ? { PidMode: cfg.pid_mode } : {}),
    ...(cfg.ipc_mode ? { IpcMode: cfg.ipc_mode } : {}),
    ReadonlyRootfs: !!cfg.readonly_rootfs,
    ...(cfg.oom_score_adj !== undefined ? { OomScoreAdj: cfg.oom_score_adj } : {}),
    ...(cfg.pids_limit ? { PidsLimit: cfg.pids_limit } : {}),
    ...(cfg.volume_driver ? { VolumeDriver: cfg.volume_driver } : {}),
    ...(cfg.mount ? { Mounts: mounts(config, cfg) } : {}),
    ...(logging ? { LogConfig: { Type: logging.type ?? logging.driver ?? 'json-file', Config: strMap(logging.config) } } : {}),
  };
  const cmd = cfg.command !== undefined ? [cfg.command, ...(cfg.args ?? []).map(String)] : cfg.args?.length ? cfg.args.map(String) : undefined;
  return {
    name: containerName(config),
    Image: imageRef(cfg.image),
    Env: containerEnv(config),
    Labels: containerLabels(config, plugin, strMap(cfg.labels)),
    ...(cmd ? { Cmd: cmd } : {}),
    ...(cfg.entrypoint ? { Entrypoint: cfg.entrypoint } : {}),
    ...(cfg.work_dir ? { WorkingDir: cfg.work_dir } : {}),
    ...(cfg.hostname ? { Hostname: cfg.hostname } : {}),
    ...(ports.length ? { ExposedPorts: exposed } : {}),
    ...(one(cfg.healthchecks)?.disable ? { Healthcheck: { Test: ['NONE'] } } : {}),
    HostConfig: hostConfig,
  };
}
