import { expect } from 'chai';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain } from '../support/cli.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const NOMAD_FIXTURE = fileURLToPath(new URL('../fixtures/nomad-alloc.json', import.meta.url));
const noStack = (s: string) => expect(s, s).not.to.match(/\n\s+at /);

describe('berth CLI: flags, usage errors, validate, init (in-process)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-cli-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists every command and the exit codes; no arguments prints it to stderr with exit 2', async () => {
    const r = await runMain(['--help']);
    expect(r.code).to.equal(0);
    for (const c of ['run', 'status', 'logs', 'init', 'validate', 'demo', 'view']) expect(r.stdout).to.match(new RegExp(`^  ${c} `, 'm'));
    expect(r.stdout).to.include('130 / 143');
    const none = await runMain([]);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('usage: berth <command>');
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runMain([flag]);
      expect(r.code).to.equal(0);
      expect(r.stdout.trim()).to.equal(pkg.version);
    }
  });

  it('unknown commands, unknown flags and bad values get one line and exit 2, no stack trace', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--bogus'], /^berth: unknown flag '--bogus'/],
      [['launch'], /^berth: unknown command "launch"/],
      [['run', '--bogus', 'x.json'], /^berth run: unknown flag '--bogus'/],
      [['demo', '--port', 'abc'], /^berth demo: --port must be a port number \(1-65535\), got "abc"/],
      [['run', '--port', '70000', 'x.json'], /^berth run: --port must be a port number/],
      [['run'], /^berth run: run needs an allocation file/],
      [['run', '--quiet', '--json', 'x.json'], /cannot be used together/],
      [['logs', '--data-dir', dir, 'a', 't', '--tail', 'ten'], /^berth logs: --tail must be a non-negative integer, got "ten"/],
      [['status', 'a', 'b'], /^berth status: expects at most one id or prefix/],
      [['run', '--data-dir'], /^berth run: --data-dir needs a value|argument missing/],
    ];
    for (const [argv, re] of cases) {
      const r = await runMain(argv);
      expect(r.code, argv.join(' ')).to.equal(2);
      expect(r.stderr, argv.join(' ')).to.match(re);
      expect(r.stderr.trim().split('\n'), argv.join(' ')).to.have.length(1);
      noStack(r.stderr);
    }
  });

  it('view of a missing file or a file that is not a recording names it and exits 2', async () => {
    const missing = join(dir, 'rec.jsonl');
    let r = await runMain(['view', missing]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`^berth: ${missing}: not a recording`));
    writeFileSync(missing, 'not json\n');
    r = await runMain(['view', missing]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`^berth: ${missing}: not a recording`));
    expect((await runMain(['view', '--view-port', 'x', missing])).stderr).to.match(/^berth view: --view-port must be a port number/);
  });

  it('a missing file, a directory and invalid JSON are named, with the line and column of a syntax error; nothing is created', async () => {
    const before = readdirSync(tmpdir()).filter((n) => n.startsWith('berth-run-'));
    const missing = join(dir, 'nope.json');
    let r = await runMain(['run', missing]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim()).to.equal(`berth: ${missing}: cannot read: no such file`);
    r = await runMain(['validate', dir]);
    expect(r.stderr.trim()).to.equal(`berth: ${dir}: cannot read: is a directory`);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{\n  "job": {\n    "id": "x",,\n  }\n}\n');
    r = await runMain(['run', bad]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`^berth: ${bad}: invalid JSON: .*\\(line 3, column \\d+\\)\\n$`));
    noStack(r.stderr);
    r = await runMain(['run', '-'], '{"job": ');
    expect(r.stderr).to.match(/^berth: <stdin>: invalid JSON/);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('berth-run-'))).to.deep.equal(before);
  });

  it('validate prints every bad field path and exits 2; run refuses the same file before creating anything', async () => {
    const file = join(dir, 'alloc.json');
    writeFileSync(
      file,
      JSON.stringify({
        job: {
          id: 'x',
          type: 'cron',
          taskGroups: [
            {
              name: 'g',
              tasks: [
                { name: 'a/b', driver: 'podman', config: {} },
                { driver: 'raw_exec', config: {} },
              ],
            },
          ],
        },
        taskGroup: 'nope',
      }),
    );
    const r = await runMain(['validate', file]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`^berth: ${file}: invalid allocation \\(\\d+ problems\\):`));
    for (const path of [
      'job.type',
      'job.taskGroups[0].tasks[0].name',
      'job.taskGroups[0].tasks[1].name',
      'taskGroup',
      'driver "podman" is not supported by berth (job.taskGroups[0].tasks[0].driver)',
    ])
      expect(r.stderr).to.include(`\n  ${path}`);
    const dataDir = join(dir, 'data');
    const run = await runMain(['run', '--data-dir', dataDir, file]);
    expect(run.code).to.equal(2);
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('validate refuses what run would refuse: driver config, misspelled keys with a did-you-mean (exit 2, as run)', async () => {
    const task = (over: Record<string, unknown>) => ({ name: 't', driver: 'raw_exec', config: { command: '/bin/true' }, ...over });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['config {}', task({ config: {} }), 'job.taskGroups[0].tasks[0].config.command: missing required config "command" (a non-empty string)'],
      ['command as an array', task({ config: { command: ['/bin/true'] } }), 'job.taskGroups[0].tasks[0].config.command: must be a string'],
      ['args as a string', task({ config: { command: '/bin/echo', args: 'a b' } }), 'job.taskGroups[0].tasks[0].config.args: must be a list of strings'],
      [
        'arg for args',
        task({ config: { command: '/bin/echo', arg: ['a'] } }),
        'job.taskGroups[0].tasks[0].config.arg: unknown field "arg" (did you mean "args"?)',
      ],
      ['enviroment for env', task({ enviroment: { A: 'b' } }), 'job.taskGroups[0].tasks[0].enviroment: unknown field "enviroment" (did you mean "env"?)'],
      [
        'resources.memory',
        task({ resources: { memory: 64 } }),
        'job.taskGroups[0].tasks[0].resources.memory: unknown field "memory" (did you mean "memoryMB"?)',
      ],
      ['a NUL in env', task({ env: { A: 'x\u0000y' } }), 'job.taskGroups[0].tasks[0].env.A: must not contain NUL'],
      ['memory past 2^53 bytes', task({ resources: { memoryMB: 2 ** 40 } }), 'job.taskGroups[0].tasks[0].resources.memoryMB: must be at most 8589934592 MB'],
      ['a template without a destination', task({ templates: [{ data: 'x' }] }), 'job.taskGroups[0].tasks[0].templates[0].destination: is required'],
    ];
    for (const [what, t, line] of cases) {
      const file = join(dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ job: { id: 'x', type: 'batch', taskGroups: [{ name: 'g', tasks: [t] }] }, taskGroup: 'g' }));
      const v = await runMain(['validate', file]);
      expect(v.code, what).to.equal(2);
      expect(v.stderr, what).to.include(`\n  ${line}`);
      const dataDir = join(dir, 'data');
      const run = await runMain(['run', '--data-dir', dataDir, file]);
      expect(run.code, what).to.equal(2);
      expect(run.stderr, what).to.include(`\n  ${line}`);
      expect(existsSync(dataDir), what).to.equal(false);
    }
  });

  it('run refuses an allocation that would wait for others (no servers to ask), naming the fields; validate notes it', async () => {
    const dataDir = join(dir, 'data');
    const r = await runMain(['run', '--data-dir', dataDir, NOMAD_FIXTURE]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim()).to.equal(
      `berth: ${NOMAD_FIXTURE}: previousAllocation and preemptedAllocations make the allocation wait for others that are not in this data dir, and berth run cannot ask any servers about them; run it with the --data-dir where those allocations ran, or remove them to run the allocation on its own`,
    );
    expect(existsSync(dataDir)).to.equal(false);
    const v = await runMain(['validate', NOMAD_FIXTURE]);
    expect(v.code).to.equal(0);
    expect(v.stderr).to.match(/^berth: note: .*previousAllocation and preemptedAllocations/);
  });

  it('validate accepts every example file, berth JSON and Nomad API JSON alike', async () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));
    expect(files.length).to.be.greaterThanOrEqual(6);
    for (const f of [...files.map((f) => join(EXAMPLES, f)), NOMAD_FIXTURE]) {
      const r = await runMain(['validate', f]);
      expect(r.code, `${f}: ${r.stderr}`).to.equal(0);
      expect(r.stdout).to.match(/: valid: job /);
    }
  });

  it('init writes a runnable batch or service example, explains the fields and never overwrites without --force', async () => {
    const file = join(dir, 'alloc.json');
    let r = await runMain(['init', file]);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include('job.type');
    expect(r.stdout).to.include('tasks[].driver');
    expect(JSON.parse(readFileSync(file, 'utf8')).job.type).to.equal('batch');
    expect((await runMain(['validate', file])).code).to.equal(0);
    r = await runMain(['init', '--service', file]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim()).to.equal(`berth: ${file}: already exists (use --force to overwrite)`);
    r = await runMain(['init', '--service', '--force', file]);
    expect(r.code).to.equal(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).job.type).to.equal('service');
    expect((await runMain(['init', '--batch', '--service', file])).code).to.equal(2);
  });

  it('a data dir that cannot be one is named, exit 2', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, '');
    const r = await runMain(['run', '--data-dir', file, join(EXAMPLES, 'hello.json')]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(new RegExp(`^berth: ${file}: cannot use as data dir: ENOTDIR`));
    noStack(r.stderr);
  });

  it('status and logs on a dir without berth state exit 2 and name the dir', async () => {
    for (const argv of [
      ['status', '--data-dir', dir],
      ['logs', '--data-dir', dir, 'abc', 'web'],
    ]) {
      const r = await runMain(argv);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(new RegExp(`^berth: ${dir}: no berth state here`));
    }
  });
});
