/**
 * `npm run corpus` (scripts/corpus.ts) on job files of our own: one outcome per file, `parsed`,
 * `refused` naming every refused stanza, or `error` with the first problem; a `.vars` file's `-var`
 * arguments are given to its job file; `.vars` and data files are not job files.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCorpus } from '../../../scripts/corpus.ts';
import { runOnAgent } from '../../../scripts/corpus-run.ts';

const job = (name: string, extra = '', command = '"/bin/true"') =>
  `job "${name}" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      ${extra}\n      config {\n        command = ${command}\n      }\n    }\n  }\n}\n`;

describe('npm run corpus', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-corpus-'));
    await writeFile(join(dir, 'a-ok.nomad'), job('ok'));
    await writeFile(join(dir, 'b-refused.hcl'), job('r', 'vault {\n  policies = ["x"]\n}\nidentity {\n  env = true\n}'));
    await writeFile(join(dir, 'c-broken.nomad.hcl'), 'job "x" {\n  group = \n}\n');
    await writeFile(join(dir, 'd-vars.nomad'), `variable "cmd" {\n  type = string\n}\n${job('v', '', 'var.cmd')}`);
    await writeFile(join(dir, 'd-vars.nomad.vars'), '-var\ncmd=/bin/echo\n');
    await writeFile(join(dir, 'input.file'), 'data');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells each job file parsed, refused (every stanza named) or error, and reads .vars as -var arguments', async () => {
    const results = (await runCorpus(dir))!;
    expect(results.map((r) => [r.file, r.outcome])).to.deep.equal([
      ['a-ok.nomad', 'parsed'],
      ['b-refused.hcl', 'refused'],
      ['c-broken.nomad.hcl', 'error'],
      ['d-vars.nomad', 'parsed'],
    ]);
    expect(results[1]!.detail).to.equal('vault, identity');
    expect(results[2]!.detail).to.match(/Invalid expression|expression/i);
  });

  it('--run registers each parsed file on a real agent: ran, failed (why), queued (the constraint), waits (periodic)', async function () {
    this.timeout(90_000);
    const runDir = await mkdtemp(join(tmpdir(), 'berth-corpus-run-'));
    try {
      await writeFile(
        join(runDir, 'a-runs.nomad'),
        job('runs', '', '"/bin/sleep"').replace('command = "/bin/sleep"', 'command = "/bin/sleep"\n        args = ["30"]'),
      );
      await writeFile(join(runDir, 'b-fails.nomad'), job('fails', 'restart {\n        attempts = 0\n        mode = "fail"\n      }', '"/no/such/binary"'));
      await writeFile(
        join(runDir, 'c-windows.nomad'),
        job('windows').replace('group "g" {', 'constraint {\n    attribute = "${attr.kernel.name}"\n    value = "windows"\n  }\n  group "g" {'),
      );
      await writeFile(
        join(runDir, 'd-periodic.nomad'),
        job('cron').replace('group "g" {', 'periodic {\n    crons = ["0 3 * * *"]\n  }\n  type = "batch"\n  group "g" {'),
      );
      const parsed = (await runCorpus(runDir))!;
      expect(parsed.map((r) => r.outcome)).to.deep.equal(['parsed', 'parsed', 'parsed', 'parsed']);
      const runs = await runOnAgent(runDir, parsed, { timeoutMs: 8000 });
      expect(runs.map((r) => [r.file, r.outcome])).to.deep.equal([
        ['a-runs.nomad', 'ran'],
        ['b-fails.nomad', 'failed'],
        ['c-windows.nomad', 'queued'],
        ['d-periodic.nomad', 'waits'],
      ]);
      expect(runs[1]!.detail).to.match(/^t: .*no such file or directory/);
      expect(runs[2]!.detail).to.equal('g: constraint ${attr.kernel.name} = windows filtered 1');
      expect(runs[3]!.detail).to.equal('periodic');
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  });

  it('an absent corpus is no results, not an error', async () => {
    expect(await runCorpus(join(dir, 'absent'))).to.equal(undefined);
  });
});
