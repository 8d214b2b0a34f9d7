/**
 * Exec back-pressure (issue 33, finding 3), without timing: a client that stops reading leaves
 * the command blocked in write(2) with its output counter (`/proc/<pid>/io` wchar) standing still
 * while the agent keeps answering; a command that never reads its stdin leaves the client's sends
 * unwritten (the agent stopped reading the socket) instead of piling up in the agent. Reading
 * again lets the whole output through.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { AgentProcess, pidsWith, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { until } from '../support/migrate-helpers.ts';
import { EXEC_OUTPUT_HIGH_WATER, EXEC_STDIN_HIGH_WATER } from '../../agent/http/exec-route.ts';

/** The pid of the one process named `comm` whose command line holds `marker`. */
function pidOf(comm: string, marker: string): number | undefined {
  return pidsWith(marker).find((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
    } catch {
      return false;
    }
  });
}

const wchar = (pid: number) => Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
const wchan = (pid: number) => readFileSync(`/proc/${pid}/wchan`, 'utf8');
const gone = (pid: number) => {
  try {
    return /^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

describe('agent: exec back-pressure', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  let base = '';
  const sockets: WebSocket[] = [];

  before(async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', {
      Job: {
        ID: 'bp',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Config: { command: '/bin/sh', args: ['-c', "trap 'exit 0' TERM; while :; do sleep 0.2; done"] },
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    });
    const [alloc] = await waitFor(agent, '/v1/job/bp/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'running');
    base = `${agent.url.replace(/^http/, 'ws')}/v1/client/allocation/${alloc.ID}/exec?task=t&command=`;
  });
  afterEach(() => {
    for (const ws of sockets.splice(0)) ws.terminate();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  /** Resolves once `read()` gave the same value on three agent round trips in a row (the agent's loop ran meanwhile). */
  async function settles(read: () => number): Promise<number> {
    let last = -1;
    let same = 0;
    await until(
      async () => {
        const v = read();
        await agent.req('GET', '/v1/agent/self');
        same = v === last ? same + 1 : 0;
        last = v;
        return same >= 3;
      },
      60_000,
      'a value that stops changing',
    );
    return last;
  }

  it('a stalled reader blocks the command in write(2); reading again lets all its output through', async () => {
    const total = 20 * 1024 * 1024 + 7;
    const ws = new WebSocket(base + encodeURIComponent(JSON.stringify(['/bin/sh', '-c', `exec head -c ${total} /dev/zero`])));
    sockets.push(ws);
    let got = 0;
    let exit: number | undefined;
    ws.on('message', (m) => {
      const f = JSON.parse(String(m));
      if (f.stdout) got += Buffer.from(f.stdout.data, 'base64').length;
      if (f.exited) exit = f.result.exit_code;
    });
    await new Promise((r) => ws.once('open', r));
    ws.pause(); // the client stops reading its socket

    let pid: number | undefined;
    await until(() => (pid = pidOf('head', String(total))) !== undefined, 30_000, 'the command to start');
    const written = await settles(() => wchar(pid!));
    expect(gone(pid!), 'the command ran to its end: nothing held it back').to.equal(false);
    // blocked writing its output: a pipe, or the socket the executor hands it
    expect(wchan(pid!)).to.match(/pipe_write|pipe_wait|sock_alloc_send|unix_stream|wait_woken/);
    // What the command wrote is in the pipe, the two sockets' kernel buffers and at most the
    // agent's bound: far below what it would write.
    expect(written).to.be.below(EXEC_OUTPUT_HIGH_WATER + 16 * 1024 * 1024);
    expect(written).to.be.below(total);

    ws.resume();
    await new Promise((r) => ws.once('close', r));
    expect(exit).to.equal(0);
    expect(got).to.equal(total);
  });

  it('a client that leaves while the command is paused kills it', async () => {
    const ws = new WebSocket(base + encodeURIComponent(JSON.stringify(['/bin/sh', '-c', 'exec head -c 209715231 /dev/zero'])));
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
    ws.pause();
    let pid: number | undefined;
    await until(() => (pid = pidOf('head', '209715231')) !== undefined, 30_000, 'the command to start');
    await settles(() => wchar(pid!));
    ws.terminate();
    await until(() => gone(pid!), 30_000, 'the paused command to be killed');
  });

  it('stdin for a command that never reads stays in the client: the agent stops reading the socket', async () => {
    const ws = new WebSocket(base + encodeURIComponent(JSON.stringify(['/bin/sleep', '1000.25'])));
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
    let pid: number | undefined;
    await until(() => (pid = pidOf('sleep', '1000.25')) !== undefined, 30_000, 'the command to start');
    const chunk = JSON.stringify({ stdin: { data: Buffer.alloc(512 * 1024, 0x79).toString('base64') } });
    const frames = 64; // 32 MiB of stdin
    let taken = 0; // bytes the client's socket handed to the kernel
    for (let i = 0; i < frames; i++) ws.send(chunk, () => (taken += 512 * 1024));
    const settled = await settles(() => taken);
    expect(settled, 'the agent read every frame: nothing held the client back').to.be.below(frames * 512 * 1024);
    expect(settled).to.be.below(EXEC_STDIN_HIGH_WATER + 24 * 1024 * 1024);
    expect(gone(pid!)).to.equal(false);
    // The command is ended with the session: the agent's close ends every exec session (after()).
    ws.terminate();
  });
});
