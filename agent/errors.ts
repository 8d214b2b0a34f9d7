/**
 * The agent's domain errors: what an operation of {@link AgentCore} (or a route reading the
 * state) refuses, each a named class with the facts it refuses on. They know nothing of HTTP:
 * `agent/http/errors.ts` maps each to Nomad's status and text, in one table.
 * @module
 */
import { BerthError } from '../index.ts';

/** No job by this id. */
export class JobNotFoundError extends BerthError {
  constructor(readonly jobId: string) {
    super(`job ${JSON.stringify(jobId)} not found`);
  }
}

/** No server-side allocation by this id. */
export class AllocationNotFoundError extends BerthError {
  constructor(readonly allocId: string) {
    super(`allocation ${JSON.stringify(allocId)} not found`);
  }
}

/** No evaluation by this id. */
export class EvalNotFoundError extends BerthError {
  constructor(readonly evalId: string) {
    super(`evaluation ${JSON.stringify(evalId)} not found`);
  }
}

/** No deployment by this id. */
export class DeploymentNotFoundError extends BerthError {
  constructor(readonly deploymentId: string) {
    super(`deployment ${JSON.stringify(deploymentId)} not found`);
  }
}

/** No node by this id (or unique id prefix). */
export class NodeNotFoundError extends BerthError {
  constructor(readonly nodeId: string) {
    super(`node ${JSON.stringify(nodeId)} not found`);
  }
}

/** A job berth cannot take (its decode to berth's job failed); `reason` says why. */
export class InvalidJobError extends BerthError {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A periodic block Nomad's job validation refuses; `reason` is Nomad's text. */
export class InvalidPeriodicError extends BerthError {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * A register with `EnforceIndex` whose `JobModifyIndex` does not match the job: `exists` (0 given,
 * the job exists), `conflict` (the job is at `current`), `missing` (non-zero given, no job).
 */
export class EnforceIndexError extends BerthError {
  constructor(
    readonly jobId: string,
    readonly want: number,
    readonly kind: 'exists' | 'conflict' | 'missing',
    readonly current?: number,
  ) {
    super(`job ${JSON.stringify(jobId)}: enforce index ${want}: ${kind}${current !== undefined ? ` (at ${current})` : ''}`);
  }
}

/** An operation a stopped job does not take (`dispatch`, a forced periodic launch). */
export class JobStoppedError extends BerthError {
  constructor(
    readonly jobId: string,
    readonly operation: 'dispatch' | 'periodic-force',
  ) {
    super(`job ${JSON.stringify(jobId)} is stopped (${operation})`);
  }
}

/** A forced periodic launch of a job that is not a periodic parent. */
export class JobNotPeriodicError extends BerthError {
  constructor(readonly jobId: string) {
    super(`job ${JSON.stringify(jobId)} is not periodic`);
  }
}

/** A forced periodic launch in a second that already has one (the child's id is taken). */
export class PeriodicLaunchExistsError extends BerthError {
  constructor(readonly jobId: string) {
    super(`a launch of job ${jobId} in this second exists already`);
  }
}

/** A scale of a group the job does not have. */
export class ScaleGroupNotFoundError extends BerthError {
  constructor(
    readonly jobId: string,
    readonly group: string,
  ) {
    super(`job ${JSON.stringify(jobId)} has no group ${JSON.stringify(group)} to scale`);
  }
}

/** A deployment action its deployment's state refuses; `reason` is Nomad's text. */
export class DeploymentActionError extends BerthError {
  constructor(
    readonly deploymentId: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}
