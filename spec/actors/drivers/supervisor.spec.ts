import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import type { TaskHandle } from '../../../actors/drivers/driver.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { ABORT, alive, cleanup, sandbox, sh, startTracked, until } from './support/helpers.ts';

const st = (h: TaskHandle) => h.state as ProcessHandleState;

describe('the task supervisor: a SIGKILL of it loses no task', function () {
  this.timeout(30_000);
  const supervisorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-sup-'));
  const driver = createRawExecDriver({ supervisorDir });
  afterEach(cleanup);
  after(() => fs.rmSync(supervisorDir, { recursive: true, force: true }));

  it('every exit is reported (while it was down too), output written meanwhile is kept, and nothing starts twice', async () => {
    const starts = sandbox('starts');
    const go = path.join(starts.base, 'go');
    // Each task counts its starts, then waits for the go file.
    const task = (name: string, rest: string) => {
      const sb = sandbox(name);
      const script = `echo started >> ${starts.base}/${name}.starts; while [ ! -e ${go} ]; do sleep 0.01; done; ${rest}`;
      return { sb, config: sb.config(sh(script)) };
    };
    const quick = task('quick', 'exit 3'); // exits while no supervisor runs
    const flood = task('flood', 'head -c 300000 /dev/zero | tr "\\0" x; exit 0'); // more than a pipe holds: blocks until read
    const slow = task('slow', 'sleep 30');
    const trap = task('trap', 'trap "exit 42" USR1; while :; do sleep 0.01; done');
    const all = [quick, flood, slow, trap];
    const handles = await Promise.all(all.map((t) => startTracked(driver, t.config)));
    const supervisorPid = st(handles[0]!).supervisorPid!;
    expect(supervisorPid, 'one supervisor holds every task').to.be.a('number');
    for (const h of handles) expect(st(h).supervisorPid).to.equal(supervisorPid);
    await until(() => all.every((t) => fs.existsSync(`${starts.base}/${t.config.taskName}.starts`)), 5000, 'every task to start');

    process.kill(supervisorPid, 'SIGKILL');
    await until(() => !alive(supervisorPid), 5000, 'the supervisor to die');
    for (const h of handles) expect(alive(h.pid!), `${h.config.taskName} runs on`).to.equal(true);

    fs.writeFileSync(go, '');
    // The quick task exits with nobody to read its status but its shim.
    await until(() => fs.existsSync(path.join(quick.config.stateDir, 'status')), 5000, 'the shim to record the quick exit');
    expect(alive(handles[0]!.pid!)).to.equal(false);

    // The first request starts a new supervisor, which adopts each task from its state dir.
    expect(await driver.wait(handles[0]!, ABORT())).to.deep.equal({ exitCode: 3, signal: 0 });
    expect(await driver.wait(handles[1]!, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
    const flooded = fs.readFileSync(path.join(flood.sb.logsDir, 'flood.stdout.0'), 'utf8');
    expect(flooded.length, 'the output written while no one read it').to.equal(300_000);
    await driver.signal(handles[3]!, 'SIGUSR1');
    expect(await driver.wait(handles[3]!, ABORT())).to.deep.equal({ exitCode: 42, signal: 0 });
    const slowWait = driver.wait(handles[2]!, ABORT());
    await driver.stop(handles[2]!, 2000, 'SIGTERM');
    expect(await slowWait).to.deep.equal({ exitCode: 143, signal: 15 });

    for (const t of all) {
      const name = t.config.taskName;
      expect(fs.readFileSync(`${starts.base}/${name}.starts`, 'utf8'), `${name} started once`).to.equal('started\n');
    }
    const exits = handles.map((h) => JSON.parse(fs.readFileSync(path.join(h.config.stateDir, 'exit.json'), 'utf8')).exitCode);
    expect(exits, 'the new supervisor recorded each exit').to.deep.equal([3, 0, 143, 42]);
  });

  it('a task whose shim is killed is lost clearly: wait says so, stop still ends its group', async () => {
    const sb = sandbox();
    const h = await startTracked(driver, sb.config(sh('sleep 30')));
    process.kill(st(h).executorPid, 'SIGKILL');
    const err = await driver.wait(h, ABORT()).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/can no longer be waited on/);
    await driver.stop(h, 200, 'SIGTERM');
    expect(alive(h.pid!)).to.equal(false);
  });

  it('a start races the idle supervisor leaving, and many starts at once share one supervisor', async () => {
    const sb = sandbox();
    const first = await startTracked(driver, sb.config(sh('exit 0')));
    await driver.wait(first, ABORT());
    const pid1 = st(first).supervisorPid!;
    await until(() => !alive(pid1), 5000, 'the idle supervisor to leave');
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => startTracked(driver, sandbox(`t${i}`).config(sh('exit 0')))));
    const pids = new Set(many.map((h) => st(h).supervisorPid));
    expect(pids.size, 'one new supervisor').to.equal(1);
    expect([...pids][0]).to.not.equal(pid1);
    for (const h of many) expect(await driver.wait(h, ABORT())).to.deep.equal({ exitCode: 0, signal: 0 });
  });
});
