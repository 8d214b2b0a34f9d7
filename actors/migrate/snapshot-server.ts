/**
 * The HTTP endpoint a replacement allocation on another node pulls a snapshot from, as Nomad's
 * `GET /v1/client/allocation/<id>/snapshot`: it streams `AllocDir.snapshot()` as a tar.
 *
 * With `tls` it serves HTTPS and accepts only clients presenting a certificate signed by the
 * given CA (Nomad's `verify_https_client`). The token is compared in constant time, length
 * included (both sides are hashed first). Beyond loopback it needs a token or TLS (or an
 * explicit `trustedNetwork`): it serves every allocation's data.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { SnapshotServerBindError } from '../../model/errors.ts';
import { isLoopbackAddress } from '../../model/loopback.ts';
import { secretMatches } from '../../model/secret.ts';
import type { AllocDirHandle } from '../allocdir/handle.ts';
import { errorText } from '../../model/error-text.ts';

/** Options of {@link createSnapshotServer}. */
export interface SnapshotServerOptions {
  /** Finds the alloc dir to snapshot; undefined answers 404. */
  lookup: (allocId: string) => Pick<AllocDirHandle, 'snapshot'> | undefined;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** When set, requests must carry it in `X-Nomad-Token` (401 when missing, 403 when wrong). */
  token?: string;
  /**
   * Listen beyond loopback with neither `token` nor TLS: every peer that can reach the port may
   * read every allocation's data. Refused (`SnapshotServerBindError`) unless this says the
   * network is trusted.
   */
  trustedNetwork?: boolean;
  /** Told about snapshots that failed after the response started (the tar ends with the error entry). */
  onError?: (err: unknown, allocId: string) => void;
  /** Serve HTTPS with this certificate, and require client certificates signed by `ca`. */
  tls?: SnapshotServerTls;
}

/** PEM material of an HTTPS snapshot server. */
export interface SnapshotServerTls {
  /** CA that client certificates must chain to. */
  ca: Buffer | string;
  /** The server's certificate. */
  cert: Buffer | string;
  /** Its private key. */
  key: Buffer | string;
}

/** A running snapshot server. */
export interface SnapshotServer {
  /** The bound address. */
  readonly address: { host: string; port: number };
  /** Base URL, e.g. `http://127.0.0.1:41234` (`https://` with TLS). */
  readonly url: string;
  /** The underlying node:http (or node:https) server. */
  readonly server: Server;
  /** Stops listening and destroys open connections (in-flight snapshots end). */
  close(): Promise<void>;
}

const ROUTE = /^\/v1\/client\/allocation\/([^/]+)\/snapshot$/;

/**
 * Constant-time token check: both sides are hashed to 32 bytes first, so neither the content
 * nor the length of the expected token shows in the time taken.
 */
export const tokenMatches: (given: string, want: string) => boolean = secretMatches;

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Starts the snapshot endpoint and resolves once it listens.
 *
 * @example
 * const srv = await createSnapshotServer({ lookup: (id) => runners.get(id)?.allocDir, token });
 * // GET `${srv.url}/v1/client/allocation/${id}/snapshot` with header X-Nomad-Token
 * await srv.close();
 */
export async function createSnapshotServer(opts: SnapshotServerOptions): Promise<SnapshotServer> {
  const sockets = new Set<Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = ROUTE.exec(url.pathname);
    if (!m) return reply(res, 404, 'Not found\n');
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return reply(res, 405, 'Method not allowed\n');
    }
    if (opts.token !== undefined) {
      const given = req.headers['x-nomad-token'];
      if (typeof given !== 'string' || given === '') return reply(res, 401, 'Missing X-Nomad-Token\n');
      if (!tokenMatches(given, opts.token)) return reply(res, 403, 'Permission denied\n');
    }
    let allocId: string;
    try {
      allocId = decodeURIComponent(m[1]);
    } catch {
      return reply(res, 400, 'Bad allocation id\n');
    }
    const allocDir = opts.lookup(allocId);
    if (!allocDir) return reply(res, 404, `Unknown allocation "${allocId}"\n`);
    res.writeHead(200, { 'Content-Type': 'application/x-tar' });
    allocDir.snapshot(res).catch((err) => {
      opts.onError?.(err, allocId);
      if (!res.writableEnded) res.destroy();
    });
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    try {
      handle(req, res);
    } catch (err) {
      if (!res.headersSent) reply(res, 500, `${errorText(err)}\n`);
      else res.destroy();
    }
  };
  const server: Server = opts.tls
    ? createHttpsServer({ ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key, requestCert: true, rejectUnauthorized: true }, onRequest)
    : createServer(onRequest);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopbackAddress(host) && opts.token === undefined && !opts.tls && !opts.trustedNetwork) {
    throw new SnapshotServerBindError(
      `snapshot server: refusing to listen on ${host} without a token or TLS: any peer that reaches it could read every allocation's data. Set a token (the other clients' migrate token), TLS, or trustedNetwork: true if only trusted peers can reach ${host}`,
    );
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    address: { host: addr.address, port: addr.port },
    url: `${opts.tls ? 'https' : 'http'}://${urlHost}:${addr.port}`,
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
