/**
 * Nomad's task environment: the `NOMAD_*` variables a task sees, plus the task's own `env`.
 *
 * ```
 *  host env (raw_exec only, minus the denylist)  <  NOMAD_* variables  <  task.env (interpolated)
 * ```
 * For a chroot driver (`exec`) the directory variables are the in-chroot paths
 * `/alloc`, `/local` and `/secrets`; otherwise they are the host paths.
 * @module
 */
import type { Allocation, Task } from '../../model/types.ts';

/** Nomad's default `env.denylist`: host variables never passed to a raw_exec task. */
export const DEFAULT_ENV_DENYLIST: readonly string[] = [
  'CONSUL_TOKEN', 'CONSUL_HTTP_TOKEN', 'CONSUL_LICENSE', 'VAULT_TOKEN', 'VAULT_LICENSE',
  'NOMAD_LICENSE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

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
  /** The alloc's index in its group (`NOMAD_ALLOC_INDEX`); 0 when unknown. */
  allocIndex?: number;
  /** Each of these is set only when given. */
  datacenter?: string;
  region?: string;
  nodeId?: string;
  nodeName?: string;
  /** Host environment to pass through underneath everything else (Nomad does this for raw_exec). */
  hostEnv?: Record<string, string | undefined>;
  /** Host variables to drop from `hostEnv`; default {@link DEFAULT_ENV_DENYLIST}. */
  envDenylist?: readonly string[];
  /**
   * false: `hostEnv` only resolves `${NAME}` in the task's env and is left out of the result; the
   * driver adds it at spawn ({@link withHostEnv}). Keeps a copy of the host environment out of
   * every task handle (it was most of a handle's size). Default true.
   */
  includeHostEnv?: boolean;
}

/** The host environment minus the denylist. */
export function filteredHostEnv(hostEnv: Record<string, string | undefined> = process.env, denylist: readonly string[] = DEFAULT_ENV_DENYLIST): Record<string, string> {
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
 * Builds the environment a task runs with.
 * @example
 * buildTaskEnv({ alloc, task, taskDir, allocDir }).NOMAD_ALLOC_NAME // 'example.cache[0]'
 */
export function buildTaskEnv(input: TaskEnvInput): Record<string, string> {
  const { alloc, task, taskDir, allocDir } = input;
  const host = input.hostEnv ? filteredHostEnv(input.hostEnv, input.envDenylist) : {};
  const keepHost = input.includeHostEnv !== false;
  const env: Record<string, string> = keepHost ? { ...host } : {};
  // What `${NAME}` resolves against: the host underneath, whether or not it is kept.
  const scope: Record<string, string> = keepHost ? env : { ...host };
  const chroot = input.fsIsolation === 'chroot';
  const jobName = alloc.job.name ?? alloc.job.id ?? alloc.jobId;
  const index = input.allocIndex ?? 0;
  const nomad: Record<string, string | undefined> = {
    NOMAD_ALLOC_DIR: chroot ? '/alloc' : allocDir.sharedDir,
    NOMAD_TASK_DIR: chroot ? '/local' : taskDir.localDir,
    NOMAD_SECRETS_DIR: chroot ? '/secrets' : taskDir.secretsDir,
    NOMAD_ALLOC_ID: alloc.id,
    NOMAD_SHORT_ALLOC_ID: alloc.id.slice(0, 8),
    NOMAD_ALLOC_NAME: `${jobName}.${alloc.taskGroup}[${index}]`,
    NOMAD_ALLOC_INDEX: String(index),
    NOMAD_JOB_ID: alloc.job.id ?? alloc.jobId,
    NOMAD_JOB_NAME: jobName,
    NOMAD_GROUP_NAME: alloc.taskGroup,
    NOMAD_TASK_NAME: task.name,
    NOMAD_NAMESPACE: alloc.namespace ?? alloc.job.namespace ?? 'default',
    NOMAD_DC: input.datacenter,
    NOMAD_REGION: input.region,
    NOMAD_NODE_ID: input.nodeId,
    NOMAD_NODE_NAME: input.nodeName,
  };
  for (const [k, v] of Object.entries(nomad)) {
    if (v === undefined || v === '') continue;
    env[k] = v;
    if (scope !== env) scope[k] = v;
  }
  for (const [k, v] of Object.entries(task.env ?? {})) {
    const value = interpolateEnv(String(v), scope);
    env[k] = value;
    if (scope !== env) scope[k] = value;
  }
  return env;
}

/**
 * Replaces `${NAME}` and `${env.NAME}` with values from `env`; unknown references stay as written
 * (Nomad leaves what it cannot resolve).
 * @example interpolateEnv('${NOMAD_TASK_DIR}/app.conf', env) // '/local/app.conf'
 */
export function interpolateEnv(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(?:env\.)?([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(env, name) ? env[name]! : whole);
}
