/**
 * The jobspec corpus (spec/fixtures/jobspecs/, written from Nomad's jobspec documentation): each
 * job file parses to the API JSON its `.expected.json` holds (the fields it lists, with Nomad's
 * canonical defaults) and to berth's job, or fails with the listed lines, file and line.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobFromApi, jobToApi, parseJobspec } from '../../agent/jobspec/index.ts';
import { JobspecError, type UnsupportedStanza } from '../../index.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'jobspecs');

interface Expected {
  job?: unknown;
  berth?: unknown;
  absent?: string[];
  error?: string[];
  line?: number;
  column?: number;
  vars?: Record<string, string>;
  varFile?: string;
  warnPath?: string;
}

/** Asserts every field of `want` is in `got` (arrays element by element), naming the path. */
function expectSubset(got: unknown, want: unknown, path = ''): void {
  if (Array.isArray(want)) {
    expect(got, path).to.be.an('array').with.length(want.length);
    want.forEach((w, i) => expectSubset((got as unknown[])[i], w, `${path}[${i}]`));
  } else if (want && typeof want === 'object') {
    expect(got, path).to.be.an('object');
    for (const [k, w] of Object.entries(want)) expectSubset((got as Record<string, unknown>)[k], w, `${path}.${k}`);
  } else expect(got, path).to.equal(want);
}

const get = (o: unknown, dotted: string) => dotted.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);

const files = readdirSync(DIR).filter((f) => /\.(nomad\.hcl|json)$/.test(f) && !f.endsWith('.expected.json'));

describe('parseJobspec: the corpus', () => {
  it('has every stanza berth runs and the refused ones', () => {
    const all = files.map((f) => readFileSync(join(DIR, f), 'utf8')).join('\n');
    for (const stanza of [
      'job',
      'group',
      'task',
      'network',
      'port',
      'service',
      'check',
      'check_restart',
      'artifact',
      'update',
      'migrate',
      'reschedule',
      'restart',
      'ephemeral_disk',
      'lifecycle',
      'logs',
      'resources',
      'disconnect',
      'variable',
      'template',
      'vault',
      'volume',
      'connect',
      'device',
      'constraint',
    ])
      expect(all, stanza).to.match(new RegExp(`(^|\\s)${stanza}\\s+("[^"]*"\\s*)?\\{`, 'm'));
  });

  for (const file of files) {
    const name = file.replace(/\.(nomad\.hcl|json)$/, '');
    const expected = JSON.parse(readFileSync(join(DIR, `${name}.expected.json`), 'utf8')) as Expected;
    const text = readFileSync(join(DIR, file), 'utf8');
    const opts = {
      filename: file,
      vars: expected.vars,
      varFiles: expected.varFile !== undefined ? [{ filename: `${name}.vars.hcl`, text: expected.varFile }] : undefined,
    };
    if (expected.error) {
      it(`${file}: refused with the file, line and every problem`, async () => {
        let err: unknown;
        try {
          await parseJobspec(text, opts);
        } catch (e) {
          err = e;
        }
        expect(err, 'no error').to.be.instanceOf(JobspecError);
        const e = err as JobspecError;
        expect(e.file).to.equal(file);
        for (const line of expected.error!) expect(e.message).to.include(line);
        if (expected.line !== undefined) expect(e.line).to.equal(expected.line);
        if (expected.column !== undefined) expect(e.column).to.equal(expected.column);
        expect(e.message.startsWith(`${file}:`)).to.equal(true);
      });
      if (expected.warnPath)
        it(`${file}: with unsupported: 'warn' the stanza is left out and reported`, async () => {
          const warnings: UnsupportedStanza[] = [];
          const api = await parseJobspec(text, { ...opts, unsupported: 'warn', onWarning: (w) => warnings.push(w) });
          expect(warnings.map((w) => w.path)).to.deep.equal([expected.warnPath]);
          expect((api.TaskGroups![0] as any).Tasks[0]).to.not.have.property('Templates');
        });
      continue;
    }
    it(`${file}: parses to Nomad's API job and to berth's job`, async () => {
      const api = await parseJobspec(text, opts);
      expectSubset(api, expected.job, 'Job');
      for (const p of expected.absent ?? []) expect(get(api, p), p).to.equal(undefined);
      const job = jobFromApi(api);
      if (expected.berth) expectSubset(job, expected.berth, 'job');
      // berth's job survives the trip back to the API shape and in again.
      expect(jobFromApi(jobToApi(job))).to.deep.equal(job);
    });
  }
});

