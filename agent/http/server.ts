/**
 * The agent's HTTP server: Nomad's API over `node:http` (or `node:https` with the `tls` block).
 * Every request, plain or a WebSocket upgrade, passes the one edge decision (`admit`: Host,
 * Origin, Content-Type, the target parsed and matched once, the matched route's token rule; 403
 * "Permission denied" as Nomad when a token is missing). `/ui` sends the browser to berth's
 * viewer with a one-time code, never a token.
 * @module
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { isLoopbackAddress } from '../../index.ts';
import type { AgentCore } from '../core.ts';
import { ApiError, httpAnswer } from './errors.ts';
import { admit, type EdgeOptions } from './edge.ts';
import { eventRoutes } from './events.ts';
import { Router, sendError, type RouteInfo } from './router.ts';
import { allocRoutes } from './routes-allocs.ts';
import { deploymentActionRoutes } from './routes-deployment-actions.ts';
import { clientRoutes } from './routes-client.ts';
import { jobRoutes } from './routes-jobs.ts';
import { miscRoutes, type AgentSelf } from './routes-misc.ts';
import { snapshotRoute } from './snapshot-route.ts';
import { execUpgrade } from './exec-route.ts';
import { keyringRoutes } from './routes-keyring.ts';
import { variableRoutes } from './routes-variables.ts';
import type { VariableStore } from '../variables/variables.ts';

/** The running API server. */
export interface ApiServer {
  /** `http://host:port` or `https://...`. */
  url: string;
  /** `host:port`. */
  addr: string;
  /** The route table: every path and method served, with who may call it. */
  routes: RouteInfo[];
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
  /** With ACLs on: a fresh one-time code the viewer takes for a session (`/ui` adds it as `?code=`). */
  viewerCode?: () => string;
  /** How often an idle follow or event stream sends its empty heartbeat frame (Nomad: 10 s). */
  streamHeartbeatMs?: number;
  /** The variable store: given, `/v1/var*` and `/v1/operator/keyring/*` are served. */
  variables?: VariableStore;
}

/** A refusal written on a socket that is not yet HTTP (an upgrade the edge turned away). */
function refuseUpgrade(socket: Duplex, err: unknown): void {
  const { status, text } = httpAnswer(err);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Starts Nomad's HTTP API for `core` on the config's bind address and port. */
export async function serveApi(core: AgentCore, opts: ServeApiOptions): Promise<ApiServer> {
  const { config } = core;
  let addr = '';
  const router = new Router();
  const self: AgentSelf = { httpAddr: () => addr, managementToken: () => opts.token, bootstrap: opts.bootstrap };
  jobRoutes(router, core);
  allocRoutes(router, core);
  deploymentActionRoutes(router, core);
  clientRoutes(router, core, opts.streamHeartbeatMs);
  miscRoutes(router, core, self);
  eventRoutes(router, core, opts.streamHeartbeatMs);
  snapshotRoute(router, core);
  if (opts.variables) {
    variableRoutes(router, opts.variables);
    keyringRoutes(router, opts.variables);
  }
  // Upgraded sockets leave the HTTP server's books: the exec sessions are closed by hand at close.
  const execSessions = new Set<import('ws').WebSocket>();
  router.upgrade('/v1/client/allocation/:id/exec', execUpgrade(core, execSessions));
  // A browser opens /ui by hand, so the token may come as ?token= too; the redirect carries
  // only a one-time code (a token in a URL ends up in history, logs and Referer headers).
  router.on('GET', '/ui', { kind: 'management', queryToken: 'token' }, async (req) => {
    const url = await opts.viewerUrl?.();
    if (!url) throw new ApiError(404, 'the viewer is not available');
    const code = opts.token ? opts.viewerCode?.() : undefined;
    if (opts.token && !code) throw new ApiError(500, 'the viewer takes no one-time code');
    const target = code ? `${url}?code=${encodeURIComponent(code)}` : url;
    req.res.writeHead(307, { Location: target, 'Content-Type': 'text/plain', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' });
    req.res.end(`berth's viewer is at ${url}\n`);
  });

  const edge: EdgeOptions = {
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    loopback: isLoopbackAddress(config.bindAddr),
    scheme: config.tls.http ? 'https' : 'http',
    allowedOrigins: config.httpAllowedOrigins ?? [],
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let admitted;
    try {
      admitted = admit(router, req, edge, false);
    } catch (e) {
      req.resume();
      sendError(res, e);
      return;
    }
    const { target, match } = admitted;
    if (match.kind !== 'http') return sendError(res, new ApiError(500, 'upgrade route matched a plain request'));
    void router.serve(req, res, target, match.handler, match.params);
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
  // An upgrade goes through the same edge decision and route table as any request.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let admitted;
    try {
      admitted = admit(router, req, edge, true);
    } catch (e) {
      refuseUpgrade(socket, e);
      return;
    }
    const { target, match } = admitted;
    if (match.kind !== 'upgrade') return refuseUpgrade(socket, new ApiError(500, 'plain route matched an upgrade'));
    match.handler(req, socket, head, match.params, target.query);
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
    routes: router.routes(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const ws of execSessions) ws.terminate();
      }),
  };
}
