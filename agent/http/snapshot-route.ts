/**
 * `GET /v1/client/allocation/:id/snapshot` on the agent's own address: what a replacement on
 * another node pulls a previous alloc's sticky data from (the address `/v1/node/:id` gives). The
 * agent serves it through its client's snapshot server (started on first use on loopback, with a
 * token of its own) and checks the caller first: with ACLs on, the caller presents the alloc's
 * migrate token, Nomad's HMAC of the alloc id under the node's secret, or the management token.
 * @module
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { request } from 'node:http';
import { ApiError, type AgentCore } from '../core.ts';
import type { Router } from './router.ts';

/** Nomad's migrate token for `allocId` on a node whose secret id is `nodeSecretId` (HMAC-SHA512, base64). */
export function migrateTokenFor(nodeSecretId: string, allocId: string): string {
  return createHmac('sha512', nodeSecretId).update(allocId).digest('base64');
}

/** Digests compared, so a guess's length does not change the time the check takes. */
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/** Adds the snapshot route; `managementToken` is set when ACLs are on. */
export function snapshotRoute(r: Router, core: AgentCore, managementToken: string | undefined): void {
  const inner = randomUUID();
  let server: Promise<{ url: string }> | undefined;
  r.on('GET', '/v1/client/allocation/:id/snapshot', async (req) => {
    const allocId = req.params.id!;
    if (managementToken) {
      const given = String(req.raw.headers['x-nomad-token'] ?? '');
      const want = migrateTokenFor(core.state.node!.secretId, allocId);
      if (!same(given, want) && !same(given, managementToken)) throw new ApiError(403, 'Permission denied');
    }
    if (!core.client.runner(allocId)) throw new ApiError(404, 'Unknown allocation');
    server ??= core.client.serveSnapshots({ host: '127.0.0.1', port: 0, token: inner, tls: false });
    const { url } = await server;
    const upstream = request(`${url}/v1/client/allocation/${encodeURIComponent(allocId)}/snapshot`, {
      headers: { 'X-Nomad-Token': inner },
      agent: false,
      signal: req.signal,
    });
    await new Promise<void>((resolve) => {
      upstream.on('response', (res) => {
        req.res.writeHead(res.statusCode ?? 502, res.headers);
        res.pipe(req.res); // pipe honours back-pressure both ways
        res.on('end', resolve);
        res.on('error', resolve);
      });
      upstream.on('error', (e) => {
        if (!req.res.headersSent) req.res.writeHead(502, { 'Content-Type': 'text/plain' }).end(e.message);
        else req.res.destroy();
        resolve();
      });
      upstream.end();
    });
  });
}
