/** P6's receiving side: pulls the snapshot over HTTP and restores it into a fresh alloc dir. */
import { get } from 'node:http';
import { AllocDir } from '../actors/allocdir/alloc-dir.ts';
import { restoreSnapshot } from '../actors/allocdir/snapshot.ts';
import { childDone, childPayload } from './lib/proc.ts';
import { now } from './lib/stats.ts';

const { clientAllocDir, allocId, prevAllocId, url, token } = childPayload<{
  clientAllocDir: string;
  allocId: string;
  prevAllocId: string;
  url: string;
  token: string;
}>();
const dest = new AllocDir(clientAllocDir, allocId);
await dest.build();
const t0 = now();
let bytes = 0;
await new Promise<void>((resolve, reject) => {
  const req = get(`${url}/v1/client/allocation/${prevAllocId}/snapshot`, { headers: { 'X-Nomad-Token': token } }, (res) => {
    if (res.statusCode !== 200) return reject(new Error(`snapshot: HTTP ${res.statusCode}`));
    // No 'data' listener of our own: it would start the flow before the restore attaches its own.
    restoreSnapshot(res, dest, { prevAllocId }).then(() => {
      bytes = res.socket?.bytesRead ?? 0;
      resolve();
    }, reject);
  });
  req.on('error', reject);
});
childDone({ ms: now() - t0, tarBytes: bytes });
