/**
 * The client side of the docker driver: Nomad's `plugin "docker" { config { ... } }`, defaults
 * filled. Plain data; the agent reads it from its config file, a library host passes it.
 * @module
 */

/** Nomad's default `allow_caps`: Docker's own default capability set. */
export const DEFAULT_ALLOW_CAPS: readonly string[] = [
  'audit_write',
  'chown',
  'dac_override',
  'fowner',
  'fsetid',
  'kill',
  'mknod',
  'net_bind_service',
  'setfcap',
  'setgid',
  'setpcap',
  'setuid',
  'sys_chroot',
];

/** The labels `extra_labels` may add, beside the alloc id every container carries. */
export const EXTRA_LABEL_NAMES: readonly string[] = ['job_name', 'job_id', 'task_group_name', 'task_name', 'namespace', 'node_name', 'node_id'];

/** `plugin "docker" { config { ... } }`, defaults filled. */
export interface DockerPluginConfig {
  /** The Engine's address: `unix:///var/run/docker.sock` (default) or `tcp://host:port`. */
  endpoint: string;
  allowPrivileged: boolean;
  /** Capabilities `cap_add` may name (lower case, no `CAP_`); `all` allows every one. */
  allowCaps: string[];
  /** `volumes { enabled }`: host paths outside the task dir may be mounted. */
  volumesEnabled: boolean;
  gc: {
    /** Remove an image once no task uses it (after `imageDelayMs`). */
    image: boolean;
    imageDelayMs: number;
    /** Remove a container once its task ended. */
    container: boolean;
    /** Remove containers berth's labels name but no alloc owns. */
    danglingContainers: boolean;
    /**
     * A dangling container younger than this is left alone (Nomad's `creation_grace`, 5 m): it
     * may be another client's on the same Engine, or one whose alloc is not recorded yet.
     */
    danglingCreationGraceMs: number;
  };
  /** A pull that reports no progress for this long fails. */
  pullActivityTimeoutMs: number;
  /** Globs over {@link EXTRA_LABEL_NAMES}. */
  extraLabels: string[];
}

/** Nomad's defaults. */
export function defaultDockerPluginConfig(): DockerPluginConfig {
  return {
    endpoint: 'unix:///var/run/docker.sock',
    allowPrivileged: false,
    allowCaps: [...DEFAULT_ALLOW_CAPS],
    volumesEnabled: false,
    gc: { image: true, imageDelayMs: 3 * 60_000, container: true, danglingContainers: true, danglingCreationGraceMs: 5 * 60_000 },
    pullActivityTimeoutMs: 2 * 60_000,
    extraLabels: [],
  };
}

/** `cap_net_admin`, `NET_ADMIN` → `net_admin`. */
export const normalizeCap = (c: string): string => c.toLowerCase().replace(/^cap_/, '');
