/**
 * The agent file's `plugin "<driver>" { config { ... } }` blocks, as Nomad's client reads them:
 * `docker`'s client side (endpoint, privileged and capability rules, host volumes, GC, pull
 * timeout, extra labels) and `raw_exec`'s `enabled`. Keys berth has no use for (`infra_image`,
 * `logging`, ...) are accepted and ignored, as elsewhere in the agent file; a known key with a wrong
 * type is an `AgentConfigError` naming it.
 * @module
 */
import { parseGoDuration, errorText, type DockerPluginConfig } from '../../index.ts';

/** What the `plugin` blocks set, only what the file says. */
export interface PluginsConfig {
  /** `plugin "docker" { config { ... } }`, over Nomad's defaults. */
  docker?: Partial<DockerPluginConfig>;
  /** `plugin "raw_exec" { config { enabled } }`; berth's default is enabled. */
  rawExecEnabled?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A problem in a plugin block, with the key's path (the config reader wraps it). */
export class PluginConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginConfigError';
  }
}

/** HCL gives each block as a list of bodies; JSON may give the body itself. Merged in order. */
function body(v: unknown, path: string): Obj {
  if (v === undefined) return {};
  const out: Obj = {};
  for (const p of Array.isArray(v) ? v : [v]) {
    if (!isObj(p)) throw new PluginConfigError(`${path}: must be a block`);
    Object.assign(out, p);
  }
  return out;
}

function typed<T>(o: Obj, key: string, path: string, type: 'boolean' | 'string'): T | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== type) throw new PluginConfigError(`${path}.${key}: must be ${type === 'boolean' ? 'true or false' : 'a string'}, got ${JSON.stringify(v)}`);
  return v as T;
}

function strings(o: Obj, key: string, path: string): string[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new PluginConfigError(`${path}.${key}: must be a list of strings`);
  return v as string[];
}

function durationMs(o: Obj, key: string, path: string): number | undefined {
  const v = typed<string>(o, key, path, 'string');
  if (v === undefined) return undefined;
  try {
    return parseGoDuration(v);
  } catch (e) {
    throw new PluginConfigError(`${path}.${key}: ${errorText(e)}`);
  }
}

/** `plugin "docker" { config { ... } }` → the driver's client-side config (only what is set). */
function dockerPlugin(c: Obj, path: string): Partial<DockerPluginConfig> {
  const out: Partial<DockerPluginConfig> = {};
  const endpoint = typed<string>(c, 'endpoint', path, 'string');
  if (endpoint !== undefined) {
    if (!/^(unix:\/\/\/|tcp:\/\/)/.test(endpoint))
      throw new PluginConfigError(`${path}.endpoint: ${JSON.stringify(endpoint)} is not unix:///path or tcp://host:port`);
    out.endpoint = endpoint;
  }
  const priv = typed<boolean>(c, 'allow_privileged', path, 'boolean');
  if (priv !== undefined) out.allowPrivileged = priv;
  const caps = strings(c, 'allow_caps', path);
  if (caps !== undefined) out.allowCaps = caps.map((x) => x.toLowerCase().replace(/^cap_/, ''));
  const volumes = typed<boolean>(body(c.volumes, `${path}.volumes`), 'enabled', `${path}.volumes`, 'boolean');
  if (volumes !== undefined) out.volumesEnabled = volumes;
  if (c.gc !== undefined) {
    const g = body(c.gc, `${path}.gc`);
    const gp = `${path}.gc`;
    const gc: Partial<DockerPluginConfig['gc']> = {};
    const image = typed<boolean>(g, 'image', gp, 'boolean');
    if (image !== undefined) gc.image = image;
    const delay = durationMs(g, 'image_delay', gp);
    if (delay !== undefined) gc.imageDelayMs = delay;
    const container = typed<boolean>(g, 'container', gp, 'boolean');
    if (container !== undefined) gc.container = container;
    const dc = body(g.dangling_containers, `${gp}.dangling_containers`);
    const dangling = typed<boolean>(dc, 'enabled', `${gp}.dangling_containers`, 'boolean');
    if (dangling !== undefined) gc.danglingContainers = dangling;
    const grace = durationMs(dc, 'creation_grace', `${gp}.dangling_containers`);
    if (grace !== undefined) gc.danglingCreationGraceMs = grace;
    out.gc = gc as DockerPluginConfig['gc'];
  }
  const pull = durationMs(c, 'pull_activity_timeout', path);
  if (pull !== undefined) out.pullActivityTimeoutMs = pull;
  const labels = strings(c, 'extra_labels', path);
  if (labels !== undefined) out.extraLabels = labels;
  return out;
}

/** The agent file's `plugin` blocks (`doc.plugin`) → {@link PluginsConfig}. */
export function readPlugins(plugin: unknown): PluginsConfig {
  if (plugin === undefined) return {};
  // HCL: { docker: [ { config: [ {...} ] } ] }; JSON may also give [{ docker: {...} }].
  const byName: Obj = {};
  for (const p of Array.isArray(plugin) ? plugin : [plugin]) {
    if (!isObj(p)) throw new PluginConfigError('plugin: must be plugin "<name>" { config { ... } } blocks');
    for (const [name, v] of Object.entries(p)) byName[name] = { ...body(byName[name], `plugin.${name}`), ...body(v, `plugin.${name}`) };
  }
  const out: PluginsConfig = {};
  for (const [name, v] of Object.entries(byName)) {
    const config = body((v as Obj).config, `plugin.${name}.config`);
    const path = `plugin.${name}.config`;
    if (name === 'docker') out.docker = dockerPlugin(config, path);
    else if (name === 'raw_exec') {
      const enabled = typed<boolean>(config, 'enabled', path, 'boolean');
      if (enabled !== undefined) out.rawExecEnabled = enabled;
    }
  }
  return out;
}