describe('parseJobspec: variables and JSON', () => {
  const hcl = `variable "n" {\n  type = number\n}\njob "j" {\n  group "g" {\n    count = var.n\n    task "t" {\n      driver = "mock_driver"\n      config {\n        run_for = "1s"\n      }\n    }\n  }\n}\n`;

  it('an unset variable, an undeclared -var and a value of the wrong type are errors naming the variable', async () => {
    await expectReject(parseJobspec(hcl, { filename: 'v.hcl' }), /unset variable "n"/);
    await expectReject(parseJobspec(hcl, { filename: 'v.hcl', vars: { n: '1', m: '2' } }), /undefined -var variable "m"/);
    await expectReject(parseJobspec(hcl, { filename: 'v.hcl', vars: { n: 'three' } }), /variable "n": a number is required/);
  });

  it("evaluates expressions (var.n + 1), and an expression that fails is an error in HCL's words, not text passed on", async () => {
    const text = hcl.replace('count = var.n', 'count = var.n + 1');
    const api = await parseJobspec(text, { filename: 'v.hcl', vars: { n: '1' } });
    expect((api.TaskGroups![0] as any).Count).to.equal(2);
    await expectReject(
      parseJobspec(hcl.replace('count = var.n', 'count = nope(var.n)'), { filename: 'v.hcl', vars: { n: '1' } }),
      /Call to unknown function; There is no function named "nope"/,
    );
  });

  it('leaves an unknown ${NAME} as written for the task env, as jobspec2 does; an undefined local is an error', async () => {
    const text =
      'job "u" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/echo"\n        args    = ["${MINIO_VOLUMES}", "x-${HOME}-y"]\n      }\n    }\n  }\n}\n';
    const api = await parseJobspec(text, { filename: 'u.hcl' });
    expect((api.TaskGroups![0] as any).Tasks[0].Config.args).to.deep.equal(['${MINIO_VOLUMES}', 'x-${HOME}-y']);
    await expectReject(
      parseJobspec(text.replace('${HOME}', '${local.home}'), { filename: 'u.hcl' }),
      /7:9: job\.group\.g\[0\]\.task\.t\[0\]\.config\[0\]\.args\[1\]: Unsupported attribute; This object does not have an attribute named "home"/,
    );
  });

  it('a value comes from the default, then the -var-files in order, then the -vars: the later wins', async () => {
    const text = hcl.replace('type = number\n', 'type    = number\n  default = 1\n');
    const count = async (o: Parameters<typeof parseJobspec>[1]) => ((await parseJobspec(text, o)).TaskGroups![0] as { Count: number }).Count;
    const files = [
      { filename: 'a.hcl', text: 'n = 2\n' },
      { filename: 'b.hcl', text: 'n = 3\n' },
    ];
    expect(await count({ filename: 'v.hcl' })).to.equal(1);
    expect(await count({ filename: 'v.hcl', varFiles: files })).to.equal(3);
    expect(await count({ filename: 'v.hcl', varFiles: files, vars: { n: '4' } })).to.equal(4);
  });

  it('reads -var-file paths', async () => {
    const api = await parseJobspec(hcl, { filename: 'v.hcl', varFiles: ['n.hcl'], readFile: async (p) => (p === 'n.hcl' ? 'n = 4\n' : '') });
    expect((api.TaskGroups![0] as { Count: number }).Count).to.equal(4);
  });

  it('JSON: unknown keys and refused stanzas are named, as for HCL', async () => {
    const job = {
      ID: 'x',
      TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Vault: { Policies: ['x'] }, Envv: {} }] }],
    };
    const err = await expectReject(
      parseJobspec(JSON.stringify({ Job: job }), { filename: 'x.json' }),
      /vault is not supported by berth \(job\.taskGroups\[0\]\.tasks\[0\]\.vault\)/,
    );
    expect(err.message).to.include('job.taskGroups[0].tasks[0].Envv: unknown field "Envv" (did you mean "Env"?)');
    expect(err.file).to.equal('x.json');
  });
});

async function expectReject(p: Promise<unknown>, re: RegExp): Promise<JobspecError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(JobspecError);
    expect((e as Error).message).to.match(re);
    return e as JobspecError;
  }
  throw new Error(`expected a JobspecError matching ${re}`);
}
