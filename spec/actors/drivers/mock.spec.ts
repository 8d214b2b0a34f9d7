import { expect } from 'chai';
import { mkdtempSync, readFileSync, readdirSync, rmSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockDriver, parseMockConfig } from '../../../actors/drivers/mock.ts';
import type { Driver, TaskConfig } from '../../../actors/drivers/driver.ts';
import { waitExit } from '../../../actors/runner/task-actors.ts';
import { DriverConfigError, DriverStartError } from '../../../model/errors.ts';
import type { Clock } from '../../../model/clock.ts';

/** A manual clock: timers fire only when the test advances time. */
function manualClock() {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock & { advance(ms: number): void; pending(): number } = {
    now: () => now,
    setTimeout: (fn, ms) => (timers.set(++seq, { at: now + ms, fn }), seq),
    clearTimeout: (h) => void timers.delete(h as number),
    advance(ms) {
      now += ms;
      for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) if (t.at <= now && timers.delete(id)) t.fn();
    },
    pending: () => timers.size,
  };
  return clock;
}

describe('mock_driver', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-mock-'));
    mkdirSync(join(dir, 'alloc', 'logs'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = (config: Record<string, unknown>): TaskConfig => ({
    id: 'a/web/1',
    allocId: 'a',
    taskName: 'web',
    task: { name: 'web', driver: 'mock_driver', config },
    env: {},
    taskDir: { dir, localDir: dir, secretsDir: dir, privateDir: dir, tmpDir: dir },
    allocDir: { dir, sharedDir: join(dir, 'alloc'), logsDir: join(dir, 'alloc', 'logs') },
    logs: { maxFiles: 1, maxFileSizeMB: 1 },
    stateDir: dir,
  });
  const never = () => new AbortController().signal;

  it('parses Go durations and rejects a bare number, as Nomad does', () => {
    expect(parseMockConfig({ run_for: '1m30s', kill_after: 20 }).runForMs).to.equal(90_000);
    expect(() => parseMockConfig({ run_for: '10' })).to.throw(DriverConfigError, /missing unit/);
    expect(() => parseMockConfig({ exit_code: 'x' })).to.throw(DriverConfigError, /exit_code/);
  });

  it('run_for elapses on the injected clock, then exits with exit_code, exit_signal and exit_err_msg', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '10s', exit_code: 3, exit_signal: 9, exit_err_msg: 'boom' }), never());
    let result: unknown;
    const p = d.wait(h, never()).then((r) => (result = r));
    clock.advance(9_999);
    await Promise.resolve();
    expect(result).to.equal(undefined);
    clock.advance(1);
    await p;
    expect(result).to.deep.equal({ exitCode: 3, signal: 9, err: 'boom' });
  });

  it('kill_after delays a stop; the exit code is reported on a kill too', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '1h', kill_after: '2s', exit_code: 1 }), never());
    let stopped = false;
    const s = d.stop(h, 5000, 'SIGINT').then(() => (stopped = true));
    clock.advance(1999);
    await Promise.resolve();
    expect(stopped).to.equal(false);
    clock.advance(1);
    await s;
    expect(await d.wait(h, never())).to.deep.equal({ exitCode: 1, signal: 0 });
    await d.destroy(h, false);
    expect(clock.pending()).to.equal(0); // no timer left behind
  });

  it('start_error (unrecoverable by default), start_error_recoverable, start_block_for', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    let err: unknown;
    await d.start(cfg({ start_error: 'nope' }), never()).catch((e) => (err = e));
    expect(err).to.be.instanceOf(DriverStartError);
    expect((err as DriverStartError).recoverable).to.equal(false);
    await d.start(cfg({ start_error: 'later', start_error_recoverable: true }), never()).catch((e) => (err = e));
    expect((err as DriverStartError).recoverable).to.equal(true);
    let started = false;
    const p = d.start(cfg({ start_block_for: '5s', run_for: '1s' }), never()).then(() => (started = true));
    clock.advance(4999);
    await Promise.resolve();
    expect(started).to.equal(false);
    clock.advance(1);
    await p;
  });

  it('stdout_string with stdout_repeat and stdout_repeat_duration writes the task log; the exit waits for the output', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '0s', stdout_string: 'hi\n', stdout_repeat: 2, stdout_repeat_duration: '1s' }), never());
    let exited = false;
    const p = d.wait(h, never()).then(() => (exited = true));
    clock.advance(0);
    clock.advance(1000);
    await new Promise((r) => setImmediate(r));
    expect(exited).to.equal(false); // run_for is over, one repeat is still to come (Nomad waits for it)
    clock.advance(1000);
    await p;
    expect(readFileSync(join(dir, 'alloc', 'logs', 'web.stdout.0'), 'utf8')).to.equal('hi\nhi\nhi\n');
  });

  it('rotates its logs as the real drivers do: files of task.logs size, only the newest maxFiles kept', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const c = {
      ...cfg({ run_for: '0s', stdout_string: 'abcdef\n', stdout_repeat: 5, stdout_repeat_duration: '1s' }),
      logs: { maxFiles: 2, maxFileSizeMB: 10 / (1024 * 1024) },
    };
    const h = await d.start(c, never());
    const p = d.wait(h, never());
    for (let i = 0; i < 6; i++) clock.advance(1000);
    await p;
    const logs = join(dir, 'alloc', 'logs');
    const files = readdirSync(logs)
      .filter((f) => f.startsWith('web.stdout.'))
      .sort((x, y) => Number(x.split('.')[2]) - Number(y.split('.')[2]));
    expect(files).to.deep.equal(['web.stdout.3', 'web.stdout.4']); // 42 bytes in 10-byte files: 0..4, two kept
    expect(files.map((f) => readFileSync(join(logs, f), 'utf8')).join('')).to.equal('abcdef\n'.repeat(6).slice(30));
    for (const f of files) expect(statSync(join(logs, f)).size).to.be.at.most(10);
  });

  it('plugin_exit_after: the wait reports a plugin shutdown; recover picks the task up with what is left of run_for', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '7s', plugin_exit_after: '3s', exit_code: 2 }), never());
    const first = d.wait(h, never());
    clock.advance(3000);
    expect(await first).to.deep.equal({ exitCode: 0, signal: 0, err: 'plugin is shut down', pluginShutdown: true });
    expect(d.running()).to.equal(0);
    await d.recover(h);
    expect(d.running()).to.equal(1);
    let result: unknown;
    const second = d.wait(h, never()).then((r) => (result = r));
    clock.advance(2999); // the plugin exits again 3 s after the recovery...
    await new Promise((r) => setImmediate(r));
    expect(result).to.equal(undefined);
    clock.advance(1);
    await second;
    expect(result).to.deep.include({ pluginShutdown: true });
    await d.recover(h);
    const third = d.wait(h, never());
    clock.advance(1000); // ...and run_for (7 s from the first start) ends at 7 s, before the next
    expect(await third).to.deep.equal({ exitCode: 2, signal: 0 });
    await d.destroy(h, false);
    expect(clock.pending()).to.equal(0);
  });

  it('exec runs exec_command (output, exit code, run_for on the clock), showinput echoes, an abort ends it', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '1h', exec_command: { run_for: '2s', stdout_string: 'out', stderr_string: 'err', exit_code: 3 } }), never());
    let res: Awaited<ReturnType<NonNullable<typeof d.exec>>> | undefined;
    const p = d.exec!(h, ['/bin/anything']).then((r) => (res = r));
    clock.advance(1999);
    await new Promise((r) => setImmediate(r));
    expect(res).to.equal(undefined);
    clock.advance(1);
    await p;
    expect(res!.stdout.toString()).to.equal('out');
    expect(res!.stderr.toString()).to.equal('err');
    expect(res!.exitCode).to.equal(3);
    const echo = d.exec!(h, ['showinput'], { stdin: 'typed', tty: true });
    await new Promise((r) => setImmediate(r)); // the stdin is read before the command's timer is set
    clock.advance(1);
    expect((await echo).stdout.toString()).to.equal('TTY: true\nStdin:\ntyped\n');
    const ctl = new AbortController();
    const aborted = d.exec!(h, ['x'], { signal: ctl.signal });
    ctl.abort();
    expect((await aborted).exitCode).to.equal(3);
    const plain = await d.start({ ...cfg({ run_for: '1h' }), id: 'a/web/2' }, never());
    let err: unknown;
    await d.exec!(plain, ['x']).catch((e) => (err = e));
    expect((err as Error).message).to.equal('no exec command is configured');
    expect(() => parseMockConfig({ exec_command: 'nope' })).to.throw(DriverConfigError, /exec_command/);
    expect(() => parseMockConfig({ exec_command: [{ run_for: '10' }] })).to.throw(DriverConfigError, /missing unit/);
    await d.destroy(h, true);
    await d.destroy(plain, true);
  });

  it('refuses to destroy a running task without force; recover shortens run_for', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '10s' }), never());
    let err: unknown;
    await d.destroy(h, false).catch((e) => (err = e));
    expect((err as Error).message).to.equal('cannot destroy running task');
    const d2 = createMockDriver({ clock });
    clock.advance(4000);
    await d2.recover(h);
    let done = false;
    const p = d2.wait(h, never()).then(() => (done = true));
    clock.advance(5999);
    await Promise.resolve();
    expect(done).to.equal(false);
    clock.advance(1);
    await p;
    await d.destroy(h, true);
  });

  it("waitExit recovers the task after each plugin shutdown and waits on; a failed recovery ends the wait with the recovery's error", async () => {
    const clock = manualClock();
    const flush = () => new Promise((r) => setImmediate(r));
    const d = createMockDriver({ clock });
    const h = await d.start(cfg({ run_for: '7s', plugin_exit_after: '3s', exit_code: 2 }), never());
    const waited = waitExit(d, h, never());
    clock.advance(3000);
    await flush();
    clock.advance(3000); // a second plugin shutdown, 3 s after the recovery
    await flush();
    clock.advance(1000);
    expect(await waited).to.deep.equal({ exitCode: 2, signal: 0 });
    const lost = await d.start(cfg({ run_for: '7s', plugin_exit_after: '3s' }), never());
    const failing = Object.assign(Object.create(d) as Driver, {
      recover: async () => {
        throw new Error('no plugin');
      },
    });
    const ended = waitExit(failing, lost, never());
    clock.advance(3000);
    expect(await ended).to.deep.equal({ exitCode: 0, signal: 0, err: 'plugin is shut down; failed to recover task: no plugin' });
    await d.destroy(lost, true);
    expect(clock.pending()).to.equal(0);
  });
});
