/**
 * A client's snapshot endpoint: {@link createSnapshotServer} over the client's runners, so a
 * replacement allocation on another node can pull a previous alloc's data
 * (`GET /v1/client/allocation/<id>/snapshot`).
 *
 * Each snapshot in flight is registered in its runner's `copiesOut`: destroying that alloc waits
 * until the copy is done. An alloc whose destroy has begun answers 404.
 * @module
 */
import type { AllocDirHandle } from '../allocdir/handle.ts';
import type { Runtime } from '../runner/runtime.ts';
import { createSnapshotServer, type SnapshotServer } from './snapshot-server.ts';

/** Options of {@link serveRuntimeSnapshots} (and of `Client.serveSnapshots`). */
export interface ServeSnapshotsOptions {
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** When set, requests must carry it in `X-Nomad-Token` (the other clients' `migrateToken`). */
  token?: string;
}

/** Serves snapshots of the allocs in `rt.registry`; resolves once listening. */
export function serveRuntimeSnapshots(rt: Runtime, opts: ServeSnapshotsOptions = {}): Promise<SnapshotServer> {
  return createSnapshotServer({
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    lookup: (allocId) => {
      const r = rt.registry.get(allocId);
      if (!r || r.destroySignal.aborted) return undefined;
      const dir = r.allocDir;
      // The server only calls snapshot(); route it through the runner's copiesOut.
      const tracked: Pick<AllocDirHandle, 'snapshot'> = {
        snapshot(out) {
          const copy = dir.snapshot(out);
          const settled = copy.then(
            () => undefined,
            () => undefined,
          );
          r.copiesOut.add(settled);
          void settled.then(() => r.copiesOut.delete(settled));
          return copy;
        },
      };
      return tracked;
    },
    onError: (err, allocId) =>
      rt.bus.publish('client.error', { allocId, error: `snapshot of allocation ${allocId} failed: ${err instanceof Error ? err.message : String(err)}` }),
  });
}
