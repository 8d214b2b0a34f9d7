/**
 * The agent's configuration: Nomad's agent file (HCL or JSON) where it applies, read into one
 * plain {@link AgentConfig}, then the command line's flags on top. Pure except for reading the
 * file: every default is filled here, so the rest of the agent never guesses.
 *
 * Nomad's agent files are HCL1; berth reads them with HashiCorp's HCL2 parser, which takes the
 * same files except for two spellings: a block must not close on the line of its second
 * argument, and a map with quoted keys is an attribute (`chroot_env = { "/bin" = "/bin" }`).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { BerthError, parseGoDuration, errorText, type TemplateClientConfig } from '../../index.ts';
import { DEFAULT_MAX_DYNAMIC_PORT, DEFAULT_MIN_DYNAMIC_PORT } from '../scheduler/ports.ts';
import { PluginConfigError, readPlugins, type PluginsConfig } from './plugins.ts';
import { MAX_VALID_PORT, parsePortRanges } from './port-ranges.ts';
import { PREEMPTION_KEYS, type PreemptionConfig } from './preemption.ts';

/** The agent's configuration file (or a flag) is wrong; the message names the key. */
export class AgentConfigError extends BerthError {}

/** Which schedulers may preempt lower-priority allocs (Nomad's `preemption_config`). */
export type { PreemptionConfig };

/**
 * The server half's garbage collector (Nomad's `server` block keys, in ms): how old a terminal
 * evaluation, deployment or dead job must be before it is collected, and how often it looks.
 */
export interface ServerGcConfig {
  /** `eval_gc_threshold` (Nomad: 1h): terminal evaluations and their allocs. */
  evalGcThresholdMs: number;
  /** `batch_eval_gc_threshold` (Nomad: 24h): the same for batch jobs' evaluations. */
  batchEvalGcThresholdMs: number;
  /** `job_gc_threshold` (Nomad: 4h): dead jobs, with their evaluations and allocs. */
  jobGcThresholdMs: number;
  /** `deployment_gc_threshold` (Nomad: 1h): finished deployments. */
  deploymentGcThresholdMs: number;
  /** `job_gc_interval` (Nomad: 5m): how often the collector runs; 0 turns the periodic run off. */
  jobGcIntervalMs: number;
}

/** Nomad's server GC defaults. */
export const DEFAULT_SERVER_GC: ServerGcConfig = {
  evalGcThresholdMs: 3_600_000,
  batchEvalGcThresholdMs: 24 * 3_600_000,
  jobGcThresholdMs: 4 * 3_600_000,
  deploymentGcThresholdMs: 3_600_000,
  jobGcIntervalMs: 5 * 60_000,
};

