import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliProcess, runCli, runMain, stopCliProcesses } from '../support/cli.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

/** Processes whose command line mentions `dir` (a task or an executor of a run under it). */
function processesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cwd = (() => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8');
        } catch {
          return '';
        }
      })();
      if (cmd.includes(dir) || cwd.includes(`TMPDIR=${dir}\0`)) out.push(`${pid}: ${cmd}`);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

const mountsUnder = (dir: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(dir));

/** A one-task allocation running `script` under /bin/sh. */
function shAlloc(type: 'batch' | 'service', script: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    job: {
      id: 'spec',
      type,
      taskGroups: [
        {
          name: 'g',
          restartPolicy: { attempts: 0, intervalMs: 60000, delayMs: 0, mode: 'fail' },
          tasks: [{ name: 'work', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, ...extra }],
        },
      ],
    },
    taskGroup: 'g',
  });
}

/** Asserts a finished CLI left nothing: temp dir empty, no process, no mount. */
function expectClean(p: CliProcess, left: string[]): void {
  expect(left, 'temp files left').to.deep.equal([]);
  expect(processesUnder(p.tmp), 'processes left').to.deep.equal([]);
  expect(mountsUnder(p.tmp), 'mounts left').to.deep.equal([]);
}

describe('berth run (a real child process)', function () {
  this.timeout(60_000);
  afterEach(stopCliProcesses);

  it('runs examples/hello.json from another directory: the task output with its prefix, exit 0, nothing left', async () => {
    const r = await runCli(['run', join(EXAMPLES, 'hello.json')], { cwd: '/' });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^hello \| hello from hello$/m);
    expect(r.stdout).to.match(/hello: Started — Task started by client/);
    expect(r.stdout).to.match(/allocation [0-9a-f-]{36}: complete \(exit 0\)/);
    expect(r.leftovers).to.deep.equal([]);
  });

  it("exits with a single-task batch alloc's own exit code (3), stdout and stderr both shown, read from stdin", async () => {
    const p = new CliProcess(['run', '-'], { input: shAlloc('batch', 'echo out-line; echo err-line >&2; exit 3') });
    const r = await p.exited;
    expect(r.code, r.stderr).to.equal(3);
    expect(r.stdout).to.match(/^work \| out-line$/m);
    expect(r.stderr).to.match(/^work \| err-line$/m);
    expect(r.stdout).to.match(/: failed \(exit 3\)/);
    expectClean(p, p.leftovers());
  });

  it('a batch task a signal killed exits 128 + the signal (137 for SIGKILL), as a shell reports it', async () => {
    const p = new CliProcess(['run', '-'], { input: shAlloc('batch', 'echo dying; kill -9 $$') });
    const r = await p.exited;
    expect(r.code, r.stderr).to.equal(137);
    expect(r.stdout).to.match(/^work \| dying$/m);
    expectClean(p, p.leftovers());
  });

  it('exits 1 for a failed service alloc and 0 for a multi-task batch that completes; --quiet shows only task output', async () => {
    const failed = await runCli(['run', '--quiet', '-'], { input: shAlloc('service', 'echo bye; exit 4') });
    expect(failed.code, failed.stderr).to.equal(1);
    expect(failed.stdout.trim()).to.equal('work | bye');
    const multi = await runCli(['run', '--quiet', join(EXAMPLES, 'lifecycle.json')]);
    expect(multi.code, multi.stderr).to.equal(0);
    const lines = multi.stdout.trim().split('\n');
    expect(
      lines.every((l) => /^\w+ +\| /.test(l)),
      multi.stdout,
    ).to.equal(true);
    expect(lines).to.include('main     | main: read config ready');
    expect(lines.indexOf('init     | init: wrote the config')).to.be.lessThan(lines.indexOf('main     | main: read config ready'));
    expect(multi.leftovers).to.deep.equal([]);
  });

  it('--json prints one JSON object per line: events, output lines and the result', async () => {
    const r = await runCli(['run', '--json', join(EXAMPLES, 'hello.nomad.json')]);
    expect(r.code, r.stderr).to.equal(0);
    const objs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(objs.some((o) => o.type === 'task.event' && (o.event as { type: string }).type === 'Started')).to.equal(true);
    expect(objs.some((o) => o.type === 'alloc.state' && o.to === 'running')).to.equal(true);
    expect(objs.find((o) => o.type === 'log')).to.include({ task: 'hello', stream: 'stdout', line: 'hello from hello' });
    expect(objs[objs.length - 1]).to.include({ type: 'result', clientStatus: 'complete', exitCode: 0 });
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${sig} stops, kills and cleans up (executor, task, mounts, temp dir) and exits ${code}`, async () => {
      const p = new CliProcess(['run', join(EXAMPLES, 'service.json')]);
      await p.waitFor(/^ticker \| tick 0$/m);
      expect(processesUnder(p.tmp).length, 'task and executor running').to.be.greaterThan(0);
      p.child.kill(sig);
      const r = await p.exited;
      expect(r.code, r.stderr).to.equal(code);
      expect(r.stderr).to.include(`berth: ${sig}: stopping the allocation`);
      expect(r.stdout).to.match(new RegExp(`: complete, stopped by ${sig} \\(exit ${code}\\)`));
      expect(r.stdout).not.to.match(/: running/);
      expectClean(p, p.leftovers());
    });
  }

  it('a second signal kills a task that ignores its kill signal at once, and still cleans up', async () => {
    const p = new CliProcess(['run', '-'], { input: shAlloc('service', "trap '' INT; echo ready; while true; do sleep 0.1; done", { killTimeoutMs: 25000 }) });
    await p.waitFor(/^work \| ready$/m);
    p.child.kill('SIGINT');
    await p.waitFor(/Killing — Sent interrupt/);
    const t0 = Date.now();
    p.child.kill('SIGINT');
    const r = await p.exited;
    // Well inside the task's 25 s kill timeout: the second signal did not wait for it.
    expect(Date.now() - t0).to.be.lessThan(15_000);
    expect(r.code, r.stderr).to.equal(130);
    expect(r.stderr).to.include('SIGINT again: killing the tasks now');
    expectClean(p, p.leftovers());
  });

  it('--data-dir keeps state and logs: status and logs read them while the run is live and after it', async () => {
    const p = new CliProcess(['run', '--data-dir', 'data', join(EXAMPLES, 'service.json')]);
    const dataDir = join(p.tmp, 'data');
    await p.waitFor(/^ticker \| tick 1$/m);
    // live: the list, one alloc, its logs
    const list = await runMain(['status', '--data-dir', dataDir]);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.match(/^[0-9a-f]{8} +ticker +main +run +running .*ticker:running$/m);
    const id = list.stdout.split('\n')[1]!.slice(0, 8);
    const logs = await runMain(['logs', '--data-dir', dataDir, id, 'ticker']);
    expect(logs.stdout).to.match(/^tick 0\ntick 1\n/);
    const follower = new CliProcess(['logs', '-f', '--tail', '1', '--data-dir', dataDir, id, 'ticker']);
    await follower.waitFor(/tick \d+\n(.|\n)*tick \d+\n/); // the tail line, then one written later
    follower.child.kill('SIGINT');
    expect((await follower.exited).code).to.equal(0);
    follower.leftovers();
    p.child.kill('SIGTERM');
    const r = await p.exited;
    expect(r.code, r.stderr).to.equal(143);
    // after: terminal, logs still there, no mount or process left
    const one = await runMain(['status', '--data-dir', dataDir, id]);
    expect(one.stdout).to.match(/^Client Status += complete$/m);
    expect(one.stdout).to.include('Task "ticker" is "dead"');
    expect(one.stdout).to.match(/Killing +Sent interrupt/);
    const json = JSON.parse((await runMain(['status', '--json', '--data-dir', dataDir])).stdout) as Array<{ id: string; clientStatus: string }>;
    expect(json).to.have.length(1);
    expect(json[0]!.clientStatus).to.equal('complete');
    const tail = await runMain(['logs', '--data-dir', dataDir, id, 'ticker', '--tail', '1']);
    expect(tail.stdout).to.match(/^tick \d+\n$/);
    expect((await runMain(['logs', '--data-dir', dataDir, id, 'ticker', '--stderr'])).stdout).to.equal('');
    const unknownTask = await runMain(['logs', '--data-dir', dataDir, id, 'nope']);
    expect(unknownTask.code).to.equal(2);
    expect(unknownTask.stderr).to.include('has no task "nope" (tasks: ticker)');
    expect((await runMain(['status', '--data-dir', dataDir, 'ffffffff'])).code).to.equal(1);
    expect(processesUnder(p.tmp)).to.deep.equal([]);
    expect(mountsUnder(p.tmp)).to.deep.equal([]);
    p.leftovers();
  });

  it('an alloc that was refused leaves no data dir and exits 2', async () => {
    const p = new CliProcess(['run', '--data-dir', 'data', '-'], { input: shAlloc('batch', 'true').replace('raw_exec', 'podman') });
    const r = await p.exited;
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /^berth: <stdin>: invalid allocation \(1 problem\):\n {2}driver "podman" is not supported by berth \(job\.taskGroups\[0\]\.tasks\[0\]\.driver\)/,
    );
    expectClean(p, p.leftovers());
  });

  it('--stats prints a usage line for the running task on its interval', async () => {
    const p = new CliProcess(['run', '--stats', '100ms', '-'], { input: shAlloc('batch', 'sleep 1') });
    const r = await p.exited;
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/work: cpu (\d+\.\d% \(|-).*, mem rss /);
    expectClean(p, p.leftovers());
  });
});
