/**
 * The task `config` of each driver berth ships, as schemas: one validation for `berth validate`,
 * `berth run`, `parseAllocation`, the agent and the drivers themselves (their `validateConfig`
 * runs the same schema). A driver berth does not ship keeps an opaque config, checked by that
 * driver when a client has it.
 * @module
 */
import { z } from 'zod';
import { goDuration } from './fields.ts';
import { argStringProblem } from './limits.ts';
import { issueLines, strict } from './issues.ts';
import { dockerConfigSchema } from './docker-config.ts';


const argString = (what: string, required?: string) =>
  z.string({ error: (iss) => (iss.input === undefined && required ? required : 'must be a string') }).superRefine((s, ctx) => {
    const p = argStringProblem(s, what);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

/** raw_exec and exec: Nomad's `command` and `args`. */
export const processConfigSchema = strict(
  {
    command: argString('command', 'missing required config "command" (a non-empty string)')
      .refine((s) => s.trim() !== '', { error: 'missing required config "command" (a non-empty string)' })
      .describe('The program to run: a path, or a name looked up in PATH.'),
    args: z
      .array(z.union([z.string(), z.number()]), { error: 'must be a list of strings' })
      .superRefine((list, ctx) =>
        list.forEach((a, i) => {
          const p = typeof a === 'string' ? argStringProblem(a, 'argument') : undefined;
          if (p) ctx.addIssue({ code: 'custom', message: p, path: [i] });
        }),
      )
      .optional()
      .describe('Arguments; ${NOMAD_*} and other variables are interpolated at start.'),
  },
  'raw_exec / exec task config',
);

const mockCommandShape = {
  run_for: goDuration.optional(),
  exit_code: z.int({ error: 'must be an integer' }).optional(),
  exit_signal: z.int({ error: 'must be an integer' }).optional(),
  exit_err_msg: z.string().optional(),
  signal_error: z.string().optional(),
  stdout_string: z.string().optional(),
  stdout_repeat: z.int({ error: 'must be an integer' }).optional(),
  stdout_repeat_duration: goDuration.optional(),
  stderr_string: z.string().optional(),
  stderr_repeat: z.int({ error: 'must be an integer' }).optional(),
  stderr_repeat_duration: goDuration.optional(),
};

const mockCommandSchema = strict(mockCommandShape, 'what a mock exec runs');

/** mock_driver: Nomad's mock driver config. */
export const mockConfigSchema = strict(
  {
    ...mockCommandShape,
    start_error: z.string().optional(),
    start_error_recoverable: z.boolean().optional(),
    start_block_for: goDuration.optional(),
    kill_after: goDuration.optional(),
    plugin_exit_after: goDuration.optional(),
    exec_command: z.union([mockCommandSchema, z.array(mockCommandSchema).length(1)], { error: 'must be a block' }).optional(),
  },
  'mock_driver task config',
);

/** The config schema of each driver berth ships. */
export const DRIVER_CONFIG_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  raw_exec: processConfigSchema,
  exec: processConfigSchema,
  mock_driver: mockConfigSchema,
  docker: dockerConfigSchema,
};

/** Drivers of Nomad's that berth does not run; a task using one is refused by name. */
export const UNSUPPORTED_DRIVERS: readonly string[] = ['podman', 'java', 'qemu', 'containerd-driver', 'lxc', 'rkt'];

/**
 * `key: problem` lines for a task config of a driver berth ships (paths relative to the config);
 * none for a valid config or a driver berth does not ship.
 */
export function driverConfigIssues(driver: string, config: unknown): string[] {
  const schema = DRIVER_CONFIG_SCHEMAS[driver];
  if (!schema) return [];
  const r = schema.safeParse(config ?? {});
  return r.success ? [] : issueLines(r.error);
}
