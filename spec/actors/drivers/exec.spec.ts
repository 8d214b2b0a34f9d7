import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { createExecDriver } from '../../../actors/drivers/exec.ts';
import { buildTaskEnv } from '../../../actors/drivers/env.ts';
import type { TaskConfig } from '../../../actors/drivers/driver.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { DriverStartError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';
import { ABORT, alive, buildMiniChroot, cleanup, logUntil, sandbox, sh, startTracked, until } from './support/helpers.ts';

const isRoot = process.getuid?.() === 0;
const stateOf = (h: { state: Record<string, unknown> }) => h.state as ProcessHandleState;
const BINARIES = ['/bin/sh', '/usr/bin/id', '/bin/ls', '/bin/sleep', '/bin/cat'].filter((b) => fs.existsSync(b));

const alloc: Allocation = {
  id: '7d3f1a2b-0c4e-4f5a-8b6c-9d0e1f2a3b4c',
  nodeId: 'n1',
  jobId: 'batch',
  taskGroup: 'g',
  job: { id: 'batch', type: 'batch', taskGroups: [] },
  desiredStatus: 'run',
  clientStatus: 'pending',
  allocModifyIndex: 1,
};

/** A sandbox whose task dir is a minimal chroot, plus a host-only marker dir. */
function chrootSandbox() {
  const sb = sandbox('web');
  const marker = path.join(sb.base, 'host-only-marker');
  fs.mkdirSync(marker);
  const config = (script: string, extra: Partial<TaskConfig> = {}): TaskConfig => {
    const base = sb.config({ driver: 'exec', ...sh(script) }, extra);
    buildMiniChroot(base.taskDir.dir, BINARIES);
    const env = buildTaskEnv({ alloc, task: base.task, taskDir: base.taskDir, allocDir: base.allocDir, fsIsolation: 'chroot' });
    return { ...base, env: { ...env, PATH: '/usr/bin:/bin' }, ...extra };
  };
  return { ...sb, marker, config };
}

/** Processes whose root directory is `root` (i.e. running inside that chroot). */
function processesIn(root: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readlinkSync(`/proc/${name}/root`) === root && alive(Number(name))) out.push(Number(name));
    } catch {}
  }
  return out;
}

describe('exec driver', function () {
  afterEach(cleanup);

  it('capabilities: chroot isolation', () => {
    const d = createExecDriver();
    expect(d.name).to.equal('exec');
    expect(d.capabilities).to.deep.equal({ fsIsolation: 'chroot', sendSignals: true, exec: true });
    expect(() => d.validateConfig({ name: 't', driver: 'exec', config: { args: [] } })).to.throw(/command/);
  });

  it('without root, start fails with a clear DriverStartError', async () => {
    const d = createExecDriver({ isRoot: () => false });
    const err = await d.start(sandbox().config({ driver: 'exec', ...sh('exit 0') }), ABORT()).catch((e) => e);
    expect(err).to.be.instanceOf(DriverStartError);
    expect(err.message).to.match(/exec driver requires root/);
    expect(err.recoverable).to.equal(false);
  });

  describe('as root', function () {
    before(function () {
      if (!isRoot) this.skip();
    });

    it('runs inside the chroot as nobody, in its own PID and mount namespaces', async () => {
      const sb = chrootSandbox();
      const driver = createExecDriver();
      const cfg = sb.config(
        [
          'id -u',
          'echo "pid=$$ cwd=$(pwd) task_dir=$NOMAD_TASK_DIR"',
          'ls /',
          `test -e ${sb.marker} && echo marker-visible || echo marker-hidden`,
          `test -e ${sb.base} && echo allocdir-visible || echo allocdir-hidden`,
          'ls /proc | grep -c "^[0-9]" >/dev/null 2>&1; cat /proc/self/status > /dev/null && echo proc-ok',
        ].join('; '),
      );
      const h = await startTracked(driver, cfg);
      expect(stateOf(h).isolation).to.equal('chroot+pid+mount');
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
      const out = fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8').split('\n');
      expect(out[0]).to.equal('65534');
      expect(out[1]).to.equal('pid=1 cwd=/ task_dir=/local');
      expect(out).to.include('marker-hidden');
      expect(out).to.include('allocdir-hidden');
      expect(out).to.include('proc-ok');
      expect(out).not.to.include('marker-visible');
      // The namespace's mounts vanished with it.
      expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.to.include(cfg.taskDir.dir);
    });

    it('a command missing from the chroot is a DriverStartError, even if the host has it', async () => {
      const sb = chrootSandbox();
      const cfg = sb.config('exit 0');
      const host = ['/usr/bin/env', '/usr/bin/tr'].find((b) => fs.existsSync(b) && !BINARIES.includes(b))!;
      const err = await createExecDriver()
        .start({ ...cfg, task: { ...cfg.task, config: { command: host } } }, ABORT())
        .catch((e) => e);
      expect(err).to.be.instanceOf(DriverStartError);
      expect(err.message).to.equal(`failed to launch command with executor: fork/exec ${host}: no such file or directory`);
      const err2 = await createExecDriver()
        .start({ ...cfg, task: { ...cfg.task, config: { command: 'tr' } } }, ABORT())
        .catch((e) => e);
      expect(err2.message).to.match(/"tr": executable file not found in \$PATH/);
    });

    it('an unknown user is a DriverStartError', async () => {
      const sb = chrootSandbox();
      const err = await createExecDriver()
        .start(sb.config('exit 0', { user: 'no-such-user-xyz' }), ABORT())
        .catch((e) => e);
      expect(err).to.be.instanceOf(DriverStartError);
      expect(err.message).to.match(/unknown user no-such-user-xyz/);
    });

    it('stop kills everything in the namespace (SIGINT handled, then escalation)', async () => {
      const sb = chrootSandbox();
      const driver = createExecDriver();
      const cfg = sb.config('sleep 1000 & sleep 1000 & trap "echo got-int" INT; echo ready; while :; do sleep 1; done');
      const h = await startTracked(driver, cfg);
      await logUntil(sb.logsDir, 'web', 'stdout', (t) => t.includes('ready'));
      expect(processesIn(cfg.taskDir.dir).length).to.be.at.least(3);
      await driver.stop(h, 200, 'SIGINT');
      const res = await driver.wait(h, ABORT());
      expect(res.signal).to.equal(9);
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.include('got-int');
      await until(() => processesIn(cfg.taskDir.dir).length === 0, 1000, 'chrooted processes gone');
      expect(alive(h.pid!)).to.equal(false);
    });

    it('exit code and natural exit kill leftovers in the namespace', async () => {
      const sb = chrootSandbox();
      const driver = createExecDriver();
      const cfg = sb.config('sleep 1000 & exit 6');
      const h = await startTracked(driver, cfg);
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 6, signal: 0 });
      await until(() => processesIn(cfg.taskDir.dir).length === 0, 1000, 'chrooted processes gone');
    });

    it('falls back to a plain chroot without namespaces, and says so', async () => {
      const sb = chrootSandbox();
      const driver = createExecDriver({ namespaces: 'never' });
      const h = await startTracked(driver, sb.config('id -u; pwd'));
      expect(stateOf(h).isolation).to.equal('chroot');
      expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
      expect(fs.readFileSync(path.join(sb.logsDir, 'web.stdout.0'), 'utf8')).to.equal('65534\n/\n');
    });
  });
});
