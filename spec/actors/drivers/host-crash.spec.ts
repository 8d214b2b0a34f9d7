import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import type { TaskHandle } from '../../../actors/drivers/driver.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager } from '../../../actors/cgroups/manager.ts';
import { TaskNotStartedError } from '../../../model/errors.ts';
import { ABORT, alive, cleanup, logUntil, sandbox, sh, track, until } from './support/helpers.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');

describe('raw_exec: tasks outlive the host', function () {
  this.timeout(20_000);
  const hosts: number[] = [];
  afterEach(async () => {
    for (const pid of hosts.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await cleanup();
  });

  it('survives kill -9 of the host, keeps logging, and is recovered by another process', async () => {
    const sb = sandbox();
    const driver = createRawExecDriver();
    const config = sb.config(sh('i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.05; done'));
    const host = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'support', 'crash-host.ts'), JSON.stringify(config)], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    hosts.push(host.pid!);
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      host.stdout!.setEncoding('utf8');
      host.stdout!.on('data', (c: string) => {
        out += c;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      host.on('exit', (code) => reject(new Error(`host exited early (${code}): ${out}`)));
    });
    const handle = JSON.parse(line) as TaskHandle;
    track(driver, handle);
    const st = handle.state as ProcessHandleState;

    // Crash the host.
    const exited = new Promise((r) => host.once('exit', r));
    host.kill('SIGKILL');
    await exited;
    host.stdout!.destroy();

    expect(alive(handle.pid!)).to.equal(true);
    expect(alive(st.executorPid)).to.equal(true);
    // Still logging after the crash: wait for three more ticks than we had.
    const file = path.join(sb.logsDir, 'web.stdout.0');
    const had = (fs.readFileSync(file, 'utf8').match(/tick/g) ?? []).length;
    await logUntil(sb.logsDir, 'web', 'stdout', (t) => (t.match(/tick/g) ?? []).length >= had + 3);
    expect(fs.statSync(file).size).to.be.greaterThan(0);

    // A new "client" in this process reattaches and stops it.
    await driver.recover(handle);
    const waiting = driver.wait(handle, ABORT());
    await driver.stop(handle, 1000, 'SIGINT');
    expect(await waiting).to.deep.equal({ exitCode: 130, signal: 2 });
    await until(() => !alive(st.executorPid), 2000, 'executor exit');
    expect(alive(handle.pid!)).to.equal(false);
  });

  it('a host that dies while a task cgroup is being made leaves a record its restore removes the cgroup by (root)', async function () {
    if (process.geteuid?.() !== 0) return this.skip(); // cgroups need root
    const detected = detectCgroups();
    if (!detected.ok) return this.skip();
    const sb = sandbox();
    const allocId = `die-${process.pid}-${Date.now()}`;
    const config = sb.config(sh('sleep 30'), { allocId, id: `${allocId}/web/1` });
    const host = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'support', 'die-making-cgroup.ts'), JSON.stringify(config)], {
      cwd: repo,
      stdio: 'ignore',
    });
    const signal = await new Promise<NodeJS.Signals | null>((r) => host.once('exit', (_code, sig) => r(sig)));
    expect(signal, 'the host died by SIGKILL in the middle of making the cgroup').to.equal('SIGKILL');
    const allocCgroups = () =>
      Object.values(detected.layout.parents)
        .map((p) => path.join(p, allocId))
        .filter((d) => fs.existsSync(d));
    expect(allocCgroups(), 'the first hierarchy was made before the host died').to.have.length(1);

    // The restore: the start was on record as intent; nothing was started, and the cgroup goes.
    const driver = createRawExecDriver({ cgroups: createCgroupManager(detected.layout) });
    const intent: TaskHandle = { driver: 'raw_exec', id: config.id, config, startedAt: Date.now(), state: {}, starting: true };
    const err = await driver.recover(intent).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(TaskNotStartedError);
    expect(allocCgroups(), 'cgroups left after the restore').to.deep.equal([]);
  });
});
