/**
 * The docker driver's task `config`, as Nomad's docker driver reads it. A block may come as an
 * object (JSON) or as a list of one object (HCL decodes every block to a list); repeatable blocks
 * (`mount`) are lists. `interactive` and `tty` are refused by name: berth gives a task no terminal.
 * @module
 */
import { z } from 'zod';
import { goDuration } from './fields.ts';
import { strict } from './issues.ts';


const strings = z.array(z.string(), { error: 'must be a list of strings' });
const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });
const stringMap = z.record(z.string(), scalar, { error: 'must be a block of key = value' });

/** One block: the object itself, or HCL's list of one. */
function block<T extends z.ZodType>(inner: T) {
  return z.union([inner, z.array(inner).length(1, { error: 'must be given once' })], { error: 'must be a block' });
}

/** A repeatable block: a list, or one object. */
function blocks<T extends z.ZodType>(inner: T) {
  return z.union([z.array(inner), inner], { error: 'must be a list of blocks' });
}

const noTerminal = (key: string) =>
  z.unknown().superRefine((_v, ctx) => ctx.addIssue({ code: 'custom', message: `${key} is not supported: berth runs containers without a terminal or stdin; remove it` }));

const mountSchema = strict({
  type: z.enum(['bind', 'volume', 'tmpfs']).optional(),
  source: z.string().optional(),
  target: z.string({ error: 'must be a string (the path in the container)' }),
  readonly: z.boolean().optional(),
  bind_options: block(strict({ propagation: z.string().optional() })).optional(),
  volume_options: block(
    strict({
      no_copy: z.boolean().optional(),
      labels: block(stringMap).optional(),
      driver_config: block(strict({ name: z.string().optional(), options: block(stringMap).optional() })).optional(),
    }),
  ).optional(),
  tmpfs_options: block(strict({ size: z.int().min(0).optional(), mode: z.int().min(0).optional() })).optional(),
});

/** The shape of a docker task config (keys as Nomad spells them). */
export const dockerConfigShape = {
  image: z.string({ error: (iss) => (iss.input === undefined ? 'missing required config "image"' : 'must be a string') }).min(1, { error: 'missing required config "image"' }),
  command: z.string().optional(),
  args: z.array(z.union([z.string(), z.number()]), { error: 'must be a list of strings' }).optional(),
  entrypoint: strings.optional(),
  work_dir: z.string().optional(),
  ports: strings.optional(),
  // A number, or its digits as a string (HCL converts "9107" for Nomad's `number` attribute).
  port_map: block(z.record(z.string(), z.union([z.int(), z.string().regex(/^\d+$/, { error: 'must be a port number' }).transform(Number)]).pipe(z.int().min(1).max(65535)))).optional(),
  network_mode: z.string().optional(),
  hostname: z.string().optional(),
  dns_servers: strings.optional(),
  dns_search_domains: strings.optional(),
  dns_options: strings.optional(),
  extra_hosts: strings.optional(),
  labels: block(stringMap).optional(),
  volumes: strings.optional(),
  volume_driver: z.string().optional(),
  mount: blocks(mountSchema).optional(),
  auth: block(
    strict({ username: z.string().optional(), password: z.string().optional(), email: z.string().optional(), server_address: z.string().optional() }),
  ).optional(),
  auth_soft_fail: z.boolean().optional(),
  force_pull: z.boolean().optional(),
  image_pull_timeout: goDuration.optional(),
  load: z.string().optional(),
  logging: block(strict({ type: z.string().optional(), driver: z.string().optional(), config: block(stringMap).optional() })).optional(),
  privileged: z.boolean().optional(),
  cap_add: strings.optional(),
  cap_drop: strings.optional(),
  security_opt: strings.optional(),
  ulimit: block(stringMap).optional(),
  shm_size: z.int().min(0).optional(),
  sysctl: block(stringMap).optional(),
  init: z.boolean().optional(),
  pid_mode: z.string().optional(),
  ipc_mode: z.string().optional(),
  readonly_rootfs: z.boolean().optional(),
  oom_score_adj: z.int().min(-1000).max(1000).optional(),
  pids_limit: z.int().min(0).optional(),
  cpu_hard_limit: z.boolean().optional(),
  cpu_cfs_period: z.int().min(1000).max(1_000_000).optional(),
  healthchecks: block(strict({ disable: z.boolean().optional() })).optional(),
  interactive: noTerminal('interactive').optional(),
  tty: noTerminal('tty').optional(),
};

/** docker: Nomad's docker driver task config. */
export const dockerConfigSchema = strict(dockerConfigShape, 'docker task config');

/** A docker task config as it validated (blocks may still be HCL's lists of one). */
export type DockerTaskConfigInput = z.infer<typeof dockerConfigSchema>;
