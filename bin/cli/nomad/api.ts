/**
 * The CLI's HTTP client for a berth (or Nomad) agent, set as `nomad`'s is: each of `-address`,
 * `-token`, `-region`, `-namespace`, `-ca-cert`, `-client-cert`, `-client-key` and
 * `-tls-skip-verify` wins over its environment variable (`BERTH_ADDR` or `NOMAD_ADDR`, default
 * `http://127.0.0.1:4646`; `BERTH_TOKEN` or `NOMAD_TOKEN` as `X-Nomad-Token`; `NOMAD_REGION`,
 * `NOMAD_NAMESPACE` as query parameters; `NOMAD_CACERT`, `NOMAD_CLIENT_CERT`,
 * `NOMAD_CLIENT_KEY`, `NOMAD_SKIP_VERIFY` for HTTPS).
 * @module
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BerthError } from '../../../model/errors.ts';

/**
 * The agent answered with an error status; `status` is the HTTP status, the message its text;
 * `body` the answer as sent (a 409's JSON: the variable a check-and-set met).
 */
export class ApiRequestError extends BerthError {
  constructor(
    readonly status: number,
    message: string,
    readonly body = '',
  ) {
    super(message);
  }
}

/** The agent could not be reached. */
export class AgentUnreachableError extends BerthError {}

/** A JSON answer and its `X-Nomad-Index`. */
export interface ApiAnswer<T> {
  body: T;
  index: number;
}

/** The flags every command that talks to an agent takes, as `nomad`'s commands do. */
export const API_FLAGS = {
  address: 'string',
  token: 'string',
  region: 'string',
  namespace: 'string',
  'ca-cert': 'string',
  'client-cert': 'string',
  'client-key': 'string',
  'tls-skip-verify': 'boolean',
} as const;

/** Parsed flags, of which {@link AgentApi} reads the {@link API_FLAGS}. */
export type ApiFlags = Record<string, string | boolean | string[] | undefined>;

/** Talks to one agent. */
export class AgentApi {
  readonly addr: string;
  readonly #token: string | undefined;
  readonly #query: URLSearchParams;
  readonly #tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean };

  /** `flags` (the {@link API_FLAGS} a command parsed) win over `env`. */
  constructor(flags: ApiFlags = {}, env: NodeJS.ProcessEnv = process.env) {
    const flag = (name: keyof typeof API_FLAGS) => (typeof flags[name] === 'string' && flags[name] !== '' ? (flags[name] as string) : undefined);
    this.addr = (flag('address') || env.BERTH_ADDR || env.NOMAD_ADDR || 'http://127.0.0.1:4646').replace(/\/+$/, '');
    this.#token = flag('token') || env.BERTH_TOKEN || env.NOMAD_TOKEN || undefined;
    this.#query = new URLSearchParams();
    const region = flag('region') || env.NOMAD_REGION;
    const namespace = flag('namespace') || env.NOMAD_NAMESPACE;
    if (region) this.#query.set('region', region);
    if (namespace) this.#query.set('namespace', namespace);
    const read = (p: string | undefined) => (p ? readFileSync(p) : undefined);
    const ca = flag('ca-cert') || env.NOMAD_CACERT;
    const cert = flag('client-cert') || env.NOMAD_CLIENT_CERT;
    const key = flag('client-key') || env.NOMAD_CLIENT_KEY;
    const skip = flags['tls-skip-verify'] === true || /^(1|true)$/i.test(env.NOMAD_SKIP_VERIFY ?? '');
    this.#tls = {
      ...(ca ? { ca: read(ca)! } : {}),
      ...(cert ? { cert: read(cert)! } : {}),
      ...(key ? { key: read(key)! } : {}),
      ...(skip ? { rejectUnauthorized: false } : {}),
    };
  }

  /** `path` with the region and namespace parameters, when set. */
  url(path: string): URL {
    const url = new URL(this.addr + path);
    for (const [k, v] of this.#query) if (!url.searchParams.has(k)) url.searchParams.set(k, v);
    return url;
  }

  /** What a WebSocket to the agent needs: the token header and the TLS options. */
  socketOptions(): { headers: Record<string, string>; ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean } {
    return { headers: this.#token ? { 'X-Nomad-Token': this.#token } : {}, ...this.#tls };
  }

  /** Sends one request; resolves with the raw response (status checked). */
  async raw(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<IncomingMessage> {
    const url = this.url(path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {};
    if (this.#token) headers['X-Nomad-Token'] = this.#token;
    if (payload) headers['Content-Length'] = payload.length;
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, ...this.#tls, ...(signal ? { signal } : {}) });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', (e) =>
        reject(
          signal?.aborted
            ? e
            : new AgentUnreachableError(
                `cannot reach the agent at ${this.addr}: ${(e as NodeJS.ErrnoException).code ?? e.message} (is berth agent running? give -address or set BERTH_ADDR or NOMAD_ADDR)`,
              ),
        ),
      );
      req.end(payload);
    });
    if (res.statusCode! >= 400) {
      let text = '';
      for await (const c of res) text += c;
      throw new ApiRequestError(res.statusCode!, `${text.trim() || res.statusMessage} (${method} ${path}: ${res.statusCode})`, text);
    }
    return res;
  }

  /** A JSON request. */
  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<ApiAnswer<T>> {
    const res = await this.raw(method, path, body, signal);
    let text = '';
    for await (const c of res) text += c;
    return { body: (text ? JSON.parse(text) : null) as T, index: Number(res.headers['x-nomad-index'] ?? 0) };
  }

  /** GET as JSON. */
  get<T>(path: string, signal?: AbortSignal): Promise<ApiAnswer<T>> {
    return this.json<T>('GET', path, undefined, signal);
  }

  /** The one alloc whose id is `idOrPrefix` or starts with it (a UsageError-like error otherwise). */
  async resolveAlloc(idOrPrefix: string): Promise<Record<string, unknown>> {
    const { body } = await this.get<Array<{ ID: string }>>(`/v1/allocations?prefix=${encodeURIComponent(idOrPrefix)}`);
    if (body.length === 0) throw new ApiRequestError(404, `No allocation(s) with prefix or id "${idOrPrefix}" found`);
    if (body.length > 1 && !body.some((a) => a.ID === idOrPrefix))
      throw new ApiRequestError(400, `Prefix matched multiple allocations: ${body.map((a) => a.ID.slice(0, 8)).join(', ')}`);
    const id = body.find((a) => a.ID === idOrPrefix)?.ID ?? body[0]!.ID;
    return (await this.get<Record<string, unknown>>(`/v1/allocation/${id}`)).body;
  }
}
