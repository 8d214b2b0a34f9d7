/**
 * Support for service, check and health specs on real processes.
 * - {@link AdvancingClock}: real time for every delay except the periods it holds (check
 *   intervals, min_healthy_time, healthy_deadline); `advance(ms)` moves its `now()` forward and
 *   fires the held timers that came due, so time-based rules (check_restart, health) are driven
 *   by the spec, never by sleeping.
 * - {@link serveDir}: an HTTP server on loopback serving files, counting requests.
 * - {@link freePort}: a port nothing listens on right now.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { realClock, type Clock } from '../../../model/clock.ts';

type Held = { held: number };

/** See the module comment. */
export class AdvancingClock implements Clock {
  #offset = 0;
  #seq = 0;
  readonly #timers = new Map<number, { due: number; period: number; fn: () => void }>();
  constructor(readonly heldMs: ReadonlySet<number>) {}

  now(): number {
    return Date.now() + this.#offset;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    if (!this.heldMs.has(ms)) return realClock.setTimeout(fn, ms);
    const id = ++this.#seq;
    this.#timers.set(id, { due: this.now() + ms, period: ms, fn });
    return { held: id } satisfies Held;
  }

  clearTimeout(h: unknown): void {
    if (typeof h === 'object' && h !== null && 'held' in h) this.#timers.delete((h as Held).held);
    else realClock.clearTimeout(h);
  }

  /** Held timers waiting; with `period`, only those set for that many ms. */
  pending(period?: number): number {
    return period === undefined ? this.#timers.size : [...this.#timers.values()].filter((t) => t.period === period).length;
  }

  /** Moves time on by `ms`, firing (in due order) every held timer that came due. */
  advance(ms: number): void {
    this.#offset += ms;
    const now = this.now();
    const due = [...this.#timers].filter(([, t]) => t.due <= now).sort((a, b) => a[1].due - b[1].due);
    for (const [id, t] of due) {
      this.#timers.delete(id);
      t.fn();
    }
  }
}

/** Serves the files of `dir` on 127.0.0.1 (GET only); `requests` lists the paths asked for. */
export async function serveDir(dir: string, extra?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean) {
  const requests: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    if (extra?.(req, res)) return;
    const file = path.join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP port on 127.0.0.1 that is free now (the kernel's pick). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