/** Nomad's `tls` block (the HTTP half: berth serves no RPC). */
export interface AgentTls {
  http: boolean;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** Require client certificates signed by `caFile` (Nomad's `verify_https_client`). */
  verifyHttpsClient: boolean;
}

/** Everything the agent needs, defaults filled. */
export interface AgentConfig {
  dev: boolean;
  /**
   * Repair a damaged client state store at start (`-repair-state`): moved aside, a fresh one
   * made, live tasks reattached, the rest stopped and reported. Off by default, so damage is
   * never silently papered over.
   */
  repairState: boolean;
  dataDir: string;
  bindAddr: string;
  httpPort: number;
  name: string;
  region: string;
  datacenter: string;
  client: {
    /** MHz the node offers; default: read from /proc/cpuinfo. */
    cpuTotalCompute?: number;
    /** MB the node offers; default: read from /proc/meminfo. */
    memoryTotalMB?: number;
    /** Kept out of scheduling; `reservedPorts` is Nomad's text (`"22,80,8000-8100"`), checked here. */
    reserved: { cpu: number; memoryMB: number; diskMB: number; reservedPorts?: string };
    /** The dynamic port range (`min_dynamic_port`, `max_dynamic_port`; Nomad's 20000..32000). */
    minDynamicPort?: number;
    maxDynamicPort?: number;
    chrootEnv?: Record<string, string>;
    /**
     * Other agents' (or Nomad servers') HTTP API addresses: where this client asks about previous
     * allocations that are not its own (`NomadHttpRPC`), for remote waits and migrations.
     */
    servers?: string[];
    gcIntervalMs?: number;
    gcDiskUsageThreshold?: number;
    gcInodeUsageThreshold?: number;
    gcMaxAllocs?: number;
    gcParallelDestroys?: number;
    /** The client's `meta` block: `${meta.<key>}` in constraints. */
    meta?: Record<string, string>;
    /** Nomad's `node_class` (`${node.class}`); default empty. */
    nodeClass?: string;
    /** Nomad's `node_pool` (`${node.pool}`); default `default`. */
    nodePool?: string;
    /** The client's `template` block: what tasks' templates may do on this node. */
    template?: TemplateClientConfig;
  };
  preemption: PreemptionConfig;
  /** The server half's garbage collector. */
  serverGc: ServerGcConfig;
  acl: { enabled: boolean };
  tls: AgentTls;
  /**
   * Origins (`https://ops.example:8443`) besides the agent's own whose web pages may call the API
   * (`http_allowed_origins`, a berth key: Nomad has none). Empty by default: a browser request
   * from any other page is refused.
   */
  httpAllowedOrigins: string[];
  /** The `plugin "<driver>" { config }` blocks: docker's client side, raw_exec's `enabled`. */
  plugins: PluginsConfig;
}

/** What the command line gives `berth agent`. */
export interface AgentFlags {
  dev?: boolean;
  /** `-repair-state`: a damaged client state store is moved aside and repaired at start. */
  repairState?: boolean;
  configFiles?: string[];
  dataDir?: string;
  bindAddr?: string;
  port?: number;
}

/** Nomad's defaults: preemption for system jobs only. */
export const DEFAULT_PREEMPTION: PreemptionConfig = {
  serviceSchedulerEnabled: false,
  batchSchedulerEnabled: false,
  sysbatchSchedulerEnabled: false,
  systemSchedulerEnabled: true,
};

/**
 * berth's home when no flag or file names one: `$BERTH_DATA_DIR`, else `/var/lib/berth` for root,
 * else `$XDG_DATA_HOME/berth` (`~/.local/share/berth`).
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, euid: number = process.geteuid?.() ?? 1000): string {
  if (env.BERTH_DATA_DIR) return env.BERTH_DATA_DIR;
  if (euid === 0) return '/var/lib/berth';
  const xdg = env.XDG_DATA_HOME || join(env.HOME ?? tmpdir(), '.local', 'share');
  return join(xdg, 'berth');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** HCL blocks come as arrays of objects; JSON files may give the object itself. Merged in order. */
function block(parent: Obj, key: string, path: string): Obj {
  const v = parent[key];
  if (v === undefined) return {};
  const parts = Array.isArray(v) ? v : [v];
  const out: Obj = {};
  for (const p of parts) {
    if (!isObj(p)) throw new AgentConfigError(`${path}${key}: must be a block`);
    Object.assign(out, p);
  }
  return out;
}

function num(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
    throw new AgentConfigError(`${path}${key}: must be a non-negative number, got ${JSON.stringify(v)}`);
  return n;
}

function str(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AgentConfigError(`${path}${key}: must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function bool(o: Obj, key: string, path: string): boolean | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw new AgentConfigError(`${path}${key}: must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function duration(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') throw new AgentConfigError(`${path}${key}: must be a duration like "1m"`);
  try {
    return parseGoDuration(v);
  } catch (e) {
    throw new AgentConfigError(`${path}${key}: ${errorText(e)}`);
  }
}

/**
 * The client's `template` block (Nomad's names): `function_denylist`, `disable_file_sandbox`,
 * `block_query_wait`, `max_template_event_rate`. `max_stale` and `nomad_retry` are accepted: the
 * templates' data comes from this agent's own state, never stale and never failing for a while,
 * so any bound holds and nothing needs a retry. Consul and Vault settings name systems berth
 * does not serve and are refused, as are the client-wide `wait` bounds (set `wait` per template).
 */
function templateBlock(t: Obj): TemplateClientConfig {
  const p = 'client.template.';
  for (const k of Object.keys(t))
    if (
      ![
        'function_denylist',
        'function_blacklist',
        'disable_file_sandbox',
        'block_query_wait',
        'max_stale',
        'max_template_event_rate',
        'wait',
        'wait_bounds',
        'nomad_retry',
      ].includes(k)
    )
      throw new AgentConfigError(`${p}${k}: not supported by berth (it serves no Consul or Vault data to templates)`);
  const out: TemplateClientConfig = {};
  const deny = t.function_denylist ?? t.function_blacklist;
  if (deny !== undefined) {
    if (!Array.isArray(deny) || deny.some((x) => typeof x !== 'string')) throw new AgentConfigError(`${p}function_denylist: must be a list of function names`);
    out.functionDenylist = deny as string[];
  }
  const sandbox = bool(t, 'disable_file_sandbox', p);
  if (sandbox !== undefined) out.disableFileSandbox = sandbox;
  const wait = duration(t, 'block_query_wait', p);
  if (wait !== undefined) out.blockQueryWaitMs = wait;
  const rate = duration(t, 'max_template_event_rate', p);
  if (rate !== undefined) out.maxTemplateEventRateMs = rate;
  if (t.max_stale !== undefined) duration(t, 'max_stale', p);
  // Reads of this agent's own state do not fail for a while and then succeed: nothing to retry.
  if (t.nomad_retry !== undefined) block(t, 'nomad_retry', p);
  for (const k of ['wait', 'wait_bounds'] as const)
    if (t[k] !== undefined) throw new AgentConfigError(`${p}${k}: not supported by berth yet (set wait on each template block)`);
  return out;
}

/** `http_allowed_origins`: a list of origins, each normalised as a browser writes it (lower case, no default port). */
function allowedOrigins(v: unknown): string[] {
  if (!Array.isArray(v)) throw new AgentConfigError('http_allowed_origins: must be a list of origins like "https://ops.example"');
  return v.map((o, i) => {
    let origin: string | undefined;
    try {
      if (typeof o === 'string' && /^https?:\/\/[^/?#]+\/?$/i.test(o)) origin = new URL(o).origin;
    } catch {
      origin = undefined;
    }
    if (!origin || origin === 'null')
      throw new AgentConfigError(`http_allowed_origins[${i}]: ${JSON.stringify(o)} is not an origin (scheme://host[:port], no path)`);
    return origin;
  });
}

/** A partial config read from one file: only what the file says. */
export type AgentConfigPatch = {
  [K in keyof AgentConfig]?: AgentConfig[K] extends object ? Partial<AgentConfig[K]> : AgentConfig[K];
};

/**
 * Reads one decoded agent file (HCL decoded to JSON, or a JSON file) into a patch. Keys berth
 * has no use for (`server { enabled }`, `client { enabled }`, `consul`, ...) are accepted and
 * ignored, as a Nomad agent file is meant to run as written; a known key with a wrong type is an
 * {@link AgentConfigError}.
 */
export function readAgentConfig(doc: unknown): AgentConfigPatch {
  if (!isObj(doc)) throw new AgentConfigError('agent config must be an object');
  const out: AgentConfigPatch = {};
  const dataDir = str(doc, 'data_dir', '');
  if (dataDir !== undefined) out.dataDir = dataDir;
  const bindAddr = str(doc, 'bind_addr', '');
  if (bindAddr !== undefined) out.bindAddr = bindAddr;
  for (const k of ['name', 'region', 'datacenter'] as const) {
    const v = str(doc, k, '');
    if (v !== undefined) out[k] = v;
  }
  const http = num(block(doc, 'ports', ''), 'http', 'ports.');
  if (http !== undefined) out.httpPort = http;

  const c = block(doc, 'client', '');
  const client: Partial<AgentConfig['client']> = {};
  const cpu = num(c, 'cpu_total_compute', 'client.');
  if (cpu !== undefined) client.cpuTotalCompute = cpu;
  const mem = num(c, 'memory_total_mb', 'client.');
  if (mem !== undefined) client.memoryTotalMB = mem;
  if (c.reserved !== undefined) {
    const r = block(c, 'reserved', 'client.');
    client.reserved = {
      cpu: num(r, 'cpu', 'client.reserved.') ?? 0,
      memoryMB: num(r, 'memory', 'client.reserved.') ?? 0,
      diskMB: num(r, 'disk', 'client.reserved.') ?? 0,
    };
    const ports = r.reserved_ports === undefined ? undefined : typeof r.reserved_ports === 'number' ? String(r.reserved_ports) : r.reserved_ports;
    if (ports !== undefined) {
      if (typeof ports !== 'string')
        throw new AgentConfigError(`client.reserved.reserved_ports: must be a string like "22,80,8000-8100", got ${JSON.stringify(ports)}`);
      try {
        parsePortRanges(ports);
      } catch (e) {
        throw new AgentConfigError(`client.reserved.reserved_ports: ${errorText(e)}`);
      }
      client.reserved.reservedPorts = ports;
    }
  }
  for (const [key, field] of [
    ['min_dynamic_port', 'minDynamicPort'],
    ['max_dynamic_port', 'maxDynamicPort'],
  ] as const) {
    const v = num(c, key, 'client.');
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v > MAX_VALID_PORT) throw new AgentConfigError(`Invalid dynamic port range: ${key}=${v}`);
    client[field] = v;
  }
  if (c.chroot_env !== undefined) {
    const env = block(c, 'chroot_env', 'client.');
    for (const [k, v] of Object.entries(env)) if (typeof v !== 'string') throw new AgentConfigError(`client.chroot_env.${k}: must be a string`);
    client.chrootEnv = env as Record<string, string>;
  }
  if (c.meta !== undefined) {
    const meta = block(c, 'meta', 'client.');
    for (const [k, v] of Object.entries(meta))
      if (!['string', 'number', 'boolean'].includes(typeof v)) throw new AgentConfigError(`client.meta.${k}: must be a string`);
    client.meta = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, String(v)]));
  }
  const nodeClass = str(c, 'node_class', 'client.');
  if (nodeClass !== undefined) client.nodeClass = nodeClass;
  const nodePool = str(c, 'node_pool', 'client.');
  if (nodePool !== undefined) client.nodePool = nodePool;
  if (c.servers !== undefined) {
    if (!Array.isArray(c.servers) || c.servers.some((x) => typeof x !== 'string')) throw new AgentConfigError('client.servers: must be a list of addresses');
    client.servers = (c.servers as string[]).map((a) => (/^https?:\/\//.test(a) ? a : `http://${a}`));
  }
  const gcInterval = duration(c, 'gc_interval', 'client.');
  if (gcInterval !== undefined) client.gcIntervalMs = gcInterval;
  const gcNums: Array<[string, 'gcDiskUsageThreshold' | 'gcInodeUsageThreshold' | 'gcMaxAllocs' | 'gcParallelDestroys']> = [
    ['gc_disk_usage_threshold', 'gcDiskUsageThreshold'],
    ['gc_inode_usage_threshold', 'gcInodeUsageThreshold'],
    ['gc_max_allocs', 'gcMaxAllocs'],
    ['gc_parallel_destroys', 'gcParallelDestroys'],
  ];
  for (const [key, field] of gcNums) {
    const v = num(c, key, 'client.');
    if (v !== undefined) client[field] = v;
  }
  if (c.template !== undefined) client.template = templateBlock(block(c, 'template', 'client.'));
  if (Object.keys(client).length) out.client = client;

  const srv = block(doc, 'server', '');
  const serverGc: Partial<ServerGcConfig> = {};
  const gcKeys: Array<[string, keyof ServerGcConfig]> = [
    ['eval_gc_threshold', 'evalGcThresholdMs'],
    ['batch_eval_gc_threshold', 'batchEvalGcThresholdMs'],
    ['job_gc_threshold', 'jobGcThresholdMs'],
    ['deployment_gc_threshold', 'deploymentGcThresholdMs'],
    ['job_gc_interval', 'jobGcIntervalMs'],
  ];
  for (const [key, field] of gcKeys) {
    const v = duration(srv, key, 'server.');
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0) throw new AgentConfigError(`server.${key}: must be a duration of 0 or more, got ${JSON.stringify(srv[key])}`);
    serverGc[field] = v;
  }
  if (Object.keys(serverGc).length) out.serverGc = serverGc;

  const pre = block(block(srv, 'default_scheduler_config', 'server.'), 'preemption_config', 'server.default_scheduler_config.');
  const preemption: Partial<PreemptionConfig> = {};
  const pp = 'server.default_scheduler_config.preemption_config.';
  for (const { hcl, field } of PREEMPTION_KEYS) {
    const v = bool(pre, hcl, pp);
    if (v !== undefined) preemption[field] = v;
  }
  if (Object.keys(preemption).length) out.preemption = preemption;

  if (doc.http_allowed_origins !== undefined) out.httpAllowedOrigins = allowedOrigins(doc.http_allowed_origins);

  try {
    const plugins = readPlugins(doc.plugin);
    if (Object.keys(plugins).length) out.plugins = plugins;
  } catch (e) {
    if (e instanceof PluginConfigError) throw new AgentConfigError(e.message);
    throw e;
  }

  const acl = bool(block(doc, 'acl', ''), 'enabled', 'acl.');
  if (acl !== undefined) out.acl = { enabled: acl };

  if (doc.tls !== undefined) {
    const t = block(doc, 'tls', '');
    const tls: Partial<AgentTls> = {};
    const h = bool(t, 'http', 'tls.');
    if (h !== undefined) tls.http = h;
    const v = bool(t, 'verify_https_client', 'tls.');
    if (v !== undefined) tls.verifyHttpsClient = v;
    for (const [key, field] of [
      ['ca_file', 'caFile'],
      ['cert_file', 'certFile'],
      ['key_file', 'keyFile'],
    ] as const) {
      const s = str(t, key, 'tls.');
      if (s !== undefined) tls[field] = s;
    }
    out.tls = tls;
  }
  return out;
}

/** Decodes one agent file: JSON when it ends in `.json`, HCL otherwise. */
export async function loadAgentConfigFile(file: string): Promise<AgentConfigPatch> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new AgentConfigError(`cannot read agent config ${file}: ${(e as NodeJS.ErrnoException).code ?? errorText(e)}`);
  }
  let doc: unknown;
  try {
    doc = file.endsWith('.json') ? JSON.parse(text) : await parseHcl(file, text);
  } catch (e) {
    throw new AgentConfigError(`${file}: ${errorText(e).replace(/^parse config: /, '')}`);
  }
  try {
    return readAgentConfig(doc);
  } catch (e) {
    throw new AgentConfigError(`${file}: ${errorText(e)}`);
  }
}

