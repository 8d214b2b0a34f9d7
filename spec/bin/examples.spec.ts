import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliProcess, runCli, stopCliProcesses } from '../support/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = join(ROOT, 'examples');
const entries = readdirSync(EXAMPLES, { withFileTypes: true });
const files = entries
  .filter((e) => e.isFile())
  .map((e) => e.name)
  .sort();
/** Folders of job files for the agent, each run end to end by its own agent spec. */
const JOB_DIRS: Record<string, string> = { 'seed-10200': 'spec/agent/seed-10200.spec.ts' };

/** The job type of an allocation file, berth JSON or Nomad API JSON. */
function jobType(file: string): string {
  const j = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as { job?: { type?: string }; Job?: { Type?: string } };
  return j.job?.type ?? j.Job?.Type ?? 'service';
}

/** Runs `node file` (an embedding example importing 'berth', which resolves to this package's dist/). */
function runNode(file: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout + stderr }),
    );
  });
}

describe('every file in examples/ runs', function () {
  this.timeout(60_000);
  afterEach(stopCliProcesses);

  it('examples/ holds the eleven examples this spec knows how to run (allocation JSON and embedding scripts)', () => {
    expect(files.filter((f) => !f.endsWith('.json') && !f.endsWith('.mjs'))).to.deep.equal([]);
    expect(files).to.have.length(11);
    expect(
      entries
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort(),
    ).to.deep.equal(Object.keys(JOB_DIRS).sort());
    for (const spec of Object.values(JOB_DIRS)) expect(existsSync(join(ROOT, spec)), spec).to.equal(true);
  });

  for (const dir of Object.keys(JOB_DIRS)) {
    for (const f of readdirSync(join(EXAMPLES, dir)).filter((f) => f.endsWith('.nomad.hcl'))) {
      it(`berth job validate ${dir}/${f}: a valid job file (${JOB_DIRS[dir]} runs it on an agent)`, async () => {
        const r = await runCli(['job', 'validate', join(EXAMPLES, dir, f)]);
        expect(r.code, r.stderr).to.equal(0);
      });
    }
  }

  for (const f of files.filter((f) => f.endsWith('.json'))) {
    if (jobType(f) === 'batch') {
      it(`berth run ${f}: every task runs, the allocation completes, exit 0, nothing left`, async () => {
        const r = await runCli(['run', join(EXAMPLES, f)]);
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.match(/: Started — Task started by client/);
        expect(r.stdout).to.match(/allocation [0-9a-f-]{36}: complete \(exit 0\)/);
        expect(r.leftovers).to.deep.equal([]);
      });
    } else {
      it(`berth run ${f}: its task starts and prints, SIGINT stops it, exit 130`, async () => {
        const p = new CliProcess(['run', join(EXAMPLES, f)]);
        await p.waitFor(/: Started — Task started by client/);
        await p.waitFor(/^\S+ \| \S/m); // a line of the task's own output
        p.child.kill('SIGINT');
        const r = await p.exited;
        expect(r.code, r.stderr).to.equal(130);
        expect(r.stdout).to.match(/: complete, stopped by SIGINT \(exit 130\)/);
        expect(p.leftovers()).to.deep.equal([]);
      });
    }
  }

  for (const f of files.filter((f) => f.endsWith('.mjs'))) {
    it(`node examples/${f} runs to its end, exit 0`, async function () {
      if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: `npm run build` (npm ci does it) first');
      const r = await runNode(join(EXAMPLES, f));
      expect(r.code, r.out).to.equal(0);
      expect(r.out.trim(), 'it printed what it did').to.not.equal('');
    });
  }
});
