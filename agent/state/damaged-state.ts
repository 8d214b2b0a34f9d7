/**
 * The agent's word for a client state store it cannot use. The library's own error advises a
 * `createClient` option; an agent user sets flags, so the agent says which flag and what it does.
 * @module
 */
import { BerthError, errorText, StateStoreError } from '../../index.ts';

/** What `-repair-state` does, said once for the refusal and the help text alike. */
export const REPAIR_STATE_EFFECT =
  'the damaged file (and its -wal and -shm) is moved aside, a fresh store is made, live tasks whose executor still answers are reattached, and the others are stopped and reported';

/** The client's state store is damaged or unreadable and `-repair-state` was not given. */
export class DamagedClientStateError extends BerthError {
  /** The store file at fault, when the library named it. */
  readonly file: string | undefined;
  constructor(err: StateStoreError) {
    const what = err.file ?? 'the client state store';
    const why = err.cause !== undefined ? errorText(err.cause) : err.message;
    super(`${what} is damaged or unreadable (${why}); start the agent with -repair-state: ${REPAIR_STATE_EFFECT}`, { cause: err });
    this.file = err.file;
  }
}

/** `err` as the agent reports it: a {@link DamagedClientStateError} for a store error, else itself. */
export function agentStateError(err: unknown): unknown {
  return err instanceof StateStoreError ? new DamagedClientStateError(err) : err;
}
