/**
 * Dispatching a parameterized job, as Nomad's `Job.Dispatch`: the request checked against the
 * parent's `parameterized` block (payload required, optional or forbidden, at most 16 KiB; meta
 * keys required and permitted), then the child: a copy of the parent named
 * `<parent>/dispatch-<unix seconds>-<8 hex>`, with the payload, the merged meta, the parent's id and
 * the idempotency token, and no `parameterized` block of its own. No I/O: the caller registers it.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ApiJob } from '../state/types.ts';

/** Nomad's `DispatchPayloadSizeLimit`. */
export const DISPATCH_PAYLOAD_LIMIT = 16 * 1024;

/** A dispatch Nomad refuses, with its text. */
export class DispatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DispatchError';
  }
}

/** What a dispatch asks. */
export interface DispatchRequest {
  /** The payload, decoded. */
  payload?: Buffer;
  meta?: Record<string, string>;
  idempotencyToken?: string;
}

type ParamBlock = { Payload?: string; MetaRequired?: string[] | null; MetaOptional?: string[] | null };

/** The parent's `parameterized` block, or a DispatchError naming the job when it has none. */
export function parameterizedOf(parent: ApiJob): ParamBlock {
  const p = parent.ParameterizedJob as ParamBlock | null | undefined;
  if (!p || parent.Dispatched) throw new DispatchError(`Specified job "${parent.ID}" is not a parameterized job`);
  return p;
}

/** Checks the request against the parent's rules (Nomad's `validateDispatchRequest`). */
export function checkDispatch(parent: ApiJob, req: DispatchRequest): void {
  const p = parameterizedOf(parent);
  const size = req.payload?.length ?? 0;
  const rule = p.Payload || 'optional';
  if (rule === 'forbidden' && size > 0) throw new DispatchError('Payload provided but forbidden by parameterized job');
  if (rule === 'required' && size === 0) throw new DispatchError('Payload is not provided but required by parameterized job');
  if (size > DISPATCH_PAYLOAD_LIMIT) throw new DispatchError(`Payload exceeds maximum size; ${size} > ${DISPATCH_PAYLOAD_LIMIT}`);
  const given = Object.keys(req.meta ?? {});
  const required = p.MetaRequired ?? [];
  const allowed = new Set([...required, ...(p.MetaOptional ?? [])]);
  const unpermitted = given.filter((k) => !allowed.has(k)).sort();
  if (unpermitted.length) throw new DispatchError(`Dispatch provided unpermitted meta keys: [${unpermitted.join(' ')}]`);
  const missing = required.filter((k) => !given.includes(k)).sort();
  if (missing.length) throw new DispatchError(`Dispatch did not provide required meta keys: [${missing.join(' ')}]`);
}

/** The child job a dispatch registers (`nowMs` names it). */
export function dispatchedChild(parent: ApiJob, req: DispatchRequest, nowMs: number): ApiJob {
  const id = `${parent.ID}/dispatch-${Math.floor(nowMs / 1000)}-${randomUUID().slice(0, 8)}`;
  const child: ApiJob = {
    ...structuredClone(parent),
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Dispatched: true,
    Meta: { ...((parent.Meta as Record<string, string> | null) ?? {}), ...(req.meta ?? {}) },
    ...(req.payload?.length ? { Payload: req.payload.toString('base64') } : {}),
    ...(req.idempotencyToken ? { DispatchIdempotencyToken: req.idempotencyToken } : {}),
  };
  delete child.ParameterizedJob;
  for (const k of ['Version', 'Status', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stable', 'Stop'])
    delete (child as Record<string, unknown>)[k];
  return child;
}

/** A parameterized or periodic job itself (not one of its children): never placed, only launched. */
export function isParentJob(job: { parameterized?: unknown; periodic?: unknown; dispatched?: boolean; parentId?: string }): boolean {
  return (!!job.parameterized && !job.dispatched) || (!!job.periodic && !job.parentId);
}

/**
 * The live child of `parentId` that already carries idempotency token `token` (Nomad answers it
 * instead of dispatching again); a dead child's token is free again. `live` says whether a job
 * still runs (its status is not `dead`).
 */
export function sameDispatch<J extends { apiJob: ApiJob }>(jobs: Iterable<J>, parentId: string, token: string, live: (job: J) => boolean): J | undefined {
  for (const j of jobs) if (j.apiJob.ParentID === parentId && j.apiJob.DispatchIdempotencyToken === token && live(j)) return j;
  return undefined;
}
