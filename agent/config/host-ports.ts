/**
 * Ports something on the host already holds (a TCP listener, a bound UDP socket), read from
 * `/proc/net/{tcp,tcp6,udp,udp6}`: the scheduler never hands one out as a dynamic port (a task
 * that binds it would fail to start). A cheap read (a few files, one line per socket), done per
 * plan; where /proc is not there (not Linux), nothing is known and nothing is avoided.
 * @module
 */
import { readHostFile } from './host-file.ts';

/** TCP `LISTEN` in /proc/net/tcp's `st` column. */
const TCP_LISTEN = '0A';
/** UDP sockets bound but unconnected show as `07` (`TCP_CLOSE`). */
const UDP_BOUND = '07';

/**
 * The local ports of the sockets in one /proc/net table whose state is `state` (pure):
 * `   0: 0100007F:1F90 00000000:0000 0A ...` is port 8080 listening.
 */
export function portsInTable(text: string, state: string): number[] {
  const out: number[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\d+:\s+[0-9A-Fa-f]+:([0-9A-Fa-f]{4})\s+[0-9A-Fa-f]+:[0-9A-Fa-f]{4}\s+([0-9A-Fa-f]{2})\s/.exec(line);
    if (m && m[2]!.toUpperCase() === state) out.push(parseInt(m[1]!, 16));
  }
  return out;
}

/** Every port a listener or a bound UDP socket holds on this host now (`root` is `/proc/net`). */
export function hostPortsInUse(root = '/proc/net'): number[] {
  const ports = new Set<number>();
  for (const t of ['tcp', 'tcp6']) for (const p of portsInTable(readHostFile(`${root}/${t}`), TCP_LISTEN)) ports.add(p);
  for (const t of ['udp', 'udp6']) for (const p of portsInTable(readHostFile(`${root}/${t}`), UDP_BOUND)) ports.add(p);
  return [...ports].sort((a, b) => a - b);
}

/** How long one read of /proc/net answers for: the scheduler plans many allocs in that time. */
export const HOST_PORTS_TTL_MS = 1000;

/**
 * `read` (default {@link hostPortsInUse}) kept for `ttlMs` on the clock `now`: a burst of plans
 * (a thousand client updates, each planning) reads /proc/net once, not once per alloc. A port
 * bound in the window is missed as it would be between two reads.
 */
export function cachedHostPorts(now: () => number, read: () => number[] = hostPortsInUse, ttlMs = HOST_PORTS_TTL_MS): () => number[] {
  let at = -Infinity;
  let ports: number[] = [];
  return () => {
    const t = now();
    if (t - at >= ttlMs || t < at) {
      ports = read();
      at = t;
    }
    return ports;
  };
}
