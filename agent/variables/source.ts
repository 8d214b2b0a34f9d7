/**
 * The {@link VariableSource} the agent hands its client: a task's templates read the store through
 * it, with Nomad's implicit workload access ({@link workloadMayRead}: its job's, group's and own
 * variables under `nomad/jobs`) and Nomad's blocking-query semantics. A read with `minIndex`
 * parks in the state's one waiter set (no timer of its own) until what it reads moves past
 * `minIndex`: for `get` the variable's modify index (or, none there, the variables' index), for
 * `list` the variables' index. An aborted `signal` rejects the read at once with its reason and
 * leaves nothing waiting.
 * @module
 */
import { VariableAccessError, workloadMayRead, type VariableReadOptions, type VariableSource, type WorkloadIdentity } from '../../index.ts';
import { VariableSourceClosedError } from './errors.ts';
import type { VariableStore } from './variables.ts';

/**
 * Waits until `indexOf()` is above `minIndex` (at once without one), waking on each change to
 * the variables; rejects with the signal's reason when it aborts, or when the state closes.
 */
async function until(store: VariableStore, indexOf: () => number, opts: VariableReadOptions): Promise<number> {
  const { minIndex, signal } = opts;
  const waiters = store.state.waiters;
  for (;;) {
    signal?.throwIfAborted();
    const index = indexOf();
    if (minIndex === undefined || index > minIndex) return index;
    if (store.state.closed) throw new VariableSourceClosedError();
    // No deadline of its own: the reader's signal ends the wait; a change to any variable wakes it.
    await waiters.wait(['vars'], store.index(), Infinity, signal);
  }
}

/** Options of {@link storeVariableSource}. */
export interface StoreVariableSourceOptions {
  /**
   * Hold each task to Nomad's implicit workload rule (its job's, group's and own paths under
   * `nomad/jobs`). Nomad checks it only with ACLs on: with ACLs off every read is allowed
   * (`ACL.AllowVariableOperation`). Default true.
   */
  workloadRule?: boolean;
}

/** The store as a client's {@link VariableSource}. */
export function storeVariableSource(store: VariableStore, opts: StoreVariableSourceOptions = {}): VariableSource {
  const mayRead = opts.workloadRule === false ? () => true : workloadMayRead;
  return {
    async get(path: string, who: WorkloadIdentity, opts: VariableReadOptions = {}) {
      if (!mayRead(path, who)) throw new VariableAccessError(path);
      const index = await until(store, () => store.record(who.namespace, path)?.modifyIndex ?? store.index(), opts);
      return { index, variable: store.read(who.namespace, path) };
    },
    async list(prefix: string, who: WorkloadIdentity, opts: VariableReadOptions = {}) {
      const index = await until(store, () => store.index(), opts);
      return { index, variables: store.list(who.namespace, prefix).filter((v) => mayRead(v.path, who)) };
    },
  };
}
