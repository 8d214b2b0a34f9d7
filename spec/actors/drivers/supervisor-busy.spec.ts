/**
 * A supervisor that is busy, not gone: hundreds of starts at once connect faster than it accepts.
 * Node's default accept queue (511) made the rest fail with EAGAIN, which the client took for a
 * dead supervisor (a /proc scan, a kill, a retry per start: 4 % of the agent's time at 1,000
 * allocs). The supervisor now listens with a deep queue, and the client connects again when the
 * queue is full, within the request's own bound.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import {
  dismissSupervisor,
  ensureSupervisor,
  executorRequest,
  ExecutorUnreachableError,
  SUPERVISOR_PATH,
  supervisorSocketPath,
  type SupervisorOptions,
} from '../../../actors/drivers/executor/client.ts';

/** A listener with an accept queue of one that accepts nothing until told `go` on stdin, then answers each request line with `{"ok":true,"n":<i>}`. */
const HELD_LISTENER = `
import socket, sys, os
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
print('listening', flush=True)
sys.stdin.readline()
i = 0
while True:
    c, _ = s.accept()
    i += 1
    f = c.makefile('rwb')
    if f.readline():
        f.write(('{"ok":true,"n":%d}\\n' % i).encode()); f.flush()
    c.close()
`;

/** Resolves with the error code of one raw connect to `socketPath` (undefined when it connects). */
function probe(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const c = net.createConnection(socketPath);
    c.once('connect', () => {
      c.destroy();
      resolve(undefined);
    });
    c.once('error', (e: NodeJS.ErrnoException) => resolve(e.code));
  });
}

/** Pids of the supervisors started for `dir` (their argv: supervisor.mjs, dir, socket). */
function supervisorPids(dir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const argv = fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
        return argv.includes(SUPERVISOR_PATH) && argv.includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('the task supervisor when its accept queue is full', function () {
  this.timeout(20_000);
  let dir: string;
  let held: ChildProcess | undefined;
  const fillers: net.Socket[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-busy-'));
  });
  afterEach(async () => {
    for (const f of fillers.splice(0)) f.destroy();
    if (held && held.exitCode === null) {
      held.kill('SIGKILL');
      await once(held, 'exit');
    }
    held = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the held listener and fills its queue with two raw connections: the next connect gets EAGAIN. */
  async function fullListener(): Promise<string> {
    const sock = path.join(dir, 's.sock');
    held = spawn('python3', ['-c', HELD_LISTENER, sock], { stdio: ['pipe', 'pipe', 'inherit'] });
    await once(held.stdout!, 'data');
    for (let i = 0; i < 2; i++) {
      const c = net.createConnection(sock);
      c.on('error', () => {});
      fillers.push(c);
      await once(c, 'connect');
    }
    expect(await probe(sock), 'the queue is full').to.equal('EAGAIN');
    return sock;
  }

  it('a request to a full queue waits and is answered once the supervisor accepts, instead of failing as unreachable', async () => {
    const sock = await fullListener();
    let outcome: string | undefined;
    const req = executorRequest(sock, { op: 'ping' }, { timeoutMs: 15_000 }).then(
      (r) => (outcome = `answered ${JSON.stringify(r)}`),
      (e: Error) => (outcome = `failed: ${e.message}`),
    );
    // A connect made after the request's first one is refused too, so the request's was as well:
    // its rejection, had it given up, would have been handled before this probe's.
    expect(await probe(sock)).to.equal('EAGAIN');
    expect(outcome, 'still waiting on the busy supervisor').to.equal(undefined);
    for (const f of fillers) f.write('{"op":"ping"}\n');
    held!.stdin!.write('go\n');
    await req;
    expect(outcome).to.match(/^answered \{"ok":true,"n":\d+\}$/);
  });

  it('the wait for a full queue ends with the request: its timeout and its abort both end it promptly', async () => {
    const sock = await fullListener();
    const t0 = performance.now();
    const err = await executorRequest(sock, { op: 'ping' }, { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ExecutorUnreachableError);
    expect((err as ExecutorUnreachableError).code).to.equal('ETIMEDOUT');
    expect(performance.now() - t0).to.be.below(2_000);

    const ac = new AbortController();
    const pending = executorRequest(sock, { op: 'ping' }, { signal: ac.signal }).catch((e: unknown) => e);
    expect(await probe(sock)).to.equal('EAGAIN');
    ac.abort(new Error('cancelled by the test'));
    expect(((await pending) as Error).message).to.equal('cancelled by the test');
  });

  it('the real supervisor queues 600 connects made while it cannot accept (SIGSTOP): none is refused, all are answered', async () => {
    const o: SupervisorOptions = { dir, nodePath: process.execPath, supervisorPath: SUPERVISOR_PATH, timeoutMs: 10_000 };
    const sock = await ensureSupervisor(o);
    const pids = supervisorPids(dir);
    expect(pids, 'one supervisor of this dir').to.have.length(1);
    const pid = pids[0]!;
    process.kill(pid, 'SIGSTOP');
    try {
      // Raw connects: the kernel queues them or refuses them with EAGAIN, the supervisor's backlog decides.
      const codes = await Promise.all(Array.from({ length: 600 }, () => probe(sock)));
      expect(
        codes.filter((c) => c !== undefined),
        'connects refused while it was stopped',
      ).to.deep.equal([]);
      const answers = Promise.all(Array.from({ length: 600 }, () => executorRequest(sock, { op: 'ping' }, { timeoutMs: 15_000 })));
      process.kill(pid, 'SIGCONT');
      const all = await answers;
      expect(all.filter((a) => a.ok).length).to.equal(600);
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {}
      await dismissSupervisor(o);
    }
    expect(supervisorSocketPath(dir)).to.equal(sock);
  });
});
