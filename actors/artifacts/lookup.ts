/**
 * The host lookup of artifact downloads, off libuv's threadpool.
 *
 * `dns.lookup` (what `fetch` and `http.request` use by default) is getaddrinfo on libuv's
 * threadpool (4 threads), the same pool every `fs` call of every alloc runs on. With a DNS
 * server that does not answer, each lookup holds a thread for the resolver's full timeout, so a
 * few artifact fetches starved the pool and the next alloc's task dir build waited behind them.
 * Here names are resolved by c-ares (`dns.Resolver`, sockets on the event loop, no pool thread)
 * within a bound; only a name DNS answered does not exist (a fast answer) is asked of
 * getaddrinfo, for the hosts file (`localhost`, names in `/etc/hosts`).
 * @module
 */
import { isIP } from 'node:net';
import { Resolver, lookup as systemLookup } from 'node:dns/promises';
import { ArtifactDownloadError } from './errors.ts';

/** glibc's resolver defaults (`timeout:5 attempts:2`): per query, then tried once more. */
export const DNS_TIMEOUT_MS = 5_000;
/** Tries of each query (glibc's `attempts:2`). */
export const DNS_TRIES = 2;

/** One address of a host. */
export interface LookupAddress {
  address: string;
  family: 4 | 6;
}

/** How artifact downloads resolve a host name: to its addresses, or a rejection. */
export type ArtifactLookup = (host: string, signal: AbortSignal) => Promise<LookupAddress[]>;

/** What a {@link resolverLookup} asks. */
export interface ResolverLookupOptions {
  /** DNS servers (`ip` or `ip:port`); default: the system's (`/etc/resolv.conf`). */
  servers?: string[];
  /** Per query; default {@link DNS_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Tries per query; default {@link DNS_TRIES}. */
  tries?: number;
}

/** Codes of a DNS answer that the name does not exist (as opposed to no answer). */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);

/** An {@link ArtifactLookup} on c-ares (see the module doc). */
export function resolverLookup(opts: ResolverLookupOptions = {}): ArtifactLookup {
  return async (host, signal) => {
    if (isIP(host)) return [{ address: host, family: isIP(host) as 4 | 6 }];
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (isIP(bare)) return [{ address: bare, family: 6 }];
    // A resolver per lookup: `cancel()` ends only this lookup's queries.
    const r = new Resolver({ timeout: opts.timeoutMs ?? DNS_TIMEOUT_MS, tries: opts.tries ?? DNS_TRIES });
    if (opts.servers) r.setServers(opts.servers);
    const onAbort = () => r.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([r.resolve4(host), r.resolve6(host)]);
      if (signal.aborted) throw signal.reason;
      const found: LookupAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (found.length) return found;
      const codes = [v4, v6].map((s) => (s.status === 'rejected' ? (s.reason as NodeJS.ErrnoException).code : undefined));
      if (codes.every((c) => c && NOT_FOUND.has(c))) {
        // DNS said no: the hosts file may still know it, and getaddrinfo answers that at once.
        const local = await systemLookup(host, { all: true }).catch(() => []);
        if (local.length) return local.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
        throw new ArtifactDownloadError(`lookup ${host}: no such host`);
      }
      throw new ArtifactDownloadError(`lookup ${host}: ${codes.find((c) => c && !NOT_FOUND.has(c)) ?? 'failed'}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };
}

/** The lookup artifact downloads use unless told otherwise: the system's DNS servers, by c-ares. */
export const defaultArtifactLookup: ArtifactLookup = resolverLookup();
