/**
 * nomad's job subcommands beyond run/stop/status/plan, against a real agent: `job init` writes a
 * job that runs as it is (its HTTP port answers), then `job allocs`, `job history`,
 * `job inspect` (whose output `job run` takes back) and `job scale`.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { runMain, stopCliProcesses } from '../support/cli.ts';
import { skipOrFailInCi } from '../support/skips.ts';

describe('agent: job init, allocs, history, inspect and scale', function () {
  /**
   * Reads a check endpoint until `test` passes. It is no blocking query (nor is Nomad's), so
   * this polls, 50 ms apart; checks run each second at the least.
   */
  const pollChecks = async (path: string, test: (c: Record<string, any>) => boolean, what: string): Promise<Record<string, any>> => {
    for (let i = 0; i < 200; i++) {
      const r = await agent.req('GET', path);
      if (r.status === 200 && test(r.json)) return r.json;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`gave up waiting for ${what}`);
  };

  this.timeout(120_000);
  let agent: AgentProcess;
  let dir: string;
  const cwd = process.cwd();

  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'berth-job-cmds-'));
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    process.chdir(cwd);
    await agent?.stop();
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('job run of a driver the node does not offer exits 2 at once with the placement failure, never waits for it', async () => {
    const file = join(dir, 'typo.nomad.hcl');
    writeFileSync(
      file,
      'job "typo" {\n  group "g" {\n    task "t" {\n      driver = "rawexec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n',
    );
    const r = await agent.main(['job', 'run', file]);
    expect(r.code, r.stdout + r.stderr).to.equal(2);
    expect(r.stdout).to.match(/finished with status "complete" but failed to place all allocations:/);
    expect(r.stdout).to.match(/Task Group "g" \(failed to place 1 allocation\):\n\s+\* Constraint "missing drivers": 1 nodes excluded by filter/);
    expect(r.stdout).to.match(/waiting for additional capacity to place remainder/);
    // Nothing was placed for the client to refuse: the job has no alloc, its eval is blocked.
    expect((await agent.req('GET', '/v1/job/typo/allocations')).json).to.deep.equal([]);
    const evals = (await agent.req('GET', '/v1/job/typo/evaluations')).json as Array<{ Status: string }>;
    expect(evals.map((e) => e.Status).sort()).to.deep.equal(['blocked', 'complete']);
    expect((await agent.req('DELETE', '/v1/job/typo?purge=true')).status).to.equal(200);
  });

  it('job status of a job whose constraint the node fails shows the "Placement Failure" section with the constraint’s text', async () => {
    const file = join(dir, 'windows.nomad.hcl');
    writeFileSync(
      file,
      'job "windows" {\n  constraint {\n    attribute = "${attr.kernel.name}"\n    value     = "windows"\n  }\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n',
    );
    const run = await agent.main(['job', 'run', '-detach', file]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    await waitFor(agent, '/v1/job/windows/evaluations', (l: Array<{ Status: string }>) => l.some((e) => e.Status === 'blocked'), 'a blocked eval');
    const r = await agent.main(['job', 'status', 'windows']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('\nPlacement Failure\nTask Group "g":\n  * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter\n');
    expect((await agent.req('DELETE', '/v1/job/windows?purge=true')).status).to.equal(200);
  });

  it("job run of an exec job shows its chroot build's progress from the agent's event stream, not silence", async function () {
    if (process.getuid?.() !== 0) return skipOrFailInCi(this, 'the exec driver needs root');
    const file = join(dir, 'chrooted.nomad.hcl');
    writeFileSync(
      file,
      'job "chrooted" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n',
    );
    const r = await agent.main(['job', 'run', file]);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const progress = r.stdout.split('\n').filter((l) => / Task "t" of allocation "\w+": building chroot: [\d,]+ files, [\d,]+ dirs/.test(l));
    expect(progress.length, r.stdout).to.be.greaterThan(0);
    // Before the task ran: the progress comes while the alloc is still pending.
    const runningAt = r.stdout.search(/status "pending" -> "(running|complete)"/);
    expect(r.stdout.indexOf(progress[0]!)).to.be.within(0, runningAt);
    expect((await agent.req('DELETE', '/v1/job/chrooted?purge=true')).status).to.equal(200);
  });

  it('job init writes an example that validates, with and without comments, and never overwrites', async () => {
    process.chdir(dir);
    try {
      const r = await runMain(['job', 'init']);
      expect([r.code, r.stdout.trim()]).to.deep.equal([0, 'Example job file written to example.nomad.hcl']);
      const full = readFileSync(join(dir, 'example.nomad.hcl'), 'utf8');
      expect(full).to.match(/^\s*# /m);
      const again = await runMain(['job', 'init']);
      expect(again.code).to.equal(2);
      expect(again.stderr).to.include('example.nomad.hcl: already exists');
      expect(readFileSync(join(dir, 'example.nomad.hcl'), 'utf8')).to.equal(full);
      const short = await runMain(['job', 'init', '-short', 'short.nomad.hcl']);
      expect(short.code, short.stderr).to.equal(0);
      expect(readFileSync(join(dir, 'short.nomad.hcl'), 'utf8')).not.to.match(/#/);
      const v = await runMain(['job', 'validate', 'short.nomad.hcl']);
      expect(v.code, v.stderr).to.equal(0);
      expect(v.stdout).to.include('job example (service, priority 50): web (1 x server/raw_exec)');
      const json = await runMain(['job', 'init', '-json']);
      expect(json.code, json.stderr).to.equal(0);
      expect(JSON.parse(readFileSync(join(dir, 'example.nomad.json'), 'utf8')).Job.TaskGroups[0].Name).to.equal('web');
    } finally {
      process.chdir(cwd);
    }
  });

  it('the example runs on berth as it is: its port answers; allocs, history, inspect and scale show and change it', async () => {
    const run = await agent.main(['job', 'run', join(dir, 'example.nomad.hcl')]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const alloc = await waitFor(agent, '/v1/job/example/allocations', (a) => a.length === 1 && a[0].ClientStatus === 'running', 'the example running');
    const full = await waitFor(agent, `/v1/allocation/${alloc[0].ID}`, (a) => a.AllocatedResources?.Shared?.Ports?.length === 1, 'its port');
    const port = full.AllocatedResources.Shared.Ports[0];
    let answer = '';
    for (let i = 0; i < 100 && !answer; i++) {
      answer = await fetch(`http://${port.HostIP}:${port.Value}/`).then(
        (r) => r.text(),
        () => new Promise<string>((r) => setTimeout(() => r(''), 50)),
      );
    }
    expect(answer.trim()).to.equal(`hello from ${alloc[0].ID}`);

    // its check passes (the first round may race the server's start; the next is 10 s on, so
    // read the endpoint until it says success or the alloc's health is decided)
    const checks = await agent.main(['alloc', 'checks', alloc[0].ID.slice(0, 6)]);
    expect(checks.code, checks.stderr).to.equal(0);
    expect(checks.stdout).to.match(
      /^Status of 1 Nomad Service Checks\n\nID\s+= [0-9a-f]{32}\nService\s+= example-web\nGroup\s+= web\nTask\s+= \(group\)\nCheck\s+= service: "example-web" check\nMode\s+= healthiness\nStatus\s+= (success|failure|pending)\n/,
    );
    const status = await agent.main(['alloc', 'status', alloc[0].ID]);
    expect(status.stdout).to.match(
      /\nNomad Service Checks:\nService\s+Task\s+Name\s+Mode\s+Status\nexample-web\s+\(group\)\s+service: "example-web" check\s+healthiness\s+(success|failure|pending)\n/,
    );
    // its update block gives its first version a deployment, so the alloc has a health to show
    expect(full.DeploymentID, 'the example is deployed').to.be.a('string').that.is.not.empty;
    expect(status.stdout).to.match(/\nDeployment ID\s+= [0-9a-f]{8}\nDeployment Health\s+= (healthy|unhealthy|unset)\n/);

    const allocs = await agent.main(['job', 'allocs', 'example']);
    expect(allocs.code, allocs.stderr).to.equal(0);
    expect(allocs.stdout).to.match(/^ID\s+Node ID\s+Task Group\s+Version\s+Desired\s+Status\s+Created\s+Modified$/m);
    expect(allocs.stdout).to.include(alloc[0].ID.slice(0, 8));
    expect((await agent.main(['job', 'allocs', 'nosuch'])).code).to.equal(1);

    const inspect = await agent.main(['job', 'inspect', 'example']);
    expect(inspect.code, inspect.stderr).to.equal(0);
    const job = JSON.parse(inspect.stdout) as { Job: { ID: string; TaskGroups: Array<{ Count: number }> } };
    expect(job.Job.ID).to.equal('example');
    // inspect's output is a job file: change the count and run it back
    job.Job.TaskGroups[0]!.Count = 2;
    writeFileSync(join(dir, 'inspected.json'), JSON.stringify(job));
    const rerun = await agent.main(['job', 'run', '-detach', join(dir, 'inspected.json')]);
    expect(rerun.code, rerun.stderr).to.equal(0);

    const history = await agent.main(['job', 'history', 'example']);
    expect(history.code, history.stderr).to.equal(0);
    expect(history.stdout).to.match(/^Version\s+= 1\nStable\s+= (true|false)\nSubmit Date\s+= .+\n\nVersion\s+= 0\n/);
    const v0 = await agent.main(['job', 'inspect', '-version', '0', 'example']);
    expect(JSON.parse(v0.stdout).Job.TaskGroups[0].Count).to.equal(1);
    expect((await agent.main(['job', 'inspect', '-version', '9', 'example'])).stderr).to.include('has no version 9');

    const scale = await agent.main(['job', 'scale', '-detach', 'example', '1']);
    expect(scale.code, scale.stderr).to.equal(0);
    expect(scale.stdout).to.match(/^Job scale successful\nEvaluation ID: [0-9a-f-]{36}$/m);
    await waitFor(agent, '/v1/job/example/scale', (s) => s.TaskGroups.web.Desired === 1, 'the count back at 1');
    const bad = await agent.main(['job', 'scale', 'example', 'web', 'many']);
    expect([bad.code, bad.stderr]).to.deep.equal([2, 'berth job scale: COUNT must be a whole number, got "many" (see berth job scale --help)\n']);

    const evaluated = await agent.main(['job', 'eval', 'example']);
    expect(evaluated.code, evaluated.stderr).to.equal(0);
    const evalId = /Monitoring evaluation "(\w+)"/.exec(evaluated.stdout)![1]!;
    const ev = (await agent.req('GET', `/v1/evaluations?prefix=${evalId}`)).json[0];
    expect([ev.TriggeredBy, ev.JobID, ev.Status]).to.deep.equal(['job-eval', 'example', 'complete']);
    expect((await agent.req('POST', '/v1/job/nosuch/evaluate', {})).status).to.equal(404);

    const stop = await agent.main(['job', 'stop', '-purge', 'example']);
    expect(stop.code, stop.stderr).to.equal(0);
  });

  it("GET /v1/client/allocation/:id/checks: each check's result in Nomad's shape (success with its status code, failure)", async () => {
    const SERVE = `require('http').createServer((q, s) => { s.statusCode = q.url === '/ok' ? 200 : 503; s.end('r:' + q.url) }).listen(+process.env.NOMAD_PORT_http, process.env.NOMAD_IP_http)`;
    const job = {
      Job: {
        ID: 'checked',
        TaskGroups: [
          {
            Name: 'g',
            Networks: [{ DynamicPorts: [{ Label: 'http' }] }],
            Services: [
              {
                Name: 'checked-web',
                PortLabel: 'http',
                Provider: 'nomad',
                Checks: [
                  { Name: 'ok', Type: 'http', Path: '/ok', Interval: 1e9, Timeout: 1e9 },
                  { Name: 'bad', Type: 'http', Path: '/bad', Interval: 1e9, Timeout: 1e9 },
                ],
              },
            ],
            Tasks: [{ Name: 's', Driver: 'raw_exec', Config: { command: process.execPath, args: ['-e', SERVE] }, Resources: { CPU: 50, MemoryMB: 32 } }],
          },
        ],
      },
    };
    expect((await agent.req('POST', '/v1/jobs', job)).status).to.equal(200);
    const [a] = await waitFor(agent, '/v1/job/checked/allocations', (l) => l.length === 1 && l[0].ClientStatus === 'running', 'running');
    const results = await pollChecks(
      `/v1/client/allocation/${a.ID}/checks`,
      (c) => Object.values(c).some((r: any) => r.Check === 'ok' && r.Status === 'success'),
      'the ok check passing',
    );
    const byName = Object.fromEntries(Object.values(results).map((r: any) => [r.Check, r]));
    expect(byName.ok).to.include({ Mode: 'healthiness', Status: 'success', StatusCode: 200, Group: 'g', Service: 'checked-web' });
    expect(byName.ok.ID).to.match(/^[0-9a-f]{32}$/);
    expect(results[byName.ok.ID]).to.deep.equal(byName.ok);
    expect(byName.ok.Output).to.include('r:/ok');
    expect(byName.ok.Timestamp).to.be.within(Math.floor(Date.now() / 1000) - 60, Math.floor(Date.now() / 1000) + 1);
    expect(byName.bad.Status).to.be.oneOf(['failure', 'pending']);
    const bad = await waitFor(
      agent,
      `/v1/client/allocation/${a.ID}/checks`,
      (c) => Object.values(c).some((r: any) => r.Check === 'bad' && r.Status === 'failure'),
      'bad failing',
    );
    expect(Object.values(bad).find((r: any) => r.Check === 'bad')).to.include({ StatusCode: 503 });
    expect((await agent.req('GET', '/v1/client/allocation/00000000-0000-0000-0000-000000000000/checks')).status).to.equal(404);
    await agent.req('DELETE', '/v1/job/checked?purge=true');
  });
});
