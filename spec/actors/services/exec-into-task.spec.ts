import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';
import { TaskNotRunningError, TaskNotFoundError, TimeoutError } from '../../../model/errors.ts';
import type { AllocRunner } from '../../../actors/client/types.ts';
import { ExecError } from '../../../actors/drivers/exec-process.ts';

const running = (r: AllocRunner) => r.alloc().taskStates?.main?.state === 'running';

describe('runner.exec: a command inside a running task', function () {
  this.timeout(60_000);
  const newClient = useTempClients();

  it('raw_exec: runs in the task dir with the task env, streams output, gives the exit code, feeds stdin', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] } }]));
    await viewWhere(client, r, () => running(r));
    const chunks: string[] = [];
    const res = await r.exec('main', ['/bin/sh', '-c', 'pwd; echo "$NOMAD_TASK_NAME"; cat; echo oops >&2; exit 3'], {
      stdin: Buffer.from('from stdin\n'),
      onOutput: (s, c) => void chunks.push(`${s}:${c.toString()}`),
    });
    expect(res.exitCode).to.equal(3);
    expect(res.stdout.toString()).to.equal(`${r.allocDir.dir}/main\nmain\nfrom stdin\n`);
    expect(res.stderr.toString()).to.equal('oops\n');
    expect(chunks.join('')).to.include('stdout:').and.to.include('stderr:oops');
  });

  it('joins the task cgroup, when the task has one', async function () {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] } }]));
    await viewWhere(client, r, () => running(r));
    const mine = (await r.exec('main', ['/bin/cat', '/proc/self/cgroup'])).stdout.toString();
    const task = readFileSync(`/proc/${taskPid(r)}/cgroup`, 'utf8');
    if (!/main/.test(task)) this.skip(); // no task cgroup on this host
    expect(mine).to.equal(task);
  });

  it('cancels promptly: an abort kills the command and rejects with the reason; a timeout rejects with TimeoutError', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] } }]));
    await viewWhere(client, r, () => running(r));
    const ctl = new AbortController();
    const started = r.exec('main', ['/bin/sh', '-c', 'echo up; exec sleep 30'], { signal: ctl.signal, onOutput: () => ctl.abort(new Error('user left')) });
    expect((await rejection(started))?.message).to.equal('user left');
    expect(await rejection(r.exec('main', ['/bin/sleep', '30'], { timeoutMs: 50 }))).to.be.instanceOf(TimeoutError);
    expect(await rejection(r.exec('nope', ['/bin/true']))).to.be.instanceOf(TaskNotFoundError);
  });

  it('keeps bounded copies of the output while streaming all of it', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] } }]));
    await viewWhere(client, r, () => running(r));
    let streamed = 0;
    const res = await r.exec('main', ['/bin/sh', '-c', 'head -c 3000000 /dev/zero'], { onOutput: (_s, c) => void (streamed += c.length) });
    expect(streamed).to.equal(3_000_000);
    expect(res.stdout.length).to.equal(1024 * 1024);
  });

  it('a tty is refused by name (no terminal is allocated)', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] } }]));
    await viewWhere(client, r, () => running(r));
    // The public options have no tty; the agent's endpoint passes Nomad's `tty` through to the driver.
    const e = await rejection(r.exec('main', ['/bin/sh'], { tty: true } as Parameters<AllocRunner['exec']>[2]));
    expect(e).to.be.instanceOf(ExecError);
    expect((e as Error).message).to.match(/a tty is not supported by berth; run without one/);
  });

  it('a task that is not running: TaskNotRunningError', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/true' } }], { jobType: 'batch' }));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(await rejection(r.exec('main', ['/bin/true']))).to.be.instanceOf(TaskNotRunningError);
  });

  describe('exec driver (root)', () => {
    before(function () {
      if (process.geteuid?.() !== 0) this.skip(); // chroot, namespaces and setuid need root
    });

    it('runs inside the chroot, the PID namespace and as the task user', async () => {
      const client = newClient();
      const r = client.addAlloc(makeAlloc([{ name: 'main', driver: 'exec', config: { command: '/bin/sleep', args: ['30'] } }]));
      await viewWhere(client, r, () => running(r));
      const res = await r.exec('main', [
        '/bin/sh',
        '-c',
        'id -u; pwd; test -d /local && echo has-local; test -e /proc/1/cmdline && tr "\\0" " " < /proc/1/cmdline; echo; echo "$NOMAD_TASK_DIR"',
      ]);
      const lines = res.stdout.toString().split('\n');
      expect(res.exitCode, res.stderr.toString()).to.equal(0);
      expect(lines[0]).to.equal('65534');
      expect(lines[1]).to.equal('/');
      expect(lines[2]).to.equal('has-local');
      const isolation = r.alloc().taskStates!.main!.events.find((e) => e.type === 'Driver')?.details.driver_message;
      // With its own PID namespace the task is PID 1 there: the exec sees it, not the host's init.
      if (isolation === 'chroot+pid+mount') expect(lines[3]).to.match(/^\/bin\/sleep 30/);
      expect(lines[4]).to.equal('/local');
    });
  });
});

async function rejection(p: Promise<unknown>): Promise<Error | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e as Error;
  }
}

function taskPid(r: AllocRunner): number {
  const snap = (
    r as unknown as { actor: { getSnapshot(): { children: Record<string, { getSnapshot(): { context: { handle?: { pid?: number } } } }> } } }
  ).actor.getSnapshot();
  for (const child of Object.values(snap.children)) {
    const pid = child.getSnapshot().context?.handle?.pid;
    if (pid) return pid;
  }
  return 0;
}
