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

  it('an absent corpus is no results, not an error', async () => {
    expect(await runCorpus(join(dir, 'absent'))).to.equal(undefined);
  });
});
