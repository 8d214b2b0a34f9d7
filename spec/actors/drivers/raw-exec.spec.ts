import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import { readTaskLogs } from '../../../actors/drivers/logs/reader.ts';
import { buildTaskEnv } from '../../../actors/drivers/env.ts';
import { TaskRecoveryError, type ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { supervisorSocketPath } from '../../../actors/drivers/executor/client.ts';
import { DriverConfigError, DriverStartError, TaskNotRunningError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';
import { ABORT, alive, cleanup, logUntil, sandbox, sh, startTracked, until } from './support/helpers.ts';
import { writeFifo } from '../../support/fifo.ts';

// The suite's own supervisor dir: a run that kills shims on purpose leaves the supervisor's log there.
const supervisorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-sup-'));
const driver = createRawExecDriver({ supervisorDir });
const stateOf = (h: { state: Record<string, unknown> }) => h.state as ProcessHandleState;

describe('raw_exec driver', () => {
  after(() => fs.rmSync(supervisorDir, { recursive: true, force: true }));
  afterEach(cleanup);

  describe('validateConfig', () => {
    it('requires a command string', () => {
      expect(() => driver.validateConfig({ name: 't', driver: 'raw_exec', config: {} })).to.throw(DriverConfigError, /command/);
      expect(() => driver.validateConfig({ name: 't', driver: 'raw_exec', config: { command: 3 } })).to.throw(DriverConfigError);
    });
    it('requires args to be a list of strings and rejects unknown options', () => {
      expect(() => driver.validateConfig({ name: 't', driver: 'raw_exec', config: { command: 'x', args: 'a b' } })).to.throw(DriverConfigError, /args/);
      expect(() => driver.validateConfig({ name: 't', driver: 'raw_exec', config: { command: 'x', arg: ['a'] } })).to.throw(DriverConfigError, /"arg"/);
      driver.validateConfig({ name: 't', driver: 'raw_exec', config: { command: 'x', args: ['a', 'b'] } });
    });
    it('capabilities: no fs isolation, signals', () => {
      expect(driver.name).to.equal('raw_exec');
      expect(driver.capabilities).to.deep.equal({ fsIsolation: 'none', sendSignals: true, exec: true });
    });
  });

  describe('start and wait', () => {
    it('runs the command in the task dir and reports its exit code', async () => {
      const sb = sandbox();
      const cfg = sb.config(sh('pwd; exit 3'));
      const h = await startTracked(driver, cfg);
      expect(h.driver).to.equal('raw_exec');
      expect(h.pid).to.be.a('number');
      expect(stateOf(h).isolation).to.equal('none');
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 3, signal: 0 });
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.equal(`${cfg.taskDir.dir}\n`);
    });

    it('reports the signal that killed the task (exit code 128 + n, as Nomad does)', async () => {
      const h = await startTracked(driver, sandbox().config(sh('kill -TERM $$; sleep 5')));
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 143, signal: 15 });
    });

    it('a plain exit with code 128 + n is read as killed by signal n: the shim cannot tell the two apart', async () => {
      const h = await startTracked(driver, sandbox().config(sh('exit 130')));
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 130, signal: 2 });
    });

    it('passes the task environment (NOMAD_* and the task env)', async () => {
      const sb = sandbox();
      const alloc: Allocation = {
        id: '0f2c6b1e-5d4a-4c1b-9a7e-3b2d1c0e9f8a',
        nodeId: 'n1',
        jobId: 'example',
        taskGroup: 'cache',
        job: { id: 'example', type: 'service', taskGroups: [] },
        desiredStatus: 'run',
        clientStatus: 'pending',
        allocModifyIndex: 1,
      };
      const base = sb.config(sh('echo "$GREETING|$NOMAD_TASK_NAME|$NOMAD_ALLOC_NAME|$NOMAD_TASK_DIR|$PATH"', { env: { GREETING: 'hi ${NOMAD_TASK_NAME}' } }));
      const env = buildTaskEnv({
        alloc,
        task: base.task,
        taskDir: base.taskDir,
        allocDir: base.allocDir,
        hostEnv: { PATH: '/usr/bin:/bin', VAULT_TOKEN: 's3cret' },
      });
      const h = await startTracked(driver, { ...base, env });
      await driver.wait(h, ABORT());
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.equal(`hi web|web|example.cache[0]|${base.taskDir.localDir}|/usr/bin:/bin\n`);
    });

    it('resolves the command against the PATH of the task env, and the task dir local/', async () => {
      const sb = sandbox();
      const cfg = sb.config({ config: { command: 'hello-tool', args: ['x'] } });
      const bin = path.join(sb.base, 'mybin');
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, 'hello-tool'), '#!/bin/sh\necho "from PATH $1"\n', { mode: 0o755 });
      const h = await startTracked(driver, { ...cfg, env: { PATH: `${bin}:/usr/bin:/bin` } });
      await driver.wait(h, ABORT());
      fs.writeFileSync(path.join(cfg.taskDir.localDir, 'hello-tool'), '#!/bin/sh\necho "from local $1"\n', { mode: 0o755 });
      const h2 = await startTracked(driver, { ...sb.config({ config: { command: 'hello-tool', args: ['y'] } }), env: { PATH: `${bin}:/usr/bin:/bin` } });
      await driver.wait(h2, ABORT());
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.equal('from PATH x\nfrom local y\n');
    });

    it('a missing binary is a DriverStartError with the OS reason, before start resolves', async () => {
      const sb = sandbox();
      const err = await driver.start(sb.config({ config: { command: '/no/such' } }), ABORT()).catch((e) => e);
      expect(err).to.be.instanceOf(DriverStartError);
      expect(err.message).to.equal('failed to launch command with executor: fork/exec /no/such: no such file or directory');
      expect(err.recoverable).to.equal(false);
      const err2 = await driver.start(sb.config({ config: { command: 'no-such-command-here' } }), ABORT()).catch((e) => e);
      expect(err2).to.be.instanceOf(DriverStartError);
      expect(err2.message).to.match(/executable file not found in \$PATH/);
    });

    it('a file that is not executable is a DriverStartError (permission denied)', async () => {
      const sb = sandbox();
      const file = path.join(sb.base, 'not-exec.sh');
      fs.writeFileSync(file, '#!/bin/sh\necho hi\n', { mode: 0o644 });
      const err = await driver.start(sb.config({ config: { command: file } }), ABORT()).catch((e) => e);
      expect(err).to.be.instanceOf(DriverStartError);
      expect(err.message).to.equal(`failed to launch command with executor: fork/exec ${file}: permission denied`);
    });

    it('an already-aborted start rejects with the reason', async () => {
      const ac = new AbortController();
      ac.abort(new Error('nope'));
      const err = await driver.start(sandbox().config(sh('exit 0')), ac.signal).catch((e) => e);
      expect(err.message).to.equal('nope');
    });

    it('wait with an aborted signal rejects with signal.reason and leaves no socket open', async () => {
      const h = await startTracked(driver, sandbox().config(sh('sleep 30')));
      const before = handles();
      const ac = new AbortController();
      const p = driver.wait(h, ac.signal);
      await until(() => handles().length > before.length, 3000, 'the wait to connect to its executor');
      ac.abort(new Error('gave up'));
      const err = await p.catch((e) => e);
      expect(err.message).to.equal('gave up');
      await new Promise((r) => setImmediate(r));
      expect(handles()).to.deep.equal(before);
      await driver.stop(h, 0, 'SIGKILL');
    });
  });

  describe('stop, signal and process groups', () => {
    it('stop sends the kill signal (SIGINT) and the task can honour it', async () => {
      const sb = sandbox();
      const h = await startTracked(driver, sb.config(sh('trap "echo bye; exit 42" INT; echo ready; while :; do sleep 0.01; done')));
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('ready'));
      await driver.stop(h, 5000, 'SIGINT');
      // Exit 42 is the trap's: SIGINT was honoured, not waited out into a SIGKILL.
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 42, signal: 0 });
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.equal('ready\nbye\n');
    });

    it('a task that ignores the kill signal is SIGKILLed after the timeout', async () => {
      const sb = sandbox();
      const h = await startTracked(driver, sb.config(sh('trap "" INT TERM; echo ready; while :; do sleep 0.01; done')));
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('ready'));
      const t0 = Date.now();
      await driver.stop(h, 200, 'SIGINT');
      const took = Date.now() - t0;
      expect(took).to.be.at.least(190);
      expect(took).to.be.lessThan(2000);
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 137, signal: 9 });
      expect(alive(h.pid!)).to.equal(false);
    });

    it('honours the stop signal given (SIGTERM) and a signal sent with signal()', async () => {
      const sb = sandbox();
      const h = await startTracked(driver, sb.config(sh('trap "echo usr1" USR1; trap "exit 9" TERM; echo ready; while :; do sleep 0.01; done')));
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('ready'));
      await driver.signal(h, 'SIGUSR1');
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('usr1'));
      await driver.stop(h, 5000, 'SIGTERM');
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 9, signal: 0 });
      const err = await driver.signal(h, 'SIGUSR1').catch((e) => e);
      expect(err).to.be.instanceOf(TaskNotRunningError);
    });

    it('stopping a task that already exited is not an error', async () => {
      const h = await startTracked(driver, sandbox().config(sh('exit 0')));
      await driver.wait(h, ABORT());
      await driver.stop(h, 100, 'SIGINT');
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
    });

    it('leaves no grandchild behind after stop', async () => {
      const sb = sandbox();
      const pids = path.join(sb.base, 'pids');
      const h = await startTracked(driver, sb.config(sh(`sleep 1000 & echo $! > ${pids}; (sleep 1000 &) ; echo ready; wait`)));
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('ready'));
      const grandchild = Number(fs.readFileSync(pids, 'utf8'));
      expect(alive(grandchild)).to.equal(true);
      await driver.stop(h, 200, 'SIGTERM');
      await until(() => !alive(grandchild), 1000, 'grandchild gone');
      // The double-forked one dies by the same group kill; on a loaded machine it is reaped a moment later.
      await until(() => groupMembers(h.pid!).length === 0, 1000, 'the process group empty').catch(() => {});
      expect(groupMembers(h.pid!)).to.deep.equal([]);
    });

    it('leaves no grandchild behind after the task exits on its own', async () => {
      const sb = sandbox();
      const pids = path.join(sb.base, 'pids');
      const h = await startTracked(driver, sb.config(sh(`sleep 1000 & echo $! > ${pids}; exit 0`)));
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
      const grandchild = Number(fs.readFileSync(pids, 'utf8'));
      await until(() => !alive(grandchild), 1000, 'grandchild gone');
      expect(groupMembers(h.pid!)).to.deep.equal([]);
    });

    it('destroy refuses a running task unless forced', async () => {
      const h = await startTracked(driver, sandbox().config(sh('sleep 30')));
      const err = await driver.destroy(h, false).catch((e) => e);
      expect(err?.message).to.match(/still running/);
      await driver.destroy(h, true);
      expect(alive(h.pid!)).to.equal(false);
      expect(alive(stateOf(h).executorPid)).to.equal(false);
    });
  });

  describe('logs', () => {
    it('rotates stdout and stderr into <task>.<stream>.N and keeps at most maxFiles', async () => {
      const sb = sandbox();
      const cfg = sb.config(sh('i=0; while [ $i -lt 400 ]; do echo "line $i"; i=$((i+1)); done; echo oops >&2'), {
        logs: { maxFiles: 3, maxFileSizeMB: 0.001 },
      });
      const h = await startTracked(driver, cfg);
      await driver.wait(h, ABORT());
      const files = fs.readdirSync(sb.logsDir).sort();
      const stdout = files
        .filter((f) => f.startsWith('web.stdout.'))
        .map((f) => Number(f.split('.').pop()))
        .sort((a, b) => a - b);
      const total = Array.from({ length: 400 }, (_, i) => `line ${i}\n`).join('');
      const limit = Math.floor(0.001 * 1024 * 1024);
      const last = Math.ceil(total.length / limit) - 1;
      expect(stdout).to.deep.equal([last - 2, last - 1, last]);
      for (const i of stdout.slice(0, -1)) expect(fs.statSync(path.join(sb.logsDir, `web.stdout.${i}`)).size).to.equal(limit);
      const kept = stdout.map((i) => fs.readFileSync(path.join(sb.logsDir, `web.stdout.${i}`), 'utf8')).join('');
      expect(total.endsWith(kept)).to.equal(true);
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stderr.0'), 'utf8')).to.equal('oops\n');
    });

    it('a flooding task keeps the supervisor bounded and its logs intact', async () => {
      const sb = sandbox();
      // ~8 MB as fast as sh can write it, into 1 MB files.
      const cfg = sb.config(sh('head -c 8000000 /dev/zero | tr "\\0" x'), { logs: { maxFiles: 20, maxFileSizeMB: 1 } });
      const h = await startTracked(driver, cfg);
      let peak = 0;
      let samples = 0;
      const sample = () => {
        let status: string;
        try {
          status = fs.readFileSync(`/proc/${stateOf(h).supervisorPid}/status`, 'utf8');
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // the supervisor has left
          throw e;
        }
        const rss = /VmRSS:\s+(\d+)/.exec(status);
        if (!rss) return; // a zombie, about to be reaped
        peak = Math.max(peak, Number(rss[1]));
        samples++;
      };
      sample(); // at least once while it surely runs
      const timer = setInterval(sample, 5);
      await driver.wait(h, ABORT());
      clearInterval(timer);
      expect(samples, 'RSS samples read').to.be.greaterThan(0);
      expect(peak, 'a live supervisor has an RSS').to.be.greaterThan(1000);
      const sizes = fs
        .readdirSync(sb.logsDir)
        .filter((f) => f.startsWith('web.stdout.'))
        .map((f) => fs.statSync(path.join(sb.logsDir, f)).size);
      expect(sizes.reduce((a, b) => a + b, 0)).to.equal(8_000_000);
      expect(peak).to.be.lessThan(150_000); // kB: node's own ~50 MB plus bounded buffers
    });

    it('the reader reads across rotated files from an offset, and follows new data and files', async () => {
      const sb = sandbox();
      const cfg = sb.config(
        sh('echo ready; read x < ' + path.join(sb.base, 'go') + '; i=0; while [ $i -lt 30 ]; do echo "tick $i"; i=$((i+1)); sleep 0.005; done'),
        { logs: { maxFiles: 100, maxFileSizeMB: 0.0001 } },
      ); // 104-byte files
      const fifo = path.join(sb.base, 'go');
      await import('node:child_process').then(({ execFileSync }) => execFileSync('mkfifo', [fifo]));
      const h = await startTracked(driver, cfg);
      const ac = new AbortController();
      const chunks: string[] = [];
      const reading = (async () => {
        for await (const c of readTaskLogs(sb.logsDir, 'web', 'stdout', { follow: true, offset: 2, signal: ac.signal })) {
          chunks.push(c.toString());
          if (chunks.join('').includes('tick 29\n')) ac.abort();
        }
      })();
      await writeFifo(fifo, 'go\n');
      await reading;
      const expected = 'ready\n' + Array.from({ length: 30 }, (_, i) => `tick ${i}\n`).join('');
      expect(chunks.join('')).to.equal(expected.slice(2));
      await driver.wait(h, ABORT());
      expect(fs.readdirSync(sb.logsDir).filter((f) => f.startsWith('web.stdout.')).length).to.be.greaterThan(2);
      // Without follow: everything, then the end.
      let all = '';
      for await (const c of readTaskLogs(sb.logsDir, 'web', 'stdout')) all += c.toString();
      expect(all).to.equal(expected);
      let tail = '';
      for await (const c of readTaskLogs(sb.logsDir, 'web', 'stdout', { offset: expected.length - 8 })) tail += c.toString();
      expect(tail).to.equal('tick 29\n');
    });

    it('the reader ends promptly on abort while following, closing its watcher', async () => {
      const sb = sandbox();
      const before = handles().filter((r) => r !== 'Timeout'); // the reader sets no timers; mocha does
      const ac = new AbortController();
      const it = readTaskLogs(sb.logsDir, 'web', 'stdout', { follow: true, signal: ac.signal })[Symbol.asyncIterator]();
      const next = it.next();
      setTimeout(() => ac.abort(), 20);
      expect((await next).done).to.equal(true); // a reader that ignored the abort would hang here
      // uv handles finish closing on a later loop turn: wait for that, then compare.
      await until(() => handles().filter((r) => r !== 'Timeout').length <= before.length, 3000, 'the watcher to close');
      expect(handles().filter((r) => r !== 'Timeout')).to.deep.equal(before);
      expect(before).not.to.include('FSEventWrap');
    });
  });

  describe('recover', () => {
    it('reattaches to a running task through its executor', async () => {
      const h = await startTracked(driver, sandbox().config(sh('sleep 30')));
      const copy = JSON.parse(JSON.stringify(h));
      const other = createRawExecDriver({ supervisorDir });
      await other.recover(copy);
      await other.stop(copy, 1000, 'SIGINT');
      expect(await other.wait(copy, ABORT())).to.deep.equal({ exitCode: 130, signal: 2 });
    });

    it('after the executor left, wait returns the recorded exit', async () => {
      const h = await startTracked(driver, sandbox().config(sh('exit 4')));
      await driver.wait(h, ABORT());
      await until(() => !alive(stateOf(h).executorPid), 2000, 'executor exit');
      await driver.recover(h);
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 4, signal: 0 });
    });

    it('fails clearly when the executor is gone and the pid was reused', async () => {
      const sb = sandbox();
      const cfg = sb.config(sh('exit 0'));
      fs.mkdirSync(cfg.stateDir, { recursive: true });
      const h = {
        driver: 'raw_exec',
        id: cfg.id,
        config: cfg,
        startedAt: Date.now(),
        pid: process.pid,
        state: {
          executorPid: 999_999_0,
          executorStartTime: 1,
          pid: process.pid,
          pgid: process.pid,
          startTime: 12345,
          isolation: 'none',
          command: '/bin/sh',
          socketPath: path.join(cfg.stateDir, 'executor.sock'),
          stateDir: cfg.stateDir,
        },
      };
      const err = await driver.recover(h).catch((e) => e);
      expect(err).to.be.instanceOf(TaskRecoveryError);
      expect(err.message).to.match(/pid reused/);
      const gone = { ...h, state: { ...h.state, pid: 999_999_1, pgid: 999_999_1 } };
      const err2 = await driver.recover(gone).catch((e) => e);
      expect(err2.message).to.match(/are gone, and no exit status was recorded/);
    });
  });

  describe('executor loss', () => {
    it('a task whose executor died: recover and wait fail clearly, stop still kills its group', async () => {
      const sb = sandbox();
      const pids = path.join(sb.base, 'pids');
      const h = await startTracked(driver, sb.config(sh(`sleep 1000 & echo $! > ${pids}; wait`)));
      await until(() => fs.existsSync(pids) && fs.readFileSync(pids, 'utf8').endsWith('\n'), 2000, 'pid file');
      const grandchild = Number(fs.readFileSync(pids, 'utf8'));
      process.kill(stateOf(h).executorPid, 'SIGKILL');
      await until(() => !alive(stateOf(h).executorPid), 2000, 'executor gone');
      expect(alive(h.pid!)).to.equal(true);
      const err = await driver.recover(h).catch((e) => e);
      expect(err).to.be.instanceOf(TaskRecoveryError);
      expect(err.message).to.match(/runs on without log capture/);
      const err2 = await driver.wait(h, ABORT()).catch((e) => e);
      expect(err2.message).to.match(/can no longer be waited on/);
      await driver.stop(h, 200, 'SIGTERM');
      expect(alive(h.pid!)).to.equal(false);
      expect(alive(grandchild)).to.equal(false);
    });

    it('socket paths too long for sun_path fall back to a short path', () => {
      expect(supervisorSocketPath('/s')).to.equal('/s/supervisor.sock');
      const long = supervisorSocketPath('/' + 'x'.repeat(120));
      expect(long).to.match(/^\/tmp\/berth-[0-9a-f]{24}\.sock$/);
      expect(supervisorSocketPath('/' + 'x'.repeat(120))).to.equal(long);
    });
  });

  describe('resources', () => {
    it('a start/stop/destroy cycle leaves no socket, timer, child, shim or supervisor behind', async () => {
      const sb = sandbox();
      const warm = await startTracked(driver, sb.config(sh('exit 0'))); // load modules first
      await driver.wait(warm, ABORT());
      await driver.destroy(warm, false);
      const before = handles();
      const h = await driver.start(sb.config(sh('sleep 30')), ABORT());
      const ac = new AbortController();
      const w = driver.wait(h, ac.signal);
      await driver.stop(h, 200, 'SIGINT');
      await w;
      await driver.destroy(h, false);
      await new Promise((r) => setImmediate(r));
      expect(handles()).to.deep.equal(before);
      expect(alive(stateOf(h).executorPid)).to.equal(false);
      expect(alive(h.pid!)).to.equal(false);
      // The supervisor leaves once it holds no task, and takes its socket with it.
      await until(() => !fs.existsSync(stateOf(h).socketPath), 5000, 'the idle supervisor to leave');
    });
  });
});

/** The host's live handles and timers, ignoring in-flight fs requests (FSReqCallback, FileHandle reqs). */
function handles(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((r) => !/^FS(Req|Promise)|FileHandle/.test(r) || r === 'FSEventWrap')
    .sort();
}

/** Processes still in process group `pgid` (zombies excluded). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(name));
    } catch {}
  }
  return out;
}
