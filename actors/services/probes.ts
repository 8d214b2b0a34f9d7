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
}

/** Runs a command inside a task (the runner's exec). */
export type TaskExec = (
  task: string,
  argv: string[],
  opts: { timeoutMs: number; signal: AbortSignal },
) => Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }>;

const text = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** An HTTP check. */
export async function probeHttp(check: ServiceCheck, ep: Endpoint, signal: AbortSignal): Promise<ProbeResult> {
  const method = (check.method ?? 'GET').toUpperCase();
  const url = `${check.protocol ?? 'http'}://${joinHostPort(ep.address, ep.port)}${check.path?.startsWith('/') ? check.path : `/${check.path ?? ''}`}`;
  const headers = new Headers();
  for (const [k, vs] of Object.entries(check.header ?? {})) for (const v of vs) headers.append(k, v);
  const timeout = AbortSignal.timeout(check.timeoutMs);
  try {
    const res = await fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.any([signal, timeout]) });
    const body = await readBounded(res.body, MAX_CHECK_OUTPUT);
    return { status: httpCheckStatus(res.status), output: `HTTP ${method} ${url}: ${res.status} ${res.statusText} Output: ${body}` };
  } catch (e) {
    if (timeout.aborted) return { status: 'critical', output: `Get ${JSON.stringify(url)}: context deadline exceeded (timeout ${check.timeoutMs} ms)` };
    const cause = (e as { cause?: unknown }).cause;
    return { status: 'critical', output: `${method} ${JSON.stringify(url)}: ${cause ? text(cause) : text(e)}` };
  }
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

async function readBounded(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const parts: Buffer[] = [];
  let n = 0;
  try {
    while (n < max) {
      const { done, value } = await reader.read();
      if (done) break;
      const b = Buffer.from(value);
      parts.push(b.subarray(0, max - n));
      n += b.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).toString('utf8');
}
