/**
 * The request bodies of the agent's write routes, each a zod schema with the fields of Nomad's
 * `api` request struct (plus the `WriteRequest` fields a client may send along), unknown keys
 * refused; and {@link decodeBody}, which reads a body through one of them and answers 400 naming
 * the field. The job inside a register or plan body is checked by berth's job schema after.
 * @module
 */
import { z } from 'zod';
import { ApiError } from './errors.ts';
import type { Req } from './router.ts';

const bool = () => z.boolean({ error: 'must be true or false' });
const str = () => z.string({ error: 'must be a string' });
const uint = () => z.int({ error: 'must be a whole number' }).min(0, { error: 'must not be negative' });
const obj = () => z.record(z.string(), z.unknown(), { error: 'must be an object' });

/** A job as a write body carries it: any fields (berth's job schema checks them after), but a list of groups. */
const jobObj = () =>
  z.looseObject({ TaskGroups: z.array(obj(), { error: 'must be a list of task groups' }).nullable().optional() }, { error: 'must be an object' });

/** Nomad's `WriteRequest`, which the Go client embeds in every write body. */
const writeRequest = { Region: str().optional(), Namespace: str().optional(), SecretID: str().optional(), IdempotencyToken: str().optional() };

/** `POST /v1/jobs`, `POST /v1/job/:id` (Nomad's `JobRegisterRequest`). */
export const registerBody = z.strictObject({
  Job: jobObj(),
  Submission: obj().nullable().optional(),
  EnforceIndex: bool().optional(),
  JobModifyIndex: uint().optional(),
  PolicyOverride: bool().optional(),
  PreserveCounts: bool().optional(),
  PreserveResources: bool().optional(),
  EvalPriority: uint().max(100, { error: 'must be between 1 and 100' }).optional(),
  ...writeRequest,
});

/** `POST /v1/job/:id/plan` (Nomad's `JobPlanRequest`). */
export const planBody = z.strictObject({
  Job: jobObj(),
  Diff: bool().optional(),
  /** berth's: false lists only what changed (Nomad's plan always lists unchanged fields of changed blocks). */
  Contextual: bool().optional(),
  PolicyOverride: bool().optional(),
  ...writeRequest,
});

/** `PUT /v1/validate/job` (Nomad's `JobValidateRequest`). */
export const validateBody = z.strictObject({ Job: jobObj(), ...writeRequest });

/** `POST /v1/jobs/parse` (Nomad's `JobsParseRequest`). */
export const parseBody = z.strictObject({ JobHCL: str(), Variables: str().optional(), Canonicalize: bool().optional(), HCLv1: bool().optional() });

/** `POST /v1/job/:id/scale` (Nomad's `ScalingRequest`). */
/** `POST /v1/job/:id/dispatch` (Nomad's `JobDispatchRequest`; the payload base64, as Go sends []byte). */
export const dispatchBody = z.strictObject({
  JobID: str().optional(),
  Payload: z.base64({ error: 'must be base64' }).nullable().optional(),
  Meta: z.record(z.string(), str(), { error: 'must be an object of strings' }).nullable().optional(),
  ...writeRequest,
});

export const scaleBody = z.strictObject({
  Count: uint(),
  Target: z.record(z.string(), str(), { error: 'must be an object of strings' }),
  Message: str().optional(),
  Error: bool().optional(),
  Meta: obj().nullable().optional(),
  PolicyOverride: bool().optional(),
  JobModifyIndex: uint().optional(),
  ...writeRequest,
});

/** `PUT /v1/operator/scheduler/configuration` (Nomad's `SchedulerConfiguration`, as its GET answers it). */
export const schedulerConfigBody = z.strictObject({
  SchedulerAlgorithm: z.enum(['binpack', 'spread'], { error: 'must be "binpack" or "spread"' }).optional(),
  PreemptionConfig: z
    .strictObject({
      SystemSchedulerEnabled: bool().optional(),
      SysBatchSchedulerEnabled: bool().optional(),
      BatchSchedulerEnabled: bool().optional(),
      ServiceSchedulerEnabled: bool().optional(),
    })
    .optional(),
  MemoryOversubscriptionEnabled: bool().optional(),
  RejectJobRegistration: bool().optional(),
  PauseEvalBroker: bool().optional(),
  NodeLimitForFeasibilityChecks: uint().optional(),
  CreateIndex: uint().optional(),
  ModifyIndex: uint().optional(),
});

/**
 * `PUT /v1/var/*path` (Nomad's `api.Variable`): the items, and the metadata the CLI sends back as
 * it read it (ignored: the server sets it). The path is the URL's; a lock is refused.
 */
export const variableBody = z.strictObject({
  ...writeRequest,
  Namespace: str().optional(),
  Path: str().optional(),
  Items: z.record(z.string(), str(), { error: 'must be an object of strings' }).nullable().optional(),
  CreateIndex: uint().optional(),
  ModifyIndex: uint().optional(),
  CreateTime: z.number({ error: 'must be a number' }).optional(),
  ModifyTime: z.number({ error: 'must be a number' }).optional(),
  Lock: z.null({ error: 'variable locks are not supported by berth' }).optional(),
});

/** `POST /v1/client/allocation/:id/restart` (Nomad's `AllocRestartRequest`). */
export const restartBody = z.strictObject({ TaskName: str().optional(), AllTasks: bool().optional() });

/** `POST /v1/client/allocation/:id/signal` (Nomad's `AllocSignalRequest`). */
export const signalBody = z.strictObject({ Task: str().optional(), Signal: str().optional() });

/** An issue's path as the body spells it: `PreemptionConfig.BatchSchedulerEnabled`, `Target.Group`. */
const pathOf = (path: PropertyKey[]) => path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.');

/** One line per problem, each naming its field. */
function problems(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const keys = i.code === 'unrecognized_keys' ? i.keys : undefined;
      if (keys) return keys.map((k) => `${pathOf([...i.path, k])}: unknown field`).join('; ');
      const field = pathOf(i.path);
      const message = i.code === 'invalid_type' && i.input === undefined ? 'is required' : i.message;
      return field ? `${field}: ${message}` : `request body ${message === 'is required' ? 'is required' : message}`;
    })
    .join('; ');
}

/**
 * The request body decoded through `schema`; an empty body reads as `{}` when `emptyIs` allows
 * it (Nomad's restart and signal bodies are optional).
 * @throws ApiError 400 naming each bad field ("Count: must be a whole number", "Extra: unknown field").
 */
export async function decodeBody<T extends z.ZodType>(req: Req, schema: T, opts: { emptyIs?: unknown; given?: unknown } = {}): Promise<z.infer<T>> {
  const raw = 'given' in opts ? opts.given : await req.json();
  const body = raw === undefined || raw === null ? opts.emptyIs : raw;
  if (body === undefined) throw new ApiError(400, 'request body must be a JSON object');
  return parsed(schema, body);
}

/** `body` (already read) through `schema`, or ApiError 400 naming each bad field. */
export function parsed<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  // reportInput: without it zod 4 leaves `input` off every issue, and a wrong type would read as missing.
  const out = schema.safeParse(body, { reportInput: true });
  if (!out.success) throw new ApiError(400, problems(out.error));
  return out.data;
}
