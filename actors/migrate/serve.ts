/**
 * A client's snapshot endpoint: {@link createSnapshotServer} over the client's runners, so a
 * replacement allocation on another node can pull a previous alloc's data
 * (`GET /v1/client/allocation/<id>/snapshot`).
 *
 * Each snapshot in flight is registered in its runner's `copiesOut`: destroying that alloc waits
 * until the copy is done. An alloc whose destroy has begun answers 404.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { BerthError } from '../../model/errors.ts';
import type { AllocDirHandle } from '../allocdir/handle.ts';
import type { MigrateEnv, TlsFiles } from './env.ts';
import { createSnapshotServer, type SnapshotServer } from './snapshot-server.ts';
import { errorText } from '../../model/error-text.ts';
import { trackInFlight } from '../allocdir/in-flight.ts';

/** Options of `Client.serveSnapshots`. */
export interface ServeSnapshotsOptions {
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** When set, requests must carry it in `X-Nomad-Token` (the other clients' `migrateToken`). */
  token?: string;
  /**
   * Listen beyond loopback with neither `token` nor TLS: every peer that can reach the port may
   * read every allocation's data. Refused (`SnapshotServerBindError`) unless this says the
   * network is trusted.
   */
  trustedNetwork?: boolean;
  /**
   * Serve HTTPS, requiring client certificates signed by `caFile`. Default: the client's
   * `ClientOptions.tls` when it has one; `false` serves plain HTTP regardless.
   */
  tls?: TlsFiles | false;
}

/** Serves snapshots of the allocs in `rt.registry`; resolves once listening. */
export async function serveRuntimeSnapshots(rt: MigrateEnv, opts: ServeSnapshotsOptions = {}): Promise<SnapshotServer> {
  const files = opts.tls === false ? undefined : (opts.tls ?? rt.tls);
  let tls;
  if (files) {
    try {
      const [ca, cert, key] = await Promise.all([readFile(files.caFile), readFile(files.certFile), readFile(files.keyFile)]);
      tls = { ca, cert, key };
    } catch (err) {
      throw new BerthError(`cannot read TLS files: ${errorText(err)}`, { cause: err });
    }
  }
  return createSnapshotServer({
    ...(tls ? { tls } : {}),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    ...(opts.trustedNetwork ? { trustedNetwork: true } : {}),
    lookup: (allocId) => {
      const r = rt.registry.get(allocId);
      if (!r || r.destroySignal.aborted) return undefined;
      const dir = r.allocDir;
      // The server only calls snapshot(); route it through the runner's copiesOut.
      const tracked: Pick<AllocDirHandle, 'snapshot'> = {
        snapshot: (out) => trackInFlight(r.copiesOut, dir.snapshot(out)),
      };
      return tracked;
    },
    onError: (err, allocId) => rt.bus.publish('client.error', { allocId, error: `snapshot of allocation ${allocId} failed: ${errorText(err)}` }),
  });
}
