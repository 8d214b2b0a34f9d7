/**
 * One probe of each check kind, bounded in time and in what it keeps:
 * - `http`: `<protocol>://<address>:<port><path>` with the check's method and headers; redirects
 *   are not followed; the status code decides (2xx/3xx pass, 429 warns); at most
 *   {@link MAX_CHECK_OUTPUT} bytes of the body are read into the output.
 * - `tcp`: a connection to the address and port.
 * - `script`: the command run inside the task through the driver's exec (exit 0 passes, 1 warns).
 * Each resolves with a status and an output; none rejects (a failure is `critical`).
 * @module
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { httpCheckStatus, scriptCheckStatus, type CheckStatus } from '../../machines/policy/check-status.ts';
import type { ServiceCheck } from '../../model/types.ts';
import { joinHostPort } from '../drivers/env.ts';
import type { Endpoint } from './registrations.ts';

/** Output kept from one probe (Consul keeps 4 KiB). */
export const MAX_CHECK_OUTPUT = 4096;

/** A probe's outcome. */
export interface ProbeResult {
  status: CheckStatus;
  output: string;
  /** An HTTP check's answer status. */
  statusCode?: number;
}

/** Runs a command inside a task (the runner's exec). */
export type TaskExec = (
  task: string,
  argv: string[],
  opts: { timeoutMs: number; signal: AbortSignal },
) => Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }>;

const text = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * An HTTP check. Through node:http (not fetch, which drops a `Host` header): a `Host` header
 * value becomes the request's host, as Nomad's checker sets it; no connection is kept.
 */
export function probeHttp(check: ServiceCheck, ep: Endpoint, signal: AbortSignal): Promise<ProbeResult> {
  const method = (check.method ?? 'GET').toUpperCase();
  const url = `${check.protocol ?? 'http'}://${joinHostPort(ep.address, ep.port)}${check.path?.startsWith('/') ? check.path : `/${check.path ?? ''}`}`;
  const headers: Record<string, string | string[]> = {};
  for (const [k, vs] of Object.entries(check.header ?? {})) {
    if (!vs.length) continue;
    // One Host: the first value (Go's Header.Get); every value of any other header.
    headers[k] = k.toLowerCase() === 'host' ? vs[0]! : [...vs];
  }
  const timeout = AbortSignal.timeout(check.timeoutMs);
  const mod = check.protocol === 'https' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const fail = (e: unknown) => {
      if (timeout.aborted) return done({ status: 'critical', output: `Get ${JSON.stringify(url)}: context deadline exceeded (timeout ${check.timeoutMs} ms)` });
      done({ status: 'critical', output: `${method} ${JSON.stringify(url)}: ${text(e)}` });
    };
    let req: http.ClientRequest;
    try {
      req = mod.request(url, { method, headers, agent: false, signal: AbortSignal.any([signal, timeout]) }, (res) => {
        const parts: Buffer[] = [];
        let n = 0;
        const finish = () => {
          res.destroy();
          const code = res.statusCode ?? 0;
          done({
            status: httpCheckStatus(code),
            statusCode: code,
            output: `HTTP ${method} ${url}: ${code} ${res.statusMessage ?? ''} Output: ${Buffer.concat(parts).toString('utf8')}`,
          });
        };
        res.on('data', (c: Buffer) => {
          parts.push(c.subarray(0, MAX_CHECK_OUTPUT - n));
          n += c.length;
          if (n >= MAX_CHECK_OUTPUT) finish();
        });
        res.on('end', finish);
        res.on('error', fail);
      });
    } catch (e) {
      return fail(e);
    }
    req.on('error', fail);
    req.end();
  });
}

/** A TCP check. */
export function probeTcp(check: ServiceCheck, ep: Endpoint, signal: AbortSignal): Promise<ProbeResult> {
  const addr = joinHostPort(ep.address, ep.port);
  return new Promise((resolve) => {
    const sock = net.connect({ host: ep.address, port: ep.port });
    const done = (r: ProbeResult) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ status: 'critical', output: `dial tcp ${addr}: i/o timeout (${check.timeoutMs} ms)` }), check.timeoutMs);
    const onAbort = () => done({ status: 'critical', output: 'check stopped' });
    signal.addEventListener('abort', onAbort, { once: true });
    sock.once('connect', () => done({ status: 'passing', output: `TCP connect ${addr}: Success` }));
    sock.once('error', (e) => done({ status: 'critical', output: `dial tcp ${addr}: ${text(e)}` }));
  });
}

/** A script check, run inside `task`. */
export async function probeScript(check: ServiceCheck, task: string, exec: TaskExec, signal: AbortSignal): Promise<ProbeResult> {
  if (!check.command) return { status: 'critical', output: 'script check has no command' };
  try {
    const r = await exec(task, [check.command, ...(check.args ?? [])], { timeoutMs: check.timeoutMs, signal });
    const out = Buffer.concat([r.stdout, r.stderr]).subarray(0, MAX_CHECK_OUTPUT).toString('utf8');
    return { status: scriptCheckStatus(r.exitCode), output: out };
  } catch (e) {
    return { status: 'critical', output: /timed out/.test(text(e)) ? `Timed out (${check.timeoutMs} ms) running check` : text(e) };
  }
}
