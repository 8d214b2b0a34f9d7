/**
 * `GET /v1/client/allocation/:id/snapshot` on the agent's own address: what a replacement on
 * another node pulls a previous alloc's sticky data from (the address `/v1/node/:id` gives). The
 * agent serves it through its client's snapshot server (started on first use on loopback, with a
 * token of its own) and checks the caller first: with ACLs on, the caller presents the alloc's
 * migrate token, Nomad's HMAC of the alloc id under the node's secret, or the management token.
 * @module
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { AgentCore } from '../core.ts';
import { ApiError, UNKNOWN_ALLOCATION } from './errors.ts';
import { secretMatches } from '../../index.ts';
import type { AuthRule, Router } from './router.ts';

/** Nomad's migrate token for `allocId` on a node whose secret id is `nodeSecretId` (HMAC-SHA512, base64). */
export function migrateTokenFor(nodeSecretId: string, allocId: string): string {
  return createHmac('sha512', nodeSecretId).update(allocId).digest('base64');
}

/** Adds the snapshot route, guarded by its own rule (the alloc's migrate token works too). */
export function snapshotRoute(r: Router, core: AgentCore): void {
  const inner = randomUUID();
  let server: Promise<{ url: string }> | undefined;
  // With ACLs on: the management token, or this alloc's own migrate token.
  const migrateToken: AuthRule = {
    kind: 'management',
    alsoAccepts: (token, params) => !!core.state.node && secretMatches(token, migrateTokenFor(core.state.node.secretId, params.id!)),
  };
  r.on('GET', '/v1/client/allocation/:id/snapshot', migrateToken, async (req) => {
    const allocId = req.params.id!;
    if (!core.client.runner(allocId)) throw new ApiError(404, UNKNOWN_ALLOCATION);
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
