/**
 * No silent skips: `.ci/run` refuses to run as another user than root unless told why; the
 * reporter writes every skipped test's title to BERTH_SKIPS_FILE; `scripts/check-skips.mjs` fails
 * on a skip `spec/support/allowed-skips.mjs` does not list; with CI=true a missing prerequisite is
 * a failure; root-only tests skip saying why; the browser specs find Chromium as `.ci/run` installs it.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '../support/browser.ts';
import { rootOnly, skipOrFailInCi } from '../support/skips.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs a program to its end: exit code, stdout and stderr. */
function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; uid?: number; gid?: number } = {}) {
  const child = spawn(file, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000, ...opts });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A Mocha context stand-in that records a skip (mocha's own `skip()` throws to end the test, as this does). */
function fakeContext(title = 'a test') {
  const test = { title };
  const ctx = {
    skipped: false,
    currentTest: test,
    skip() {
      ctx.skipped = true;
      throw new Error('skipped');
    },
  };
  return { ctx, test, mocha: ctx as unknown as Mocha.Context };
}

describe('no silent skips', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-skips-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the summary reporter writes the full title of every skipped test to BERTH_SKIPS_FILE, and counts them', async () => {
    const spec = join(dir, 'some.spec.cjs');
    writeFileSync(
      spec,
      [
        "describe('outer', () => {",
        "  it('runs', () => {});",
        "  it.skip('skipped by it.skip', () => {});",
        "  it('skipped by this.skip', function () { this.skip(); });",
        "  it('pending, no body');",
        '});',
      ].join('\n'),
    );
    const skips = join(dir, 'skips');
    const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const r = await run(process.execPath, [mocha, '--no-config', '--no-package', '--reporter', join(ROOT, 'spec/support/summary-reporter.cjs'), spec], {
      env: { ...process.env, BERTH_SKIPS_FILE: skips },
    });
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include('\n1 passed, 0 failed, 3 skipped\n');
    expect(readFileSync(skips, 'utf8')).to.equal('outer skipped by it.skip\nouter skipped by this.skip\nouter pending, no body\n');
  });

  it('check-skips fails (exit 1) on a skip allowed-skips.mjs does not list, and names it; allowed skips alone pass with their reasons', async () => {
    const allowed = 'cgroups v1 through the client (root) some test';
    const file = join(dir, 'skips');
    writeFileSync(file, `${allowed}\nsome test nobody allowed to skip\n`);
    const bad = await run(process.execPath, ['scripts/check-skips.mjs', file]);
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.include(`skipped: ${allowed} (allowed: a machine has cgroup v1 or v2 writable, not both: the other version skips)`);
    expect(bad.stdout).to.include('skipped: some test nobody allowed to skip (NOT ALLOWED)');
    expect(bad.stderr).to.include('1 test(s) skipped that spec/support/allowed-skips.mjs does not allow');

    writeFileSync(file, `${allowed}\n`);
    const good = await run(process.execPath, ['scripts/check-skips.mjs', file]);
    expect(good.code).to.equal(0);
    expect(good.stdout).to.include('skips: 1, all allowed');
    expect(good.stderr).to.equal('');
  });

  // .ci/run as another user than root (nobody, when this runs as root), with a stand-in npm on PATH
  // that records what it is asked to run: nothing is installed, built or tested for real.
  const other = process.geteuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  function fakeNpm(): string {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const npm = join(bin, 'npm');
    // `npm test` says what runs it and skips a test nobody allowed, as the suite would write it.
    writeFileSync(
      npm,
      '#!/bin/sh\n[ "$1" = --version ] && { echo 10.0.0-stand-in; exit 0; }\necho "stand-in npm: $*"\nif [ "$1" = test ]; then\n  echo "stand-in npm test under: $(tr "\\0" " " </proc/$PPID/cmdline)"\n  echo "a test nobody allowed to skip" > "$BERTH_SKIPS_FILE"\nfi\nexit 0\n',
    );
    chmodSync(npm, 0o755);
    chmodSync(bin, 0o755);
    chmodSync(dir, 0o755);
    return bin;
  }
  const ciEnv = (bin: string, extra: NodeJS.ProcessEnv = {}) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, BERTH_CI_WATCH_POLL: '0.05', ...extra };
    if (!('BERTH_CI_NONROOT_REASON' in extra)) delete env.BERTH_CI_NONROOT_REASON;
    return env;
  };

  it('.ci/run as another user than root fails at once unless BERTH_CI_NONROOT_REASON says why; its second line gives the limits it runs under', async () => {
    const bin = fakeNpm();
    const r = await run(join(ROOT, '.ci/run'), [], { env: ciEnv(bin), ...other });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include('CI must run as root (root-only specs would skip); set BERTH_CI_NONROOT_REASON to say why not');
    const lines = r.stdout.split('\n');
    expect(lines[0]).to.match(/^node v\d+\.\d+\.\d+, npm 10\.0\.0-stand-in, euid \d+$/);
    expect(lines[1]).to.match(/^limits: open files \d+\/\d+, processes (\d+|unlimited); \d+ cpus; load average: .+; MemAvailable: \d+ kB$/);
    expect(r.stdout).not.to.include('stand-in npm:');
  });

  it('.ci/run with BERTH_CI_NONROOT_REASON as another user than root runs every step, the suite under .ci/watch, with the skip check off', async () => {
    const bin = fakeNpm();
    const r = await run(join(ROOT, '.ci/run'), [], { env: ciEnv(bin, { BERTH_CI_NONROOT_REASON: 'a spec of .ci/run' }), ...other });
    expect(r.stdout).to.include('not root: a spec of .ci/run (root-only specs skip; the skip check is off)');
    // In order, but for `npm test`: what .ci/watch passes on (through tee) may come after later lines.
    const steps = r.stdout.split('\n').filter((l) => l.startsWith('stand-in npm:'));
    expect(steps.filter((l) => l !== 'stand-in npm: test')).to.deep.equal([
      'stand-in npm: ci --no-audit --no-fund',
      'stand-in npm: run typecheck',
      'stand-in npm: run lint',
      'stand-in npm: run format:check',
      'stand-in npm: run mutate -- --ci',
    ]);
    expect(steps.filter((l) => l === 'stand-in npm: test')).to.have.length(1);
    expect(r.stdout).to.match(/^stand-in npm test under: \S*bash \S*\.ci\/watch npm test $/m);
    // The disallowed skip the stand-in suite wrote is not checked: the run goes on to mutation testing and passes.
    expect(r.stdout).not.to.include('NOT ALLOWED');
    expect(r.code).to.equal(0);
  });

  it('with CI=true a missing prerequisite fails the test, naming it; without CI it skips, saying why', () => {
    const saved = process.env.CI;
    try {
      process.env.CI = 'true';
      const inCi = fakeContext();
      expect(() => skipOrFailInCi(inCi.mocha, 'no Chromium')).to.throw('CI must be able to run this (CI=true): no Chromium');
      expect(inCi.ctx.skipped).to.equal(false);
      delete process.env.CI;
      const local = fakeContext();
      expect(() => skipOrFailInCi(local.mocha, 'no Chromium')).to.throw('skipped');
      expect(local.ctx.skipped).to.equal(true);
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });

  it('rootOnly skips a test as another user, saying why in its title, and leaves it to run as root', () => {
    const asUser = fakeContext('owns its files (root)');
    expect(() => rootOnly(asUser.mocha, 'to chown', 1000)).to.throw('skipped');
    expect(asUser.ctx.skipped).to.equal(true);
    expect(asUser.test.title).to.equal('owns its files (root) (skipped: needs root to chown)');
    const asRoot = fakeContext('owns its files (root)');
    rootOnly(asRoot.mocha, 'to chown', 0);
    expect(asRoot.ctx.skipped).to.equal(false);
    expect(asRoot.test.title).to.equal('owns its files (root)');
  });

  it('finds Chromium as .ci/run installs it: BERTH_CHROMIUM, else /usr/bin/chromium, else chromium or chromium-browser on PATH', () => {
    const debian = join(dir, 'usr-bin-chromium');
    const path1 = join(dir, 'path1');
    const path2 = join(dir, 'path2');
    mkdirSync(path1);
    mkdirSync(path2);
    const env = { PATH: `${path1}:${path2}` };
    expect(findChromium(env, debian), 'none anywhere').to.equal(undefined);
    writeFileSync(join(path2, 'chromium-browser'), '');
    expect(findChromium(env, debian)).to.equal(join(path2, 'chromium-browser'));
    writeFileSync(join(path1, 'chromium'), '');
    expect(findChromium(env, debian), 'the first PATH entry wins').to.equal(join(path1, 'chromium'));
    writeFileSync(debian, '');
    expect(findChromium(env, debian), "Debian's path before PATH").to.equal(debian);
    expect(findChromium({ ...env, BERTH_CHROMIUM: '/opt/chrome' }, debian), 'BERTH_CHROMIUM first, even where nothing is').to.equal('/opt/chrome');
  });
});
