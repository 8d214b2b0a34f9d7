import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain } from '../support/cli.ts';

const JOBS = fileURLToPath(new URL('../fixtures/jobspecs/', import.meta.url));

describe('berth job validate (in-process)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-job-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a valid HCL job: exit 0 and what it holds', async () => {
    const r = await runMain(['job', 'validate', join(JOBS, 'network-service.nomad.hcl')]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('Job validation successful');
    expect(r.stdout).to.include('job api (service, priority 50): api (2 x server/raw_exec)');
  });

  it('-var and -var-file (Nomad single-dash spelling) set variables', async () => {
    const vf = join(dir, 'prod.vars.hcl');
    writeFileSync(vf, 'replicas = 7\n');
    const r = await runMain(['job', 'validate', join(JOBS, 'variables.nomad.hcl'), '-var-file', vf, '-var', 'verbose=true']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('g (7 x t/raw_exec)');
    const bad = await runMain(['job', 'validate', join(JOBS, 'variables.nomad.hcl'), '-var', 'replicas=many']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('variable "replicas": a number is required');
  });

  it('typos and refused stanzas: exit 2, every problem on its own line with file:line:column', async () => {
    const r = await runMain(['job', 'validate', join(JOBS, 'unknown-key.nomad.hcl')]);
    expect(r.code).to.equal(2);
    const file = join(JOBS, 'unknown-key.nomad.hcl');
    expect(r.stderr).to.include(`berth: ${file}:8:9: invalid job (3 problems):`);
    expect(r.stderr).to.include('\n  11:7: job.taskGroups[0].tasks[0].enviroment: unknown field "enviroment" in task (did you mean "env"?)');
    const t = await runMain(['job', 'validate', join(JOBS, 'unsupported-vault-volume.nomad.hcl')]);
    expect(t.code).to.equal(2);
    expect(t.stderr).to.include('vault is not supported by berth (job.taskGroups[0].tasks[0].vault)');
  });

  it('a refused stanza names the file once, gives a way forward, and -unsupported=warn leaves it out with a warning', async () => {
    const f = join(dir, 'vault.nomad.hcl');
    writeFileSync(
      f,
      'job "v" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config { command = "/bin/true" }\n      vault {\n        policies = ["p"]\n      }\n    }\n  }\n}\n',
    );
    const r = await runMain(['job', 'validate', f]);
    expect(r.code).to.equal(2);
    expect(r.stderr.split(f).length - 1, r.stderr).to.equal(2); // the error line and the -unsupported hint
    expect(r.stderr).to.include('vault: berth has no Vault');
    expect(r.stderr).to.include(`berth job validate -unsupported=warn ${f}`);
    const w = await runMain(['job', 'validate', '-unsupported', 'warn', f]);
    expect(w.code, w.stderr).to.equal(0);
    expect(w.stderr).to.match(/1 warning:\n\n\* vault is not supported by berth.*: left out/);
    expect(w.stdout).to.include('Job validation successful');
    const bad = await runMain(['job', 'validate', '-unsupported', 'maybe', f]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('-unsupported takes warn or refuse');
  });

  it('a raw_exec task with config {} is refused as berth validate and run refuse it', async () => {
    const f = join(dir, 'j.nomad.hcl');
    writeFileSync(f, 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {}\n    }\n  }\n}\n');
    const r = await runMain(['job', 'validate', f]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('job.taskGroups[0].tasks[0].config.command: missing required config "command" (a non-empty string)');
  });

  it('berth validate of a job file points at berth job validate', async () => {
    const r = await runMain(['validate', join(JOBS, 'minimal-service.nomad.hcl')]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('this looks like a Nomad job file: check it with berth job validate');
  });

  it('usage: no file, an unknown subcommand, -var without =', async () => {
    expect((await runMain(['job', 'validate'])).code).to.equal(2);
    const u = await runMain(['job', 'frobnicate']);
    expect(u.code).to.equal(2);
    expect(u.stderr).to.include('unknown job subcommand "frobnicate"');
    expect((await runMain(['job', 'validate', 'x.hcl', '-var', 'novalue'])).stderr).to.include('-var needs name=value');
    const none = await runMain(['job']);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('usage: berth job <subcommand>');
  });

  it('takes JSON as {"Job": ...} or the bare job and --var with two dashes; a driver berth lacks is refused even with -unsupported=warn', async () => {
    const job = {
      ID: 'j',
      Name: 'j',
      Type: 'batch',
      TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] }],
    };
    for (const [name, body] of [
      ['wrapped.json', { Job: job }],
      ['bare.json', job],
    ] as const) {
      writeFileSync(join(dir, name), JSON.stringify(body));
      const r = await runMain(['job', 'validate', join(dir, name)]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include('job j (batch, priority 50): g (1 x t/raw_exec)');
    }
    const dashes = await runMain(['job', 'validate', join(JOBS, 'variables.nomad.hcl'), '--var', 'replicas=many']);
    expect(dashes.code).to.equal(2);
    expect(dashes.stderr).to.include('variable "replicas": a number is required');
    const f = join(dir, 'podman.nomad.hcl');
    writeFileSync(f, 'job "p" {\n  group "g" {\n    task "t" {\n      driver = "podman"\n      config { image = "x" }\n    }\n  }\n}\n');
    for (const argv of [[f], ['-unsupported=warn', f]]) {
      const r = await runMain(['job', 'validate', ...argv]);
      expect(r.code, argv.join(' ')).to.equal(2);
      expect(r.stderr).to.include('driver "podman" is not supported by berth (job.taskGroups[0].tasks[0].driver)');
    }
  });

  it('job plan and job run take -unsupported=warn and -var-file as job validate does, before asking the agent', async () => {
    const f = join(dir, 'vault.nomad.hcl');
    writeFileSync(
      f,
      'job "v" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config { command = "/bin/true" }\n      vault {\n        policies = ["p"]\n      }\n    }\n  }\n}\n',
    );
    const vars = join(dir, 'bad.vars.hcl');
    writeFileSync(vars, 'replicas = "many"\n');
    const nowhere = ['-address', 'http://127.0.0.1:9'];
    for (const cmd of ['plan', 'run']) {
      const refused = await runMain(['job', cmd, ...nowhere, f]);
      expect(refused.code, cmd).to.equal(2);
      expect(refused.stderr).to.include('vault is not supported by berth');
      const warned = await runMain(['job', cmd, ...nowhere, '-unsupported=warn', f]);
      expect(warned.stderr, cmd).to.match(
        /1 warning:\n\n\* vault is not supported by berth.*: left out\n[^]*cannot reach the agent at http:\/\/127\.0\.0\.1:9/,
      );
      const badVars = await runMain(['job', cmd, ...nowhere, '-var-file', vars, join(JOBS, 'variables.nomad.hcl')]);
      expect(badVars.code, cmd).to.equal(2);
      expect(badVars.stderr).to.include('bad.vars.hcl: variable "replicas": a number is required, got "many"');
    }
  });
});
