/**
 * `GET /v1/client/allocation/:id/exec`: Nomad's `alloc exec` over a WebSocket. Query:
 * `task`, `command` (a JSON array), `tty` (berth runs without a terminal: `tty=true` is refused). Frames are Nomad's:
 *
 * ```
 * client → agent  {"stdin":{"data":"<base64>"}}   {"stdin":{"close":true}}   {"tty_size":{...}} (ignored)
 * agent → client  {"stdout":{"data":"<base64>"}}  {"stderr":{"data":"<base64>"}}
 *                 {"exited":true,"result":{"exit_code":N}}
 * ```
 *
 * The command runs through the alloc runner's `exec` (inside the task's chroot, namespaces,
 * cgroup and user for exec tasks). A client that goes away cancels it. Output is sent as it comes;
 * stdin is read only as fast as the command takes it.
 * @module
 */
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentCore } from '../core.ts';
import type { UpgradeHandler } from './router.ts';
import { errorText } from '../../index.ts';

type ExecFn = (
  task: string,
  argv: string[],
  opts: { stdin?: AsyncIterable<Buffer>; tty?: boolean; signal?: AbortSignal; onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void },
) => Promise<{ exitCode: number }>;

/** The exec route's upgrade handler (`router.upgrade`: the edge has checked the request and the token). */
export function execUpgrade(core: AgentCore): UpgradeHandler {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  return (req, socket, head, params, query) => {
    wss.handleUpgrade(req, socket, head, (ws) => void session(core, ws, params.id!, query));
  };
}

async function session(core: AgentCore, ws: WebSocket, allocId: string, q: URLSearchParams): Promise<void> {
  const fail = (code: number, reason: string) => ws.close(code, reason.slice(0, 120));
  const runner = core.client.runner(allocId);
  if (!runner) return fail(1008, 'Unknown allocation');
  const exec = (runner as unknown as { exec?: ExecFn }).exec;
  if (typeof exec !== 'function') return fail(1011, 'exec is not available in this berth');
  const task = q.get('task') ?? '';
  let argv: unknown;
  try {
    argv = JSON.parse(q.get('command') ?? '');
  } catch {
    argv = undefined;
  }
  if (!task) return fail(1008, 'missing task parameter');
  // Nomad would give the command a pseudo-terminal; berth has none to give, so it says so.
  if (q.get('tty') === 'true') return fail(1008, 'tty is not supported: berth runs commands without a terminal; ask with tty=false');
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== 'string')) return fail(1008, 'command must be a JSON array of strings');

  // stdin: frames queue up here and are taken as the command reads them.
  const pending: Buffer[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  ws.on('message', (raw) => {
    try {
      const msg = JSON.parse(String(raw)) as { stdin?: { data?: string; close?: boolean } };
      if (msg.stdin?.data) pending.push(Buffer.from(msg.stdin.data, 'base64'));
      if (msg.stdin?.close) closed = true;
    } catch {
      // not a frame of ours: ignored, as Nomad ignores unknown frames
    }
    wake?.();
  });
  const ac = new AbortController();
  ws.on('close', () => {
    closed = true;
    ac.abort(new Error('exec client went away'));
    wake?.();
  });
  async function* stdin(): AsyncIterable<Buffer> {
    for (;;) {
      if (pending.length) yield pending.shift()!;
      else if (closed) return;
      else await new Promise<void>((r) => (wake = r));
    }
  }
  const send = (o: unknown) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(o));
  };
  try {
    const result = await exec.call(runner, task, argv as string[], {
      stdin: stdin(),
      tty: q.get('tty') === 'true',
      signal: ac.signal,
      onOutput: (stream, chunk) => send({ [stream]: { data: chunk.toString('base64') } }),
    });
    send({ exited: true, result: { exit_code: result.exitCode } });
    ws.close(1000);
  } catch (e) {
    if (!ac.signal.aborted) fail(1011, errorText(e));
  }
}
