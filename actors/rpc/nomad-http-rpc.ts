/**
 * `NomadHttpRPC`: the {@link ServerRPC} berth's remote watchers and migrations use, over Nomad's
 * HTTP API (a berth agent's, or a Nomad server's for these two endpoints):
 *
 * ```
 * getAlloc ──► GET /v1/allocation/<id>?index=<minQueryIndex>&wait=<waitMs>[&stale=true]
 *                200 → parseAllocation(body), X-Nomad-Index
 *                404 → { alloc: null }   (garbage collected)
 *                403 → PermissionDeniedError (final: stop waiting, skip migration)
 * getNode  ──► GET /v1/node/<id>   → { id, httpAddr: HTTPAddr, tlsEnabled: TLSEnabled } | null
 * ```
 *
 * `X-Nomad-Token` carries the token; HTTPS uses the CA (and the client certificate, when the
 * servers verify clients) given. Every request follows the caller's `AbortSignal`.
 * @module
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BerthError, PermissionDeniedError } from '../../model/errors.ts';
import { parseAllocation } from '../../model/parse.ts';
import type { Allocation } from '../../model/types.ts';
import type { ServerRPC } from '../watchers/types.ts';

/** Options of {@link NomadHttpRPC}. */
export interface NomadHttpRPCOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:4646` or `https://nomad.example:4646`. */
  address: string;
  /** Sent as `X-Nomad-Token`. */
  token?: string;
  /** PEM files for HTTPS: the CA to trust, and a client certificate when the servers verify clients. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /** How long one blocking query may wait on the server (default 5 minutes, Nomad's). */
  waitMs?: number;
}

/** A request to the servers' HTTP API failed (not a 404 or 403, which are answers). */
export class NomadHttpError extends BerthError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** {@link ServerRPC} over Nomad's HTTP API. */
export class NomadHttpRPC implements ServerRPC {
  readonly #base: URL;
  readonly #token: string | undefined;
  readonly #tls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  readonly #waitMs: number;

  constructor(opts: NomadHttpRPCOptions) {
    this.#base = new URL(opts.address);
    if (this.#base.protocol !== 'http:' && this.#base.protocol !== 'https:')
      throw new BerthError(`NomadHttpRPC: address must be http(s)://host:port, got ${JSON.stringify(opts.address)}`);
    this.#token = opts.token;
    this.#waitMs = opts.waitMs ?? 5 * 60_000;
    this.#tls = {
      ...(opts.tls?.caFile ? { ca: readFileSync(opts.tls.caFile) } : {}),
      ...(opts.tls?.certFile ? { cert: readFileSync(opts.tls.certFile) } : {}),
      ...(opts.tls?.keyFile ? { key: readFileSync(opts.tls.keyFile) } : {}),
    };
  }

  /** Reads one allocation, as a blocking query when `minQueryIndex > 0`. */
  async getAlloc(
    req: { allocId: string; minQueryIndex: number; allowStale: boolean },
    signal: AbortSignal,
  ): Promise<{ alloc: Allocation | null; index: number }> {
    const q = new URLSearchParams();
    if (req.minQueryIndex > 0) {
      q.set('index', String(req.minQueryIndex));
      q.set('wait', `${this.#waitMs}ms`);
    }
    if (req.allowStale) q.set('stale', 'true');
    const r = await this.#get(`/v1/allocation/${encodeURIComponent(req.allocId)}?${q}`, signal);
    if (r.status === 404) return { alloc: null, index: r.index };
    return { alloc: parseAllocation(r.json), index: r.index };
  }

  /** Looks up a node's HTTP address. */
  async getNode(req: { nodeId: string }, signal: AbortSignal): Promise<{ node: { id: string; httpAddr: string; tlsEnabled?: boolean } | null }> {
    const r = await this.#get(`/v1/node/${encodeURIComponent(req.nodeId)}`, signal);
    if (r.status === 404) return { node: null };
    const n = r.json as { ID?: unknown; HTTPAddr?: unknown; TLSEnabled?: unknown };
    if (typeof n?.ID !== 'string' || typeof n.HTTPAddr !== 'string') throw new NomadHttpError(200, `node ${req.nodeId}: the answer has no ID or HTTPAddr`);
    return { node: { id: n.ID, httpAddr: n.HTTPAddr, ...(typeof n.TLSEnabled === 'boolean' ? { tlsEnabled: n.TLSEnabled } : {}) } };
  }

  async #get(path: string, signal: AbortSignal): Promise<{ status: number; index: number; json: unknown }> {
    signal.throwIfAborted();
    const url = new URL(path, this.#base);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.#token) headers['X-Nomad-Token'] = this.#token;
    const https = url.protocol === 'https:';
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      // agent: false: a blocking query holds its own connection, closed with it.
      const req = (https ? httpsRequest : httpRequest)(url, { method: 'GET', headers, agent: false, signal, ...(https ? this.#tls : {}) }, resolve);
      req.on('error', (e) =>
        reject(signal.aborted ? signal.reason : new NomadHttpError(0, `GET ${url.pathname}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
      );
      req.end();
    });
    let text = '';
    try {
      for await (const c of res) text += c;
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw e;
    }
    const index = Number(res.headers['x-nomad-index'] ?? 0);
    const status = res.statusCode ?? 0;
    if (status === 403) throw new PermissionDeniedError(`GET ${url.pathname}: ${text.trim() || 'Permission denied'}`);
    if (status === 404) return { status, index, json: undefined };
    if (status !== 200) throw new NomadHttpError(status, `GET ${url.pathname}: ${status} ${text.trim()}`);
    try {
      return { status, index, json: JSON.parse(text) };
    } catch {
      throw new NomadHttpError(status, `GET ${url.pathname}: the answer is not JSON`);
    }
  }
}
