import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { installOffline, packBerth, PKG_NAME, REPO, writeConsumerProject } from './consumer-project.ts';

const exec = promisify(execFile);
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const FIXTURE = fileURLToPath(new URL('./fixture/consumer.ts', import.meta.url));

/** Runs a command to its end; resolves with its output and exit code (never rejects on a non-zero exit). */
async function sh(file: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(file, args, { ...opts, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the packed package, installed offline into a project of its own', function () {
  this.timeout(240_000);
  let work: string;
  let project: string;
  let tarball: string;
  const times: Record<string, number> = {};
  const timed = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      times[label] = Date.now() - t0;
    }
  };

  before(async function () {
    work = mkdtempSync(join(tmpdir(), 'berth-consumer-'));
    project = join(work, 'app');
    mkdirSync(project);
    tarball = await timed('pack', () => packBerth(work));
    writeConsumerProject(project, tarball);
    await timed('install', () => installOffline(project));
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
    console.log(
      `      (consumer spec: ${Object.entries(times)
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
        .join(', ')})`,
    );
  });

  it('ships dist/ (ESM, .d.ts, source maps, the executor), README, LICENSE and examples; no spec/, bench/ or TypeScript sources', async () => {
    const { stdout } = await exec('tar', ['-tzf', tarball]);
    const files = stdout
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.js.map',
      'dist/bin/berth.js',
      'dist/actors/drivers/executor/supervisor.mjs',
      'dist/actors/drivers/executor/shim.mjs',
      'dist/actors/drivers/executor/command.mjs',
      'dist/actors/drivers/logs/rotator.mjs',
      'examples/hello.json',
      'docs/viewer.png', // the README's screenshot
    ]) {
      expect(files, f).to.include(f);
    }
    expect(files.filter((f) => /^(spec|bench|scripts)\//.test(f))).to.deep.equal([]);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).to.deep.equal([]);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', PKG_NAME, 'package.json'), 'utf8')) as Record<string, unknown> & {
      dependencies: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(manifest.name).to.equal('berth-runtime'); // npm's 'berth' is someone else's empty placeholder
    expect(manifest.bin).to.have.keys('berth');
    // no build at a user's install (npm would warn of install scripts); the checkout keeps its own
    expect(Object.keys((manifest.scripts as Record<string, string> | undefined) ?? {})).to.not.include.any.members(['prepare', 'prepack', 'postpack']);
    expect((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts).to.include.keys(
      'prepare',
      'prepack',
      'postpack',
    );
    expect(existsSync(join(REPO, '.package.json.checkout'))).to.equal(false);
    expect(manifest).to.include.keys('repository', 'homepage', 'bugs');
    // a range with an upper bound: '>=20.19' would pull in whatever @types/node major is newest
    expect(manifest.dependencies['@types/node']).to.match(/^\^20\.|<\s*\d/);
    const installed = readdirSync(join(project, 'node_modules'));
    expect(installed).not.to.include('tsx');
    expect(installed).not.to.include('typescript');
  });

  it('(a) runs every ESM example on plain node, no loader; require() works too', async () => {
    const examples = join(project, 'examples');
    cpSync(join(project, 'node_modules', PKG_NAME, 'examples'), examples, { recursive: true });
    const scripts = readdirSync(examples).filter((f) => f.endsWith('.mjs'));
    expect(scripts).to.include.members(['embed.mjs', 'preemption.mjs', 'sticky-disk.mjs', 'custom-hook.mjs', 'custom-driver.mjs']);
    const expected: Record<string, RegExp> = {
      'embed.mjs': /stdout hello from hello\nstatus complete/,
      'preemption.mjs': /high released by low\[0\][^\n]*\n(.|\n)*high is running; victims: complete, complete/,
      'sticky-disk.mjs': /v2 read: written by v1 at/,
      'custom-hook.mjs': /hook: prerun wrote greeting\.txt(.|\n)*task: hello, greeter(.|\n)*hook: destroy/,
      'custom-driver.mjs': /3\.\.\.\n2\.\.\.\n1\.\.\.\nliftoff\nrocket: dead/,
    };
    await timed('examples', async () => {
      for (const s of scripts) {
        const r = await sh(process.execPath, [join(examples, s)], { cwd: project });
        expect(r.code, `${s}: ${r.stderr}`).to.equal(0);
        if (expected[s]) expect(r.stdout, s).to.match(expected[s]!);
      }
    });
    const cjs = await sh(process.execPath, ['-e', `const b = require('${PKG_NAME}'); console.log(typeof b.createClient, typeof b.parseAllocation)`], {
      cwd: project,
    });
    expect(cjs.code, cjs.stderr).to.equal(0);
    expect(cjs.stdout.trim()).to.equal('function function');
  });

  it('(b) type-checks a strict NodeNext TypeScript consumer and the examples against the shipped .d.ts (skipLibCheck false)', async () => {
    copyFileSync(FIXTURE, join(project, 'consumer.ts'));
    cpSync(join(project, 'node_modules', PKG_NAME, 'examples'), join(project, 'examples'), { recursive: true });
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          allowJs: true,
          checkJs: true,
          types: ['node'],
        },
        include: ['consumer.ts', 'examples/*.mjs'],
      }),
    );
    const r = await timed('tsc', () => sh(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }));
    expect(r.code, r.stdout + r.stderr).to.equal(0);
  });

  it('(c) runs the installed berth bin from another directory: --help, --version and run of an example', async () => {
    const bin = join(project, 'node_modules', '.bin', 'berth');
    const help = await sh(bin, ['--help'], { cwd: '/' });
    expect(help.code, help.stderr).to.equal(0);
    expect(help.stdout).to.match(/^berth \d+\.\d+\.\d+: run Nomad-style allocations/);
    const version = await sh(bin, ['--version'], { cwd: '/' });
    expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
    const run = await timed('cli', () =>
      sh(bin, ['run', join(project, 'node_modules', PKG_NAME, 'examples', 'hello.json')], { cwd: '/', env: { ...process.env, NO_COLOR: '1' } }),
    );
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^hello \| hello from hello$/m);
    const bad = await sh(bin, ['run', '--bogus'], { cwd: '/' });
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim().split('\n')).to.have.length(1);
  });
});
