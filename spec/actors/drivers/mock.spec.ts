import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockDriver, parseMockConfig } from '../../../actors/drivers/mock.ts';
import type { TaskConfig } from '../../../actors/drivers/driver.ts';
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
    id: 'a/web/1', allocId: 'a', taskName: 'web', task: { name: 'web', driver: 'mock_driver', config }, env: {},
    taskDir: { dir, localDir: dir, secretsDir: dir, privateDir: dir, tmpDir: dir },
    allocDir: { dir, sharedDir: join(dir, 'alloc'), logsDir: join(dir, 'alloc', 'logs') }, logs: { maxFiles: 1, maxFileSizeMB: 1 }, stateDir: dir,
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

  it('stdout_string with stdout_repeat and stdout_repeat_duration writes the task log', async () => {
    const clock = manualClock();
    const d = createMockDriver({ clock });
    await d.start(cfg({ run_for: '1h', stdout_string: 'hi\n', stdout_repeat: 2, stdout_repeat_duration: '1s' }), never());
    clock.advance(1000);
    clock.advance(1000);
    clock.advance(1000);
    // Appends are real file I/O on libuv's thread pool, which a loaded suite may keep busy.
    const file = join(dir, 'alloc', 'logs', 'web.stdout.0');
    const text = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
    for (let i = 0; i < 100 && text().length < 9; i++) await new Promise((r) => setTimeout(r, 20));
    expect(readFileSync(file, 'utf8')).to.equal('hi\nhi\nhi\n');
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
});
