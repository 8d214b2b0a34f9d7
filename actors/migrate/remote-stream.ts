/**
 * Remote migration: fetch the previous alloc's snapshot from its node over HTTP and restore it.
 * (Placeholder until the remote stream lands; see issue 4.)
 * @module
 */
import { BerthError } from '../../model/errors.ts';
import type { Runtime, RunnerInternals } from '../runner/runtime.ts';

/** Streams the previous alloc's data from `nodeId` into `r`'s alloc dir; resolves with bytes read. */
export async function remoteMigrate(_rt: Runtime, _r: RunnerInternals, prevId: string, nodeId: string, _signal: AbortSignal): Promise<number> {
  throw new BerthError(`remote migration of ${prevId} from node ${nodeId} is not available yet`);
}
