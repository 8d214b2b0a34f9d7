/**
 * How the agent's errors are answered over HTTP, in one place (as fastify's `lib/errors.js`):
 * {@link ApiError} for a refusal the edge itself makes (a bad query, a body the schema refuses),
 * and {@link ERROR_TABLE}, one row per domain error class with Nomad's status and exact text.
 * {@link httpAnswer} is what the router and the upgrade path write.
 * @module
 */
import { BerthError } from '../../index.ts';
import * as E from '../errors.ts';
import { DispatchError } from '../jobs/dispatch.ts';

/** A request the HTTP edge refuses; `status` is the HTTP status Nomad answers with. */
export class ApiError extends BerthError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Nomad's text for a client-side alloc this node does not run (the client's file, log and GC routes). */
export const UNKNOWN_ALLOCATION = 'Unknown allocation';

/** One row of {@link ERROR_TABLE}: an error class, Nomad's status for it, and its text. */
export interface ErrorRow {
  readonly error: abstract new (...args: never[]) => Error;
  readonly status: number;
  readonly text: (e: Error) => string;
}

const row = <E extends Error>(error: abstract new (...args: never[]) => E, status: number, text: (e: E) => string): ErrorRow => ({
  error,
  status,
  text: (e) => (e instanceof error ? text(e) : e.message),
});

/** Nomad's words for a register whose `EnforceIndex` fails, by kind. */
function enforceIndexText(e: E.EnforceIndexError): string {
  const prefix = `Enforcing job modify index ${e.want}`;
  if (e.kind === 'exists') return `${prefix}: job already exists`;
  if (e.kind === 'conflict') return `${prefix}: job exists with conflicting job modify index: ${e.current}`;
  return `${prefix}: job does not exist`;
}

/** Each domain error as Nomad answers it: the status and the exact text its API writes. */
export const ERROR_TABLE: readonly ErrorRow[] = [
  row(E.JobNotFoundError, 404, () => 'job not found'),
  row(E.AllocationNotFoundError, 404, () => 'alloc not found'),
  row(E.EvalNotFoundError, 404, () => 'eval not found'),
  row(E.DeploymentNotFoundError, 404, () => 'deployment not found'),
  row(E.NodeNotFoundError, 404, () => 'node not found'),
  row(E.InvalidJobError, 400, (e) => e.reason),
  row(E.InvalidPeriodicError, 400, (e) => e.reason),
  row(E.EnforceIndexError, 400, enforceIndexText),
  row(E.JobStoppedError, 400, (e) => (e.operation === 'dispatch' ? `Specified job "${e.jobId}" is stopped` : 'Job is stopped')),
  row(E.JobNotPeriodicError, 400, () => 'Job is not periodic'),
  row(E.PeriodicLaunchExistsError, 409, (e) => e.message),
  row(E.ScaleGroupNotFoundError, 400, (e) => `Task group "${e.group}" specified for scaling does not exist in job`),
  row(E.DeploymentActionError, 400, (e) => e.reason),
  row(DispatchError, 400, (e) => e.message),
];

/**
 * The status and plain text an error is answered with: an {@link ApiError} as it says, a domain
 * error by its row of {@link ERROR_TABLE}, any other BerthError 400 and anything else 500, with its message.
 */
export function httpAnswer(err: unknown): { status: number; text: string } {
  if (err instanceof ApiError) return { status: err.status, text: err.message };
  for (const r of ERROR_TABLE) if (err instanceof r.error) return { status: r.status, text: r.text(err) };
  return { status: err instanceof BerthError ? 400 : 500, text: err instanceof Error ? err.message : String(err) };
}
