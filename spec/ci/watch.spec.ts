/**
 * `.ci/watch`, the stall watchdog `.ci/run` runs the suite under: a command silent for
 * BERTH_CI_SILENCE seconds gets a report and exit code 124; one that prints, or ends, goes on as
 * it would. The bounds are made short here (a fraction of a second), so each run takes well under one.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WATCH = join(import.meta.dirname, '..', '..', '.ci', 'watch');

/** Runs `.ci/watch` around `cmd` with a silence bound of `silence` s, looking every 50 ms, killing at once. */
function watch(silence: string, ...cmd: string[]): Promise<{ code: number | null; out: string }> {
  return watchIn(process.env, silence, '0.05', cmd);
}

function watchIn(env: NodeJS.ProcessEnv, silence: string, poll: string, cmd: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(WATCH, cmd, {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10_000, // a watchdog that hangs fails this spec instead of the run
    env: { ...env, BERTH_CI_SILENCE: silence, BERTH_CI_WATCH_POLL: poll, BERTH_CI_WATCH_GRACE: '0' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('.ci/watch: no hang without a word', () => {
  it('a command silent past BERTH_CI_SILENCE is ended with exit 124 after a report: load, memory, D state, its process tree, mocha threads and fds', async () => {
    // A node process named like mocha, so the report's section on the test runner's threads is there too.
    const { code, out } = await watch('0.3', process.execPath, '-e', 'setInterval(() => {}, 1000)', 'mocha-standin');
    expect(code).to.equal(124);
    const sections = [
      "=== .ci/watch: no output for 0.3s; the machine and the suite's processes ===",
      'load average',
      'MemAvailable:',
      '--- processes in D (uninterruptible) state',
      "--- the suite's process tree (pid stat wchan etime fds args)",
      'mocha-standin',
      ') threads: tid comm state wchan',
      "--- mocha's open fds by kind",
      '=== end of .ci/watch report ===',
    ];
    for (const s of sections) expect(out, s).to.include(s);
    // In that order: the report is read from the end of CI's log.
    const at = sections.map((s) => out.indexOf(s));
    expect(at).to.deep.equal([...at].sort((a, b) => a - b));
  });

  it('a command that prints and exits 0 exits 0 with its output passed on, and no report', async () => {
    const { code, out } = await watch('0.3', 'sh', '-c', 'echo hello from the suite');
    expect(code).to.equal(0);
    expect(out).to.include('hello from the suite');
    expect(out).not.to.include('.ci/watch: no output');
  });

  it('output resets the silence: a command printing every 0.1 s for 0.4 s outlives a 0.3 s bound; its exit code is passed on', async () => {
    const { code, out } = await watch('0.3', 'sh', '-c', 'for i in 1 2 3 4; do echo tick $i; sleep 0.1; done; exit 3');
    expect(code).to.equal(3);
    expect(out).to.include('tick 4');
    expect(out).not.to.include('.ci/watch: no output');
  });

  it('a command that ends at once leaves no log behind, however late its tee starts (40 at a time)', async () => {
    // The log goes through tee; a tee that started after the watchdog had ended and removed the
    // log used to create it again (about one run in twelve did, with a 10 ms poll).
    const dir = mkdtempSync(join(tmpdir(), 'berth-watch-'));
    try {
      const runs = await Promise.all(Array.from({ length: 40 }, () => watchIn({ ...process.env, TMPDIR: dir }, '5', '0.01', ['true'])));
      expect(runs.map((r) => r.code)).to.deep.equal(Array(40).fill(0));
      expect(readdirSync(dir)).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
