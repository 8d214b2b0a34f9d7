/**
 * THE schema of berth's allocation JSON (camelCase, durations in ms): one definition that
 * validates (`parseAllocation`, `berth validate`, `berth run`, the agent, `jobFromApi`) and that
 * the committed JSON Schemas (`schema/*.schema.json`) are generated from. Cross-field rules Nomad
 * applies (duplicate names, one leader, memory_max above memory, ...) are refinements here too.
 * @module
 */
import { z } from 'zod';
import { isUUID, jobIdProblem, taskNameProblem } from '../names.ts';
import { ARG_MAX, envEntryBytes, MAX_GROUP_COUNT } from './limits.ts';
import { DRIVER_CONFIG_SCHEMAS, driverConfigIssues, UNSUPPORTED_DRIVERS } from './driver-config.ts';
import { pathEscapesAllocViaRelative } from '../alloc-paths.ts';
import { envMap, epochMs, memoryMaxMB, ms, nonNegInt, nonNegNum, oneOf, sizeMB, stringList } from './fields.ts';
import { strict } from './issues.ts';

/** Cross-field rules run even when a field failed, so every problem is reported at once. */
const always = { when: () => true };

const custom = (ctx: z.RefinementCtx, path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', message, path });

/** A required string's type problems; its other checks (min length) keep berth's usual wording. */
const requiredString = (iss: { code: string; input?: unknown }) =>
  iss.input === undefined ? 'is required' : iss.code === 'invalid_type' ? 'must be a string' : undefined;

const uuid = (what: string) => z.string({ error: 'must be a string' }).refine(isUUID, { error: 'must be a 36-character UUID' }).describe(what);

/** Nomad's restart policy. */
export const restartPolicySchema = strict(
  {
    // Each field optional: a partial policy is completed over the job type's defaults (Nomad's Canonicalize).
    attempts: nonNegInt().optional().describe('Restarts allowed within intervalMs'),
    intervalMs: ms('Window the attempts are counted in').optional(),
    delayMs: ms('Wait before a restart').optional(),
    mode: oneOf(['fail', 'delay']).optional().describe('What happens when the attempts are used up'),
    renderTemplates: z.boolean().optional().describe("Render the task's templates afresh before each restart"),
  },
  'Nomad restart policy',
);

/** Nomad's reschedule policy. */
export const reschedulePolicySchema = strict(
  {
    attempts: nonNegInt().optional(),
    intervalMs: ms('Window the attempts are counted in').optional(),
    delayMs: ms('Delay before the first reschedule').optional(),
    delayFunction: z
      .enum(['constant', 'exponential', 'fibonacci', ''])
      .optional()
      .describe("Default per job type ('' for system jobs, which are not rescheduled)"),
    maxDelayMs: ms('Upper bound of the delay').optional(),
    unlimited: z.boolean().optional(),
  },
  'Nomad reschedule block',
);

/** Nomad's migrate block. */
export const migrateSchema = strict(
  {
    maxParallel: nonNegInt().default(1),
    healthCheck: oneOf(['checks', 'task_states']).default('checks'),
    minHealthyTimeMs: ms('Time an alloc must be healthy').default(10_000),
    healthyDeadlineMs: ms('Deadline for an alloc to become healthy').default(300_000),
  },
  'Nomad migrate block',
);

/** Nomad's update block. */
export const updateSchema = strict(
  {
    maxParallel: nonNegInt().default(1),
    healthCheck: oneOf(['checks', 'task_states', 'manual']).default('checks'),
    minHealthyTimeMs: ms('Time an alloc must be healthy').default(10_000),
    healthyDeadlineMs: ms('Deadline for an alloc to become healthy').default(300_000),
    progressDeadlineMs: ms('Deadline for the deployment to make progress').default(600_000),
    autoRevert: z.boolean().default(false),
    autoPromote: z.boolean().default(false),
    canary: nonNegInt().default(0),
    staggerMs: ms('Delay between update batches').default(30_000),
  },
  'Nomad update block',
);

const portSchema = strict(
  {
    label: z.string().min(1),
    value: nonNegInt().max(65535).optional(),
    to: z.int().min(-1).max(65535).optional(),
    hostNetwork: z.string().optional(),
  },
  'A port "<label>" block',
);

/** A group network block (host mode only). */
export const networkSchema = strict(
  {
    mode: z.literal('host', { error: 'only "host" networking is supported by berth' }).default('host'),
    reservedPorts: z.array(portSchema).default([]),
    dynamicPorts: z.array(portSchema).default([]),
  },
  'A group network block',
);

const checkRestartSchema = strict(
  { limit: nonNegInt().default(0), graceMs: ms('Grace after a (re)start').default(1000), ignoreWarnings: z.boolean().default(false) },
  'check_restart block',
);

const checkSchema = strict(
  {
    name: z.string().optional(),
    type: oneOf(['http', 'tcp', 'script']),
    path: z.string().optional(),
    method: z.string().optional(),
    header: z.record(z.string(), stringList()).optional(),
    protocol: oneOf(['http', 'https']).optional(),
    portLabel: z.string().optional(),
    command: z.string().optional(),
    args: stringList().optional(),
    task: z.string().optional(),
    intervalMs: ms('Time between checks'),
    timeoutMs: ms('Time a check may take'),
    initialStatus: oneOf(['passing', 'warning', 'critical']).optional(),
    successBeforePassing: nonNegInt().optional(),
    failuresBeforeCritical: nonNegInt().optional(),
    checkRestart: checkRestartSchema.optional(),
  },
  'A service check',
).superRefine((c, ctx) => {
  if (!c || typeof c !== 'object') return;
  if (c.type === 'http' && !c.path) custom(ctx, ['path'], 'an http check needs a path');
  if (c.type === 'script' && !c.command) custom(ctx, ['command'], 'a script check needs a command');
  if (typeof c.intervalMs === 'number' && c.intervalMs < 1000) custom(ctx, ['intervalMs'], `minimum check interval is 1s; got ${c.intervalMs}ms`);
}, always);

/** A service block (Nomad's native provider). */
export const serviceSchema = strict(
  {
    name: z.string().min(1),
    portLabel: z.string().optional(),
    tags: stringList().optional(),
    meta: z.record(z.string(), z.string()).optional(),
    addressMode: oneOf(['auto', 'host', 'driver', 'alloc']).optional(),
    address: z.string().optional(),
    provider: z.literal('nomad', { error: 'only the "nomad" service provider is supported by berth' }).optional(),
    taskName: z.string().optional(),
    checks: z.array(checkSchema).optional(),
  },
  'A service block',
);

/** A task artifact block. */
export const artifactSchema = strict(
  {
    source: z.string().min(1),
    destination: z.string().optional(),
    mode: oneOf(['any', 'file', 'dir']).optional(),
    options: z.record(z.string(), z.string()).optional(),
    headers: z.record(z.string(), z.string()).optional(),
  },
  'A task artifact block',
).superRefine((a, ctx) => {
  if (!a || typeof a !== 'object') return;
  // Nomad's TaskArtifact.Validate: relative to the task dir (an absolute path is joined under
  // it), anywhere in the alloc dir (`../alloc/x` is the shared alloc/ dir).
  const d = typeof a.destination === 'string' ? a.destination : '';
  if (pathEscapesAllocViaRelative('task', d)) custom(ctx, ['destination'], 'destination escapes allocation directory');
}, always);

/** Task resources, with Nomad's minimums. */
export const resourcesSchema = strict(
  {
    cpu: nonNegInt().optional().describe('CPU in MHz'),
    memoryMB: sizeMB('Memory (the reservation when memoryMaxMB is set)').optional(),
    memoryMaxMB: memoryMaxMB('Hard memory limit with oversubscription').optional(),
    cores: nonNegInt().optional().describe('Whole CPU cores reserved'),
    secretsMB: sizeMB('Size of the secrets/ tmpfs').optional(),
    diskMB: sizeMB("Nomad's legacy task disk").optional(),
  },
  'Task resources',
).superRefine((r, ctx) => {
  if (!r || typeof r !== 'object') return;
  if (typeof r.cpu === 'number' && r.cpu < 1) custom(ctx, ['cpu'], `minimum CPU value is 1; got ${r.cpu}`);
  if (typeof r.memoryMB === 'number' && r.memoryMB < 10) custom(ctx, ['memoryMB'], `minimum MemoryMB value is 10; got ${r.memoryMB}`);
  // As Nomad: 0 (unset) and -1 (no hard limit) are not sizes to compare (other negatives are refused above).
  if (typeof r.memoryMaxMB === 'number' && r.memoryMaxMB > 0 && typeof r.memoryMB === 'number' && r.memoryMaxMB < r.memoryMB)
    custom(ctx, ['memoryMaxMB'], `MemoryMaxMB value (${r.memoryMaxMB}) should be larger than MemoryMB value (${r.memoryMB})`);
}, always);

const logsSchema = strict(
  {
    maxFiles: nonNegInt().default(10).describe('Rotated log files kept per stream'),
    maxFileSizeMB: nonNegNum().default(10).describe('Size of one log file, in MB'),
  },
  'Task log rotation',
).superRefine((l, ctx) => {
  if (!l || typeof l !== 'object') return;
  if (typeof l.maxFiles === 'number' && l.maxFiles < 1) custom(ctx, ['maxFiles'], 'must be at least 1');
  if (typeof l.maxFileSizeMB === 'number' && l.maxFileSizeMB <= 0) custom(ctx, ['maxFileSizeMB'], 'must be positive');
}, always);

const constraintSchema = strict(
  {
    lTarget: z.string().optional(),
    rTarget: z.string().optional(),
    operand: z.string().min(1).describe("One of Nomad's constraint operators"),
  },
  'A placement constraint',
);
const affinitySchema = strict(
  {
    lTarget: z.string().optional(),
    rTarget: z.string().optional(),
    operand: z.string().min(1),
    weight: z.number().int().min(-100).max(100).optional(),
  },
  'A placement affinity',
);
const spreadSchema = strict(
  {
    attribute: z.string(),
    weight: z.number().int().min(0).max(100).optional(),
    spreadTarget: z.array(strict({ value: z.string(), percent: z.number().int().min(0).max(100).optional() }, 'A spread target')).optional(),
  },
  'A placement spread',
);

/** One task. */
export const taskSchema = strict(
  {
    name: z
      .string({ error: (iss) => (iss.input === undefined ? 'must be a non-empty string' : 'must be a non-empty string') })
      .describe('Task name (a directory name)'),
    driver: z.string().min(1).describe('raw_exec, exec, mock_driver, or a driver the host registered'),
    config: z.record(z.string(), z.unknown(), { error: 'must be an object' }).default({}).describe("The driver's config"),
    env: envMap('Environment variables').optional(),
    user: z.string().optional(),
    leader: z.boolean().optional(),
    lifecycle: strict({ hook: oneOf(['prestart', 'poststart', 'poststop']), sidecar: z.boolean().default(false) }, 'Lifecycle hook').optional(),
    killTimeoutMs: ms('Time between the kill signal and SIGKILL').optional(),
    killSignal: z.string().optional(),
    restartPolicy: restartPolicySchema.optional(),
    logs: logsSchema.optional(),
    meta: envMap('Task meta (NOMAD_META_*)', 'NOMAD_META_').optional(),
    resources: resourcesSchema.optional(),
    shutdownDelayMs: ms('Delay between deregistering services and the kill').optional(),
    artifacts: z.array(artifactSchema).optional(),
    services: z.array(serviceSchema).optional(),
    constraints: z.array(constraintSchema).optional(),
    affinities: z.array(affinitySchema).optional(),
    dispatchPayload: strict({ file: z.string().min(1, { error: 'must name a file under local/' }) }, "Where a dispatched job's payload is written").optional(),
    templates: z
      .array(
        strict(
          {
            data: z.string().optional(),
            source: z.string().optional(),
            destination: z.string().min(1, { error: 'must name a file in the task dir' }),
            changeMode: oneOf(['restart', 'signal', 'noop', 'script']).optional(),
            changeSignal: z.string().optional(),
            splayMs: ms('Random wait before a change is acted on').optional(),
            perms: z.string().regex(/^0?[0-7]{3,4}$/, { error: 'must be an octal mode like "0644"' }).optional(),
            env: z.boolean().optional(),
            leftDelimiter: z.string().optional(),
            rightDelimiter: z.string().optional(),
            errorOnMissingKey: z.boolean().optional(),
            once: z.boolean().optional(),
            changeScript: strict(
              {
                command: z.string().min(1, { error: 'must name the command to run' }),
                args: z.array(z.string()).optional(),
                timeoutMs: ms('Bound on the script').optional(),
                failOnError: z.boolean().optional(),
              },
              'The command a script change runs in the task',
            ).optional(),
            wait: strict({ minMs: ms('Quiet time before a re-render').optional(), maxMs: ms('Longest wait before a re-render').optional() }, 'Quiescence').optional(),
            uid: z.int().optional(),
            gid: z.int().optional(),
          },
          'A template rendered into the task dir',
        ).superRefine((t, ctx) => {
          // Nomad's Template.Validate.
          if (t.changeMode === 'signal' && !t.changeSignal) custom(ctx, ['changeSignal'], 'must specify signal value when change mode is signal');
          if (t.changeMode === 'script' && !t.changeScript) custom(ctx, ['changeScript'], 'must specify change script configuration value when change mode is script');
          if (t.wait?.minMs !== undefined && t.wait.maxMs !== undefined && t.wait.minMs > t.wait.maxMs) custom(ctx, ['wait'], 'wait min must be less than or equal to max');
        }),
      )
      .optional(),
  },
  'A task',
).superRefine((t, ctx) => {
  if (!t || typeof t !== 'object') return;
  const p = taskNameProblem(t.name);
  if (p) custom(ctx, ['name'], p);
  if (typeof t.driver === 'string' && UNSUPPORTED_DRIVERS.includes(t.driver)) return; // refused by name before the schema runs
  if (typeof t.driver === 'string' && DRIVER_CONFIG_SCHEMAS[t.driver] && t.config && typeof t.config === 'object' && !Array.isArray(t.config)) {
    for (const line of driverConfigIssues(t.driver, t.config)) {
      const i = line.indexOf(': ');
      ctx.addIssue({
        code: 'custom',
        message: line.slice(i + 2),
        path: [
          'config',
          ...line
            .slice(0, i)
            // renderPath's parts: `.key`, `[index]`, `["any other key"]` (JSON-quoted).
            .split(/\.|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/)
            .filter(Boolean)
            .map((s) => (/^\d+$/.test(s) ? Number(s) : s.startsWith('"') ? (JSON.parse(s) as string) : s)),
        ],
      });
    }
  }
}, always);

const disconnectSchema = strict(
  {
    lostAfterMs: ms('Time the servers wait before marking the alloc lost').optional(),
    stopOnClientAfterMs: ms('Time after which the client stops the alloc itself').optional(),
    replace: z.boolean().optional(),
    reconcile: oneOf(['best_score', 'keep_original', 'keep_replacement', 'longest_running']).optional(),
  },
  'Group disconnect block',
);

/** One task group. */
export const taskGroupSchema = strict(
  {
    name: z.string().min(1),
    count: nonNegInt()
      .max(MAX_GROUP_COUNT, { error: `must be at most ${MAX_GROUP_COUNT} (berth's bound on one group's allocs on its one node)` })
      .optional(),
    tasks: z.array(taskSchema).min(1),
    ephemeralDisk: strict(
      { sticky: z.boolean().default(false), migrate: z.boolean().default(false), sizeMB: sizeMB('Ephemeral disk size').optional() },
      'Ephemeral disk',
    ).optional(),
    restartPolicy: restartPolicySchema.optional(),
    meta: envMap('Group meta (NOMAD_META_*)', 'NOMAD_META_').optional(),
    shutdownDelayMs: ms('Group shutdown delay').optional(),
    maxRunDurationMs: ms('Batch run time limit').optional(),
    disconnect: disconnectSchema.optional(),
    maxClientDisconnectMs: ms("Nomad's deprecated max_client_disconnect").optional(),
    reschedulePolicy: reschedulePolicySchema.optional(),
    migrate: migrateSchema.optional(),
    update: updateSchema.optional(),
    networks: z.array(networkSchema).optional(),
    services: z.array(serviceSchema).optional(),
    constraints: z.array(constraintSchema).optional(),
    affinities: z.array(affinitySchema).optional(),
    spreads: z.array(spreadSchema).optional(),
  },
  'A task group',
).superRefine((g, ctx) => {
  if (!g || typeof g !== 'object') return;
  const np = typeof g.name === 'string' && g.name !== '' ? jobIdProblem(g.name, 'name') : undefined;
  if (np) custom(ctx, ['name'], np);
  if (Array.isArray(g.tasks)) {
    const seen = new Set<string>();
    g.tasks.forEach((t, i) => {
      if (t && typeof t === 'object' && typeof t.name === 'string') {
        if (seen.has(t.name)) custom(ctx, ['tasks', i, 'name'], `duplicate task name ${JSON.stringify(t.name)}`);
        seen.add(t.name);
      }
    });
    if (g.tasks.filter((t) => t && typeof t === 'object' && t.leader === true).length > 1) custom(ctx, ['tasks'], 'only one task may be the leader');
  }
  const size = g.ephemeralDisk?.sizeMB;
  if (typeof size === 'number' && size < 10) custom(ctx, ['ephemeralDisk', 'sizeMB'], `minimum DiskMB value is 10; got ${size}`);
  if (g.maxRunDurationMs === 0) custom(ctx, ['maxRunDurationMs'], 'MaxRunDuration must be greater than zero');
  if (g.disconnect?.lostAfterMs !== undefined && g.maxClientDisconnectMs !== undefined)
    custom(ctx, ['disconnect', 'lostAfterMs'], 'using both lost_after and max_client_disconnect is not allowed');
}, always);

/** A job. */
export const jobSchema = strict(
  {
    $schema: z.string().optional().describe('The JSON Schema this file follows (for editors; ignored)'),
    id: z.string({ error: requiredString }).min(1),
    name: z.string().optional(),
    namespace: z.string().optional(),
    type: oneOf(['service', 'batch', 'system', 'sysbatch']).default('service'),
    priority: nonNegInt().optional().describe('1..100, default 50'),
    taskGroups: z.array(taskGroupSchema).min(1),
    region: z.string().optional(),
    datacenters: stringList().optional(),
    meta: envMap('Job meta (NOMAD_META_*)', 'NOMAD_META_').optional(),
    version: nonNegInt().optional(),
    parentId: z.string().optional(),
    stop: z.boolean().optional(),
    update: updateSchema.optional(),
    submitTime: epochMs('When this version was submitted').optional(),
    constraints: z.array(constraintSchema).optional(),
    affinities: z.array(affinitySchema).optional(),
    spreads: z.array(spreadSchema).optional(),
    parameterized: strict(
      {
        payload: oneOf(['optional', 'required', 'forbidden']).optional(),
        metaRequired: stringList().optional(),
        metaOptional: stringList().optional(),
      },
      'The job runs only when dispatched',
    ).optional(),
    payload: z.base64({ error: 'must be base64' }).optional().describe("A dispatched job's payload, base64"),
    periodic: strict(
      {
        enabled: z.boolean().optional(),
        spec: z.string().optional(),
        specs: stringList().optional(),
        specType: oneOf(['cron']).optional(),
        prohibitOverlap: z.boolean().optional(),
        timeZone: z.string().optional(),
      },
      'The job is launched on a cron schedule',
    ).optional(),
    dispatched: z.boolean().optional(),
  },
  'A Nomad job in berth camelCase',
).superRefine((j, ctx) => {
  if (!j || typeof j !== 'object') return;
  // A dispatched or periodic child is named `<parent>/<suffix>`, as Nomad names it: the parent's id
  // and the suffix are each checked, the one "/" between them is the child's.
  const childSuffix = typeof j.id === 'string' && typeof j.parentId === 'string' && j.id.startsWith(`${j.parentId}/`) ? j.id.slice(j.parentId.length + 1) : undefined;
  const ip =
    typeof j.id === 'string' && j.id !== ''
      ? childSuffix !== undefined
        ? (jobIdProblem(j.parentId, 'id') ?? jobIdProblem(childSuffix, 'id'))
        : jobIdProblem(j.id, 'id')
      : undefined;
  if (ip) custom(ctx, ['id'], ip);
  const np = typeof j.name === 'string' ? jobIdProblem(j.name, 'name') : undefined;
  if (np) custom(ctx, ['name'], np);
  if (typeof j.priority === 'number' && (j.priority < 1 || j.priority > 100))
    custom(ctx, ['priority'], `job priority must be between [1, 100]; got ${j.priority}`);
  if (!Array.isArray(j.taskGroups)) return;
  const seen = new Set<string>();
  j.taskGroups.forEach((g, gi) => {
    if (!g || typeof g !== 'object') return;
    if (seen.has(g.name)) custom(ctx, ['taskGroups', gi, 'name'], `duplicate group name ${JSON.stringify(g.name)}`);
    seen.add(g.name);
    // Every task's environment: its env plus all meta as NOMAD_META_<key> (in both spellings).
    const metaBytes = [j.meta, g.meta].reduce(
      (n, m) => n + Object.entries(m ?? {}).reduce((s, [k, v]) => s + 2 * envEntryBytes(`NOMAD_META_${k}`, String(v)), 0),
      0,
    );
    if (Array.isArray(g.tasks))
      g.tasks.forEach((t, ti) => {
        const bytes =
          metaBytes +
          Object.entries(t?.env ?? {}).reduce((s, [k, v]) => s + envEntryBytes(k, String(v)), 0) +
          Object.entries(t?.meta ?? {}).reduce((s, [k, v]) => s + 2 * envEntryBytes(`NOMAD_META_${k}`, String(v)), 0);
        if (bytes > ARG_MAX)
          custom(
            ctx,
            ['taskGroups', gi, 'tasks', ti, 'env'],
            `with job, group and task meta the environment is ${bytes} bytes, past the kernel's ${ARG_MAX}-byte limit (ARG_MAX)`,
          );
      });
  });
}, always);

const taskEventSchema = z.looseObject({
  type: z.string(),
  time: nonNegNum().optional(),
  message: z.string().optional(),
  displayMessage: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

const taskStateSchema = strict(
  {
    state: oneOf(['pending', 'running', 'dead']).default('pending'),
    failed: z.boolean().optional(),
    restarts: nonNegInt().default(0),
    lastRestart: epochMs('Last restart').optional(),
    startedAt: epochMs('Start').optional(),
    finishedAt: epochMs('Finish').optional(),
    exitCode: z.int().optional().describe("The last run's exit code"),
    signal: z.int().optional().describe('The signal that ended the last run'),
    oomKilled: z.boolean().optional().describe('The last run was killed for memory'),
    events: z.array(z.unknown()).default([]),
  },
  "The client's view of one task",
).superRefine((s, ctx) => {
  if (!s || typeof s !== 'object') return;
  if (Array.isArray(s.events))
    s.events.forEach((e, i) => {
      if (!taskEventSchema.safeParse(e).success) custom(ctx, ['events', i], 'must be an event with a type');
    });
}, always);

const allocatedPortSchema = strict(
  { label: z.string(), value: nonNegInt().max(65535), to: z.int().min(-1).max(65535), hostIp: z.string() },
  'A port the scheduler chose',
);

/** What the scheduler gave an allocation. */
export const allocatedResourcesSchema = strict(
  {
    tasks: z.record(
      z.string(),
      strict(
        { cpu: nonNegInt(), memoryMB: sizeMB('Memory'), memoryMaxMB: memoryMaxMB('Memory limit').optional(), cores: z.array(nonNegInt()).optional() },
        'One task',
      ),
    ),
    shared: strict({ diskMB: sizeMB('Ephemeral disk'), ports: z.array(allocatedPortSchema) }, 'Shared by the group'),
  },
  'What the scheduler gave the alloc',
);

/** berth's allocation JSON. */
export const allocationSchema = strict(
  {
    $schema: z.string().optional().describe('The JSON Schema this file follows (for editors; ignored)'),
    id: uuid('36-character UUID; a new one when left out').optional(),
    namespace: z.string().optional(),
    nodeId: z.string().optional().describe("The node; the client's own when left out"),
    jobId: z.string().optional().describe('Defaults to job.id'),
    job: jobSchema,
    taskGroup: z.string({ error: requiredString }).min(1),
    desiredStatus: oneOf(['run', 'stop', 'evict']).default('run'),
    clientStatus: oneOf(['pending', 'running', 'complete', 'failed', 'lost', 'unknown']).default('pending'),
    clientDescription: z.string().optional(),
    previousAllocation: z.string().optional(),
    migrateToken: z.string().optional().describe("Presented to the previous alloc's node for its data"),
    preemptedAllocations: z.array(z.unknown(), { error: 'must be an array of allocation ids' }).optional(),
    allocModifyIndex: nonNegInt().default(0),
    createTime: epochMs('Creation').optional(),
    taskStates: z.record(z.string(), taskStateSchema).optional(),
    name: z.string().optional().describe('<job>.<group>[<index>]'),
    desiredTransition: strict(
      { migrate: z.boolean().optional(), reschedule: z.boolean().optional(), forceReschedule: z.boolean().optional(), noShutdownDelay: z.boolean().optional() },
      "Nomad's DesiredTransition",
    ).optional(),
    evalId: z.string().optional(),
    jobVersion: nonNegInt().optional(),
    desiredDescription: z.string().optional(),
    deploymentId: z.string().optional(),
    deploymentStatus: strict(
      { healthy: z.boolean().optional(), timestamp: epochMs('Health decided').optional(), canary: z.boolean().optional() },
      'Deployment health',
    ).optional(),
    rescheduleTracker: strict(
      {
        events: z.array(
          strict({ rescheduleTime: epochMs('Reschedule'), prevAllocId: z.string(), prevNodeId: z.string(), delayMs: ms('Delay applied') }, 'One reschedule'),
        ),
      },
      'Earlier reschedules',
    ).optional(),
    followupEvalId: z.string().optional(),
    allocatedResources: allocatedResourcesSchema.optional(),
    modifyTime: epochMs('Last server-side change').optional(),
  },
  "berth's allocation JSON (camelCase, durations in ms)",
).superRefine((a, ctx) => {
  if (!a || typeof a !== 'object') return;
  const j = a.job;
  if (j && typeof j.id === 'string' && j.id && a.jobId && a.jobId !== j.id) custom(ctx, ['jobId'], `must match job.id ${JSON.stringify(j.id)}`);
  if (j && Array.isArray(j.taskGroups) && typeof a.taskGroup === 'string' && a.taskGroup && !j.taskGroups.some((g) => g?.name === a.taskGroup))
    custom(ctx, ['taskGroup'], `failed to lookup task group ${JSON.stringify(a.taskGroup)}`);
  if (a.previousAllocation) {
    if (!isUUID(a.previousAllocation)) custom(ctx, ['previousAllocation'], 'must be a 36-character UUID');
    else if (a.previousAllocation === a.id) custom(ctx, ['previousAllocation'], 'must not be the allocation itself');
  }
  if (Array.isArray(a.preemptedAllocations))
    a.preemptedAllocations.forEach((p, i) => {
      if (!isUUID(p)) custom(ctx, ['preemptedAllocations', i], 'must be a 36-character UUID');
      else if (p === a.id) custom(ctx, ['preemptedAllocations', i], 'must not be the allocation itself');
    });
}, always);

/** The allocation schema's input (what a file may hold). */
export type AllocationInput = z.input<typeof allocationSchema>;
