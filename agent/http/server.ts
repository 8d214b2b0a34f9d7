/**
 * The agent's HTTP server: Nomad's API over `node:http` (or `node:https` with the `tls` block),
 * `X-Nomad-Token` checked when ACLs are on (403 "Permission denied", as Nomad), and `/ui`,
 * which sends the browser to berth's viewer with the same token.
 * @module
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError, type AgentCore } from '../core.ts';
import { eventRoutes } from './events.ts';
import { Router, sendError } from './router.ts';
import { allocRoutes } from './routes-allocs.ts';
import { deploymentActionRoutes } from './routes-deployment-actions.ts';
import { clientRoutes } from './routes-client.ts';
import { jobRoutes } from './routes-jobs.ts';
import { miscRoutes, type AgentSelf } from './routes-misc.ts';
import { snapshotRoute } from './snapshot-route.ts';
import { execUpgrade } from './exec-route.ts';

/** Paths anyone may read with ACLs on (Nomad answers these without a token too). */
const ANONYMOUS = new Set(['/v1/status/leader', '/v1/status/peers', '/v1/regions', '/v1/acl/bootstrap', '/v1/agent/health']);

const SNAPSHOT = /^\/v1\/client\/allocation\/[^/]+\/snapshot$/;

/** The running API server. */
export interface ApiServer {
  /** `http://host:port` or `https://...`. */
  url: string;
  /** `host:port`. */
  addr: string;
  close(): Promise<void>;
}

/** Options of {@link serveApi}. */
export interface ServeApiOptions {
  /** The management token (ACLs on) or undefined. */
  token?: string;
  /** Marks the ACL bootstrap done; false if it already was. */
  bootstrap: () => boolean;
  /** Where `/ui` sends the browser (berth's viewer). */
  viewerUrl?: () => Promise<string | undefined>;
  drivers: () => string[];
  /** How often an idle follow or event stream sends its empty heartbeat frame (Nomad: 10 s). */
  streamHeartbeatMs?: number;
}

/** Digests compared, so a guess's length does not change the time the check takes. */
const sameToken = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/** The token a request carries: `X-Nomad-Token`, or `Authorization: Bearer`. */
function requestToken(req: IncomingMessage): string {
  const h = req.headers['x-nomad-token'];
  if (typeof h === 'string') return h;
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7) : '';
}

/** Starts Nomad's HTTP API for `core` on the config's bind address and port. */
export async function serveApi(core: AgentCore, opts: ServeApiOptions): Promise<ApiServer> {
  const { config } = core;
  let addr = '';
  const router = new Router();
  const self: AgentSelf = { httpAddr: () => addr, managementToken: () => opts.token, bootstrap: opts.bootstrap };
  jobRoutes(router, core);
  allocRoutes(router, core, opts.drivers);
  deploymentActionRoutes(router, core);
  clientRoutes(router, core, opts.streamHeartbeatMs);
  miscRoutes(router, core, self);
  eventRoutes(router, core, opts.streamHeartbeatMs);
  snapshotRoute(router, core, opts.token);
  router.on('GET', '/ui', async (req) => {
    const url = await opts.viewerUrl?.();
    if (!url) throw new ApiError(404, 'the viewer is not available');
    const target = opts.token ? `${url}?token=${encodeURIComponent(opts.token)}` : url;
    req.res.writeHead(307, { Location: target, 'Content-Type': 'text/plain' });
    req.res.end(`berth's viewer is at ${url}\n`);
  });

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    // The snapshot route checks its own (per-alloc) token.
    if (opts.token && !ANONYMOUS.has(path) && !SNAPSHOT.test(path)) {
      const t = requestToken(req) || (path === '/ui' ? (new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '') : '');
      if (!sameToken(t, opts.token)) {
        req.resume();
        sendError(res, new ApiError(403, 'Permission denied'));
        return;
      }
    }
    void router.handle(req, res);
  };
  let server: Server;
  if (config.tls.http) {
    server = createHttps(
      {
        cert: readFileSync(config.tls.certFile!),
        key: readFileSync(config.tls.keyFile!),
        ...(config.tls.caFile ? { ca: readFileSync(config.tls.caFile) } : {}),
        requestCert: config.tls.verifyHttpsClient,
        rejectUnauthorized: config.tls.verifyHttpsClient,
      },
      handler,
    );
  } else server = createHttp(handler);
  const upgrade = execUpgrade(core);
  server.on('upgrade', (req: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => {
    if (opts.token && !sameToken(requestToken(req), opts.token)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n\r\nPermission denied');
      return;
    }
    upgrade(req, socket, head);
  });
  // Blocking queries wait up to 10 minutes; Node's default request timeout would cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.httpPort, config.bindAddr, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  addr = `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
  return {
    url: `${config.tls.http ? 'https' : 'http'}://${addr}`,
    addr,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
