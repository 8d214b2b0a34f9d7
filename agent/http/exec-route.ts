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
 * cgroup and user for exec tasks). A client that goes away cancels it.
 *
 * Both directions are bounded. Output: once more than {@link EXEC_OUTPUT_HIGH_WATER} bytes are
 * sent but not yet handed to the kernel, the command's pipes are paused (its writes block) until
 * they are. Input: once more than {@link EXEC_STDIN_HIGH_WATER} bytes of stdin wait for the
 * command, the socket is not read (the client's sends block in TCP) until it took them. A
 * malformed frame (oversize, bad UTF-8, RSV bits, ...) or a reset closes this session only.
 * @module
 */
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentCore } from '../core.ts';
import { UNKNOWN_ALLOCATION } from './errors.ts';
import type { UpgradeHandler } from './router.ts';
import { errorText } from '../../index.ts';

type ExecFn = (
  task: string,
  argv: string[],
  opts: { stdin?: AsyncIterable<Buffer>; tty?: boolean; signal?: AbortSignal; onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void | Promise<void> },
) => Promise<{ exitCode: number }>;

/** Output bytes a session may have queued in the agent before the command is paused. */
export const EXEC_OUTPUT_HIGH_WATER = 1024 * 1024;
/** Stdin bytes a session may hold for the command before the socket stops being read. */
export const EXEC_STDIN_HIGH_WATER = 1024 * 1024;
/**
 * While the socket is not read, a ping this often: a socket that is not read never sees its
 * client leave, but a write to it fails once the client is gone, and that ends the session.
 */
export const EXEC_PAUSED_PING_MS = 1000;

/** The exec route's upgrade handler (`router.upgrade`: the edge has checked the request and the token). */
export function execUpgrade(core: AgentCore, sessions: Set<WebSocket> = new Set()): UpgradeHandler {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  return (req, socket, head, params, query) => {
    // A reset during the handshake is this client's problem only.
    socket.on('error', () => socket.destroy());
    wss.handleUpgrade(req, socket, head, (ws) => {
      // ws reports a bad frame (too big, bad UTF-8, RSV bits, a bad opcode) as an 'error' and
      // closes with 1002/1007/1009; without a listener the error would end the process.
      ws.on('error', () => ws.terminate());
      // Live sessions, so the server's close can end them (a paused socket never reads a FIN).
      sessions.add(ws);
      ws.once('close', () => sessions.delete(ws));
      void session(core, ws, params.id!, query, socket);
    });
  };
}

async function session(core: AgentCore, ws: WebSocket, allocId: string, q: URLSearchParams, socket: Duplex): Promise<void> {
  const fail = (code: number, reason: string) => ws.close(code, reason.slice(0, 120));
  const runner = core.client.runner(allocId);
  if (!runner) return fail(1008, UNKNOWN_ALLOCATION);
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

  // stdin: frames queue up here and are taken as the command reads them; over the bound the
  // socket is paused, so the client's sends wait in TCP rather than in this process.
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let pinger: NodeJS.Timeout | undefined;
  const stopPinging = () => {
    clearInterval(pinger);
    pinger = undefined;
  };
  let closed = false;
  let wake: (() => void) | undefined;
  ws.on('message', (raw) => {
    try {
      const msg = JSON.parse(String(raw)) as { stdin?: { data?: string; close?: boolean } };
      if (typeof msg.stdin?.data === 'string' && msg.stdin.data) {
        const b = Buffer.from(msg.stdin.data, 'base64');
        pending.push(b);
        pendingBytes += b.length;
        if (pendingBytes > EXEC_STDIN_HIGH_WATER && !ws.isPaused) {
          ws.pause();
          pinger ??= setInterval(() => ws.ping(), EXEC_PAUSED_PING_MS);
        }
      }
      if (msg.stdin?.close) closed = true;
    } catch {
      // not a frame of ours: ignored, as Nomad ignores unknown frames
    }
    wake?.();
  });
  const ac = new AbortController();
  // Output: bytes given to ws.send whose callback (written to the socket) has not come yet.
  let unsent = 0;
  let drainWaiters: Array<() => void> = [];
  const drained = () => {
    const w = drainWaiters;
    drainWaiters = [];
    for (const f of w) f();
  };
  const gone = () => {
    stopPinging();
    closed = true;
    ac.abort(new Error('exec client went away'));
    wake?.();
    drained();
  };
  ws.on('close', gone);
  // The TCP socket's own close too: while ws is paused it may wait on unread frames before its
  // 'close', and the command must not outlive its client meanwhile.
  socket.once('close', gone);
  async function* stdin(): AsyncIterable<Buffer> {
    for (;;) {
      if (pending.length) {
        const b = pending.shift()!;
        pendingBytes -= b.length;
        if (pendingBytes <= EXEC_STDIN_HIGH_WATER && ws.isPaused) {
          stopPinging();
          ws.resume();
        }
        yield b;
      } else if (closed) return;
      else await new Promise<void>((r) => (wake = r));
    }
  }
  const send = (o: unknown): void | Promise<void> => {
    if (ws.readyState !== ws.OPEN) return;
    const data = JSON.stringify(o);
    unsent += data.length;
    ws.send(data, () => {
      unsent -= data.length;
      if (unsent <= EXEC_OUTPUT_HIGH_WATER) drained();
    });
    if (unsent <= EXEC_OUTPUT_HIGH_WATER) return;
    // Over the bound: the command's output waits until the socket took it (or the client left).
    return new Promise<void>((resolve) => drainWaiters.push(resolve));
  };
  try {
    const result = await exec.call(runner, task, argv as string[], {
      stdin: stdin(),
      tty: q.get('tty') === 'true',
      signal: ac.signal,
      onOutput: (stream, chunk) => send({ [stream]: { data: chunk.toString('base64') } }),
    });
    void send({ exited: true, result: { exit_code: result.exitCode } });
    ws.close(1000);
  } catch (e) {
    if (!ac.signal.aborted) fail(1011, errorText(e));
  }
}
