/**
 * berth's named errors. Every error berth throws on purpose extends {@link BerthError}.
 * @module
 */

/** Base class of every error berth throws on purpose. */
export class BerthError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An allocation failed validation; `issues` holds one `path: problem` line per bad field. */
export class InvalidAllocationError extends BerthError {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid allocation: ${issues.join('; ')}`);
    this.issues = issues;
  }
}

/** A task name that cannot be a directory name. */
export class InvalidTaskNameError extends BerthError {
  constructor(
    readonly taskName: string,
    reason: string,
  ) {
    super(`invalid task name ${JSON.stringify(taskName)}: ${reason}`);
  }
}

/** `send` after `close` on an {@link AllocBroadcaster}. */
export class AllocBroadcasterClosedError extends BerthError {
  constructor() {
    super('alloc broadcaster closed');
  }
}

/** The servers do not know the allocation (final for a remote watcher: stop waiting). */
export class UnknownAllocationError extends BerthError {}

/** The servers refused the request (final for a remote watcher: stop waiting). */
export class PermissionDeniedError extends BerthError {}

/** `AllocDir.move` on a directory that was never built. */
export class AllocDirNotBuiltError extends BerthError {
  constructor(dir: string) {
    super(`unable to move to ${JSON.stringify(dir)} - alloc dir is not built`);
  }
}

/** A snapshot entry or symlink would land outside the destination alloc dir. */
export class SnapshotEscapeError extends BerthError {}

/**
 * A snapshot server asked to listen beyond loopback with nothing to authenticate its peers (no
 * token, no TLS client certificates) and without `trustedNetwork`.
 */
export class SnapshotServerBindError extends BerthError {}

/**
 * A snapshot (or a migration's response) went past a bound: total bytes (the group's ephemeral
 * disk size), entry count, name or link length, or header size. `limit` names the bound.
 */
export class SnapshotLimitError extends BerthError {
  constructor(
    message: string,
    readonly limit: 'bytes' | 'entries' | 'name' | 'header',
  ) {
    super(message);
  }
}

/** The remote side of a migration failed to snapshot; `remoteMessage` is its error text. */
export class SnapshotRemoteError extends BerthError {
  constructor(
    message: string,
    readonly remoteMessage: string,
  ) {
    super(message);
  }
}

/** Several independent steps failed; `errors` holds each failure. */
export class MultiError extends BerthError {
  readonly errors: Error[];
  constructor(summary: string, errors: Error[]) {
    super(`${summary}: ${errors.length} error${errors.length === 1 ? '' : 's'} occurred:\n${errors.map((e) => `\t* ${e.message}`).join('\n')}`);
    this.errors = errors;
  }
}

/**
 * `Driver.recover` of a handle saved before its start (`TaskHandle.starting`) found nothing of the
 * task: the start never got as far as a process. The task is started again, not failed.
 */
export class TaskNotStartedError extends BerthError {}

/** A task operation on a task that is not running ("Task not running"). */
export class TaskNotRunningError extends BerthError {
  constructor() {
    super('Task not running');
  }
}

/** A task operation naming a task the allocation does not have. */
export class TaskNotFoundError extends BerthError {
  constructor(taskName: string) {
    super(`Could not find task runner for task: ${taskName}`);
  }
}

/** A driver could not start a task. `recoverable` tells the restart tracker whether to retry. */
export class DriverStartError extends BerthError {
  constructor(
    message: string,
    readonly recoverable = false,
  ) {
    super(message);
  }
}

/** A driver's task config is invalid ("Failed Validation"). */
export class DriverConfigError extends BerthError {}

/** A duration string is not a Go duration. */
export class InvalidDurationError extends BerthError {}

/** A wait was given up on because its deadline passed. */
export class TimeoutError extends BerthError {}

/** An operation on an allocation runner that no longer exists or was destroyed. */
export class AllocNotFoundError extends BerthError {
  constructor(allocId: string) {
    super(`unknown allocation ${allocId}`);
  }
}

/**
 * `client.gcAlloc` on an allocation the garbage collector may not take: not terminal yet, or
 * still needed (a replacement waits on it, or its data is being copied). Worded as Nomad's
 * `/v1/client/allocation/:id/gc` refusal.
 */
export class AllocNotEligibleForGcError extends BerthError {
  constructor(
    readonly allocId: string,
    readonly why: 'not-terminal' | 'in-use',
  ) {
    super(
      `No such allocation on client, or allocation not eligible for GC: allocation ${allocId} ${
        why === 'not-terminal' ? 'is not terminal' : 'is still waited on by a replacement or its data is being copied'
      }`,
    );
  }
}

/** A client option has a value berth cannot use. */
export class InvalidClientOptionError extends BerthError {
  constructor(
    readonly option: string,
    problem: string,
  ) {
    super(`createClient: options.${option} ${problem}`);
  }
}

/** The client was shut down; the call cannot proceed. */
export class ClientShutdownError extends BerthError {
  constructor() {
    super('client is shut down');
  }
}

/** `addAlloc` for an allocation id the client already runs. */
export class AllocExistsError extends BerthError {
  constructor(allocId: string) {
    super(`allocation ${allocId} is already running on this client; use updateAlloc`);
  }
}

/** A restart asked of an allocation that should not run (stopping or destroyed). */
export class AllocNotRunningError extends BerthError {
  constructor() {
    super('restart of an alloc that should not run');
  }
}

/** A restored allocation's directory is gone or cannot be reached (Nomad's message). */
export class AllocDirInaccessibleError extends BerthError {}

/**
 * A chart invoked or spawned an actor its runtime never provided (the chart's `setup()` only
 * names it; see `machines/missing-actor.ts`).
 */
export class MissingActorError extends BerthError {
  constructor(
    readonly machine: string,
    readonly actor: string,
  ) {
    super(`${machine} chart: actor "${actor}" was not provided; pass it with .provide({ actors: { ${actor} } })`);
  }
}

/**
 * A job file (HCL2 or JSON) could not be turned into a job: a syntax error, an unknown key, a bad
 * value or a stanza berth does not run. `file`, `line`, `column` locate it when the parser says
 * where; `path` is the field path (`job.taskGroups[0].tasks[1].config`) when known.
 */
export class JobspecError extends BerthError {
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly path?: string;
  /** Every problem found, one `path: problem` line each (the message joins them). */
  readonly issues: string[];
  /** The stanzas among them that berth refuses to run. */
  readonly unsupported: UnsupportedStanza[];
  constructor(
    message: string,
    where: { file?: string; line?: number; column?: number; path?: string; issues?: string[]; unsupported?: UnsupportedStanza[] } = {},
  ) {
    const loc = where.file ? `${where.file}${where.line ? `:${where.line}${where.column ? `:${where.column}` : ''}` : ''}: ` : '';
    super(`${loc}${message}`);
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
    this.path = where.path;
    this.issues = where.issues ?? [message];
    this.unsupported = where.unsupported ?? [];
  }
}

/** One stanza berth refuses, and where it was found. */
export interface UnsupportedStanza {
  /** What is refused: `template`, `vault`, `driver "docker"`, ... */
  stanza: string;
  /** The field path (`job.taskGroups[0].tasks[1].templates`). */
  path: string;
}

/**
 * Stanzas or drivers berth does not run (template, vault, csi volumes, docker, ...), refused
 * rather than silently dropped; each issue reads "<stanza> is not supported by berth (<path>)".
 * A host may turn these into warnings (`parseAllocation(json, { unsupported: 'warn' })`).
 */
export class UnsupportedStanzaError extends InvalidAllocationError {
  /** `otherIssues`: the input's other problems, reported in the same error. */
  constructor(
    readonly unsupported: UnsupportedStanza[],
    otherIssues: string[] = [],
  ) {
    super([...unsupported.map(unsupportedText), ...otherIssues]);
  }
}

/** "<stanza> is not supported by berth (<path>)". */
export function unsupportedText(u: UnsupportedStanza): string {
  return `${u.stanza} is not supported by berth (${u.path})`;
}

/** A variable read the reader may not make (Nomad's 403 "Permission denied"). */
export class VariableAccessError extends BerthError {
  constructor(readonly path: string) {
    super(`Permission denied: variable ${JSON.stringify(path)}`);
  }
}
