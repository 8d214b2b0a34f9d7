/**
 * Job files with HCL2 expressions (issue #36 item 3), of our own: `locals` (several blocks,
 * referring to each other and to variables, cycles named), Nomad's functions (`file` relative to
 * the job file), `for` expressions, conditionals and `dynamic` blocks, evaluated before decoding;
 * and, when the shared corpus is present, how many of its files parse.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobspecError } from '../../../../index.ts';
import { jobFromApi, parseJobspec } from '../../../../agent/jobspec/index.ts';
import { corpusDir, runCorpus } from '../../../../scripts/corpus.ts';

const JOB = `variable "env" {
  type    = string
  default = "prod"
}

locals {
  name    = "web-\${local.suffix}"
  ports   = { http = 8080, admin = 9090 }
}

locals {
  suffix  = upper(var.env)
  workers = var.env == "prod" ? 3 : 1
  args    = [for i in range(local.workers) : format("--worker=%02d", i)]
  banner  = file("banner.txt")
}

job "hcl2" {
  meta = merge({ team = "a" }, { env = var.env })

  group "g" {
    count = local.workers

    network {
      dynamic "port" {
        for_each = local.ports
        iterator = p
        labels   = [p.key]
        content {
          static = p.value
        }
      }
    }

    dynamic "task" {
      for_each = ["one", "two"]
      labels   = ["\${local.name}-\${task.value}"]
      content {
        driver = "raw_exec"
        config {
          command = "/bin/echo"
          args    = concat(local.args, ["\${NOMAD_ALLOC_DIR}/\${task.key}"])
        }
        env {
          BANNER = trimspace(local.banner)
          KEYS   = join(",", keys(local.ports))
        }
      }
    }
  }
}
`;

describe('jobspec: HCL2 expressions in job files', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-hcl2-'));
    await writeFile(join(dir, 'banner.txt'), '  hello  \n');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const parse = (text: string, vars: Record<string, string> = {}) => parseJobspec(text, { filename: join(dir, 'hcl2.nomad.hcl'), vars }) as Promise<any>;

  it('locals, functions, for, conditionals and dynamic blocks are evaluated before decoding', async () => {
    const api = await parse(JOB);
    expect(api.Meta).to.deep.equal({ team: 'a', env: 'prod' });
    const g = api.TaskGroups[0];
    expect(g.Count).to.equal(3);
    expect(g.Networks[0].ReservedPorts).to.deep.equal([
      { Label: 'admin', Value: 9090, To: 0 },
      { Label: 'http', Value: 8080, To: 0 },
    ]);
    expect(g.Tasks.map((t: any) => t.Name)).to.deep.equal(['web-PROD-one', 'web-PROD-two']);
    expect(g.Tasks[1].Config.args).to.deep.equal(['--worker=00', '--worker=01', '--worker=02', '${NOMAD_ALLOC_DIR}/1']);
    expect(g.Tasks[0].Env).to.deep.equal({ BANNER: 'hello', KEYS: 'admin,http' });
    expect(jobFromApi(api).taskGroups[0]!.tasks).to.have.length(2);
  });

  it('blocks a dynamic block generates keep its place among the written ones, as dynblock expands in place', async () => {
    const text = JOB.replace(
      '    dynamic "task" {',
      '    task "first" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n\n    dynamic "task" {',
    )
      .replace('        env {\n          BANNER', '        env {\n          BANNER')
      .replace(/(\n {2}\}\n\}\n)$/, '\n    task "last" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }$1');
    const api = await parse(text);
    expect(api.TaskGroups[0].Tasks.map((t: any) => t.Name)).to.deep.equal(['first', 'web-PROD-one', 'web-PROD-two', 'last']);
  });

  it('a -var value flows through the locals that use it', async () => {
    const api = await parse(JOB, { env: 'dev' });
    expect(api.TaskGroups[0].Count).to.equal(1);
    expect(api.TaskGroups[0].Tasks[0].Name).to.equal('web-DEV-one');
  });

  it('a cycle of locals is an error naming them; a duplicate local is refused as Nomad words it', async () => {
    const cyclic = JOB.replace('suffix  = upper(var.env)', 'suffix  = local.name');
    const err = (await parse(cyclic).catch((e: unknown) => e)) as JobspecError;
    expect(err).to.be.instanceOf(JobspecError);
    expect(err.issues.join('\n')).to.match(
      /Cycle in local values; The locals refer to each other in a circle: local\.(name|suffix) -> local\.(name|suffix) -> local\.\1\./,
    );
    const dup = JOB.replace('workers = var.env', 'name = "x"\n  workers = var.env');
    const e2 = (await parse(dup).catch((e: unknown) => e)) as JobspecError;
    expect(e2.issues.join('\n')).to.include('Duplicate value in locals; Duplicate name definition found.');
  });

  it('file and fileexists read relative to the job file’s directory, abspath to the working directory', async () => {
    const text = JOB.replace('KEYS   = join(",", keys(local.ports))', 'KEYS   = "${fileexists("banner.txt")} ${fileexists("nope.txt")} ${abspath("x")}"');
    const api = await parse(text);
    expect(api.TaskGroups[0].Tasks[0].Env).to.deep.equal({ BANNER: 'hello', KEYS: `true false ${join(process.cwd(), 'x')}` });
  });

  it('every local is evaluated, used or not: one no expression uses still fails the file', async () => {
    const unused = JOB.replace('banner  = file("banner.txt")', 'banner  = file("banner.txt")\n  unused  = nope()');
    const err = (await parse(unused).catch((e: unknown) => e)) as JobspecError;
    expect(err).to.be.instanceOf(JobspecError);
    expect(err.issues).to.deep.equal(['16:3: locals[1].unused: Call to unknown function; There is no function named "nope".']);
  });

  it('every expression problem of the file comes in one pass with its line, and file() without AllowFS fails as Nomad does', async () => {
    const bad = JOB.replace('KEYS   = join(",", keys(local.ports))', 'KEYS   = regex("a", "b")').replace('meta = merge(', 'meta = mrege(');
    const err = (await parse(bad).catch((e: unknown) => e)) as JobspecError;
    expect(err.issues).to.deep.equal([
      '19:3: job.meta: Call to unknown function; There is no function named "mrege".',
      '46:11: job.group.g[0].dynamic.task[0].content[0].env[0].KEYS: Call to unknown function; There is no function named "regex".',
    ]);
    const noFs = (await parseJobspec(JOB, { filename: join(dir, 'hcl2.nomad.hcl'), allowFs: false }).catch((e: unknown) => e)) as JobspecError;
    expect(noFs.issues).to.deep.equal(['15:3: locals[1].banner: Error in function call; Call to function "file" failed: filesystem function disabled.']);
  });

  it('a dynamic block without for_each, or over a number, is an error at the block; a string a function builds past the bound is refused', async () => {
    const noEach = JOB.replace('for_each = ["one", "two"]\n', '');
    const e1 = (await parse(noEach).catch((e: unknown) => e)) as JobspecError;
    expect(e1.issues).to.deep.equal([
      '21:3: job.taskGroups[0].tasks: is required',
      '35:5: job.group.g[0].dynamic.task[0]: Missing required argument; The argument "for_each" is required, but no definition was found.',
    ]);
    const overNumber = JOB.replace('for_each = ["one", "two"]', 'for_each = 3');
    const e2 = (await parse(overNumber).catch((e: unknown) => e)) as JobspecError;
    expect(e2.issues).to.include(
      '36:7: job.group.g[0].dynamic.task[0].for_each: Invalid dynamic for_each value; Cannot use a number value in for_each. An iterable collection is required.',
    );
    const big = JOB.replace('KEYS   = join(",", keys(local.ports))', 'KEYS   = join("", [for i in range(1000) : format("%03000d", i)])');
    const e3 = (await parse(big).catch((e: unknown) => e)) as JobspecError;
    expect(e3.message).to.match(/KEYS: with variables substituted this string is longer than 2097152 characters/);
  });

  it('nested for expressions asking for billions of values, a huge format width and a huge setproduct are refused quickly', async () => {
    const started = Date.now();
    const bomb = JOB.replace(
      'KEYS   = join(",", keys(local.ports))',
      'KEYS   = length([for a in range(1000) : [for b in range(1000) : [for c in range(1000) : 1]]])',
    );
    const e1 = (await parse(bomb).catch((e: unknown) => e)) as JobspecError;
    expect(e1).to.be.instanceOf(JobspecError);
    expect(e1.message).to.match(/KEYS: the job's expressions take more than 1000000 steps to evaluate; refused/);
    expect(Date.now() - started).to.be.below(4000);
    const wide = JOB.replace('KEYS   = join(",", keys(local.ports))', 'KEYS   = format("%0999999999d", 1)');
    const e2 = (await parse(wide).catch((e: unknown) => e)) as JobspecError;
    expect(e2.issues.join('\n')).to.include('Error in function call; Call to function "format" failed: width or precision over 1048576 at 0.');
    const product = JOB.replace('KEYS   = join(",", keys(local.ports))', 'KEYS   = length(setproduct(range(1000), range(1000)))');
    const e3 = (await parse(product).catch((e: unknown) => e)) as JobspecError;
    expect(e3.issues.join('\n')).to.include('Call to function "setproduct" failed: the product has more than 100000 elements.');
  });

  it('the shared corpus of real job files: at least 45 of 79 parse (skipped when the corpus is absent)', async function () {
    const corpus = corpusDir();
    if (!existsSync(corpus)) this.skip();
    this.timeout(60_000);
    const results = (await runCorpus(corpus))!;
    expect(results).to.have.length(79);
    expect(results.filter((r) => r.outcome === 'parsed').length).to.be.at.least(45);
    expect(results.find((r) => r.file === 'angrycub-hcl2-dynamic.nomad')?.outcome).to.equal('parsed');
  });
});