/**
 * Files in order, then flags, over the defaults. `-dev` without a data dir gets a fresh temp dir
 * (the caller makes it); without `-dev`, the default home.
 */
export function resolveAgentConfig(patches: AgentConfigPatch[], flags: AgentFlags, env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const cfg: AgentConfig = {
    dev: !!flags.dev,
    repairState: !!flags.repairState,
    dataDir: '',
    bindAddr: '127.0.0.1',
    httpPort: 4646,
    name: 'berth',
    region: 'global',
    datacenter: 'dc1',
    client: { reserved: { cpu: 0, memoryMB: 0, diskMB: 0 } },
    preemption: { ...DEFAULT_PREEMPTION },
    serverGc: { ...DEFAULT_SERVER_GC },
    acl: { enabled: false },
    tls: { http: false, verifyHttpsClient: false },
    httpAllowedOrigins: [],
    plugins: {},
  };
  for (const p of patches) {
    const { client, preemption, serverGc, acl, tls, plugins, ...rest } = p;
    Object.assign(cfg, rest);
    if (serverGc) cfg.serverGc = { ...cfg.serverGc, ...serverGc };
    if (client) cfg.client = { ...cfg.client, ...client };
    if (preemption) cfg.preemption = { ...cfg.preemption, ...preemption };
    if (acl) cfg.acl = { ...cfg.acl, ...acl };
    if (tls) cfg.tls = { ...cfg.tls, ...tls };
    if (plugins) {
      const docker = plugins.docker
        ? { ...cfg.plugins.docker, ...plugins.docker, gc: { ...cfg.plugins.docker?.gc, ...plugins.docker.gc } }
        : cfg.plugins.docker;
      cfg.plugins = { ...cfg.plugins, ...plugins, ...(docker ? { docker: docker as PluginsConfig['docker'] } : {}) };
    }
  }
  if (flags.dataDir !== undefined) cfg.dataDir = flags.dataDir;
  if (flags.bindAddr !== undefined) cfg.bindAddr = flags.bindAddr;
  if (flags.port !== undefined) cfg.httpPort = flags.port;
  if (!cfg.dataDir && !cfg.dev) cfg.dataDir = defaultDataDir(env);
  if (cfg.tls.http && (!cfg.tls.certFile || !cfg.tls.keyFile)) throw new AgentConfigError('tls.http = true needs tls.cert_file and tls.key_file');
  if (cfg.httpPort > 65535) throw new AgentConfigError(`ports.http: ${cfg.httpPort} is not a port`);
  // Nomad's check, on the merged result (each end may come from another file).
  const min = cfg.client.minDynamicPort ?? DEFAULT_MIN_DYNAMIC_PORT;
  const max = cfg.client.maxDynamicPort ?? DEFAULT_MAX_DYNAMIC_PORT;
  if (min > max) throw new AgentConfigError(`Invalid dynamic port range: min_dynamic_port=${min} and max_dynamic_port=${max}`);
  return cfg;
}
