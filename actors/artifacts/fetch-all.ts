/**
 * Fetches a task's artifacts as Nomad's artifact hook does: at most {@link ARTIFACT_WORKERS} at a
 * time, started in the order given. Downloads and checksums run side by side; each artifact is
 * then unpacked and moved in one at a time, through the staging as before. Each one is told as
 * fetched the moment it is in place (the hook state that spares a restart fetching it again).
 * The first failure stops the others (in-flight fetches are aborted, waiting ones never start)
 * and is what the call rejects with; it returns or rejects only once every fetch it started has
 * settled, so no temp file or staging dir of theirs is left behind.
 * @module
 */
import type { Artifact } from '../../model/types.ts';
import { RwLock } from '../allocdir/lock.ts';
import { ArtifactFetchError } from './errors.ts';
import { fetchArtifact, type FetchArtifactContext } from './fetch.ts';

/** Nomad's `maxConcurrency` in the artifact hook: three downloads at once. */
export const ARTIFACT_WORKERS = 3;

/** Options of {@link fetchArtifacts}. */
export interface FetchArtifactsOptions {
  /** Called as each artifact is in place (before the others are done). */
  onFetched?: (a: Artifact) => void;
  /** How many at once (default {@link ARTIFACT_WORKERS}; below 1 is 1). */
  workers?: number;
}

/**
 * Fetches `artifacts` into `ctx`'s task dir, {@link ARTIFACT_WORKERS} at a time.
 * @throws ArtifactFetchError naming the first artifact that failed (its cause the fetch's error);
 *   a cancel through `ctx.signal` rejects the same way, naming a fetch it ended.
 */
export async function fetchArtifacts(artifacts: readonly Artifact[], ctx: FetchArtifactContext, opts: FetchArtifactsOptions = {}): Promise<void> {
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const placing = new RwLock();
  let next = 0;
  let failure: ArtifactFetchError | undefined;
  const worker = async () => {
    while (!failure && !signal.aborted && next < artifacts.length) {
      const a = artifacts[next++]!;
      try {
        await fetchArtifact(a, { ...ctx, signal, placing });
        opts.onFetched?.(a);
      } catch (e) {
        // The first error is the one told; the others are the abort it caused.
        if (failure) continue;
        failure = new ArtifactFetchError(a, e);
        stop.abort(failure);
      }
    }
  };
  const n = Math.min(artifacts.length, Math.max(1, Math.floor(opts.workers ?? ARTIFACT_WORKERS)));
  await Promise.all(Array.from({ length: n }, worker));
  if (failure) throw failure;
  // Cancelled between two fetches: nothing failed, but not everything was fetched.
  if (next < artifacts.length) throw new ArtifactFetchError(artifacts[next]!, signal.reason);
}
