/**
 * The nomad-style command line against a real agent: job run/plan/status/stop, alloc
 * status/fs/logs/signal/restart/stop, node status, eval status, operator scheduler, with their
 * exit codes; ids by prefix. Commands run in this process through the CLI's `main` (the binary's
 * code, without a process start per command); the seed and crash specs run the binary itself.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const JOB = `variable "greeting" {
  type = string
}
job "cli" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args = ["-c", "echo \${var.greeting}; echo line2; trap 'exit 0' TERM; trap 'echo got-usr2' USR2; while :; do sleep 0.2; done"]
      }
      kill_timeout = "1s"
      resources {
        cpu = 20
        memory = 16
      }
    }
  }
}
`;

describe('agent: the command line', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  let dir: string;

  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-cli-'));
    writeFileSync(join(dir, 'cli.nomad.hcl'), JOB);
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plans, runs, shows and stops a job; alloc commands take id prefixes', async () => {
    const file = join(dir, 'cli.nomad.hcl');
    const plan = await agent.main(['job', 'plan', '-var', 'greeting=hi-there', file]);
    expect(plan.code, plan.stderr).to.equal(1); // nomad's: allocations would be created
    expect(plan.stdout).to.match(/Task Group: "g" \(1 create\)/);
    expect(plan.stdout).to.match(/All tasks successfully allocated/);

    const missing = await agent.main(['job', 'run', file]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/greeting/);

    const run = await agent.main(['job', 'run', '-var', 'greeting=hi-there', file]);
    expect(run.code, run.stderr).to.equal(0);
    const allocId = /Allocation "(\w+)" created/.exec(run.stdout)![1]!;
    const evalId = /Monitoring evaluation "(\w+)"/.exec(run.stdout)![1]!;
    // the task's events as they come, each once, in order
    const events = [...run.stdout.matchAll(new RegExp(`Task "t" of allocation "${allocId}": ([^:\\n]+)`, 'g'))].map((m) => m[1]);
    expect(events.slice(0, 2), run.stdout).to.deep.equal(['Received', 'Task Setup']);
    expect(
      events.filter((e) => e === 'Started'),
      run.stdout,
    ).to.have.length(1);

    // -check-index: Nomad's refusal when the index is not the job's, success when it is.
    const stale = await agent.main(['job', 'run', '-detach', '-check-index', '0', '-var', 'greeting=hi-there', file]);
    expect(stale.code).to.equal(1);
    expect(stale.stderr).to.match(/Enforcing job modify index 0: job already exists/);
    const jmi = (await agent.req('GET', '/v1/job/cli')).json.JobModifyIndex as number;
    const wrong = await agent.main(['job', 'run', '-detach', '-check-index', String(jmi + 7), '-var', 'greeting=hi-there', file]);
    expect(wrong.stderr).to.match(new RegExp(`Enforcing job modify index ${jmi + 7}: job exists with conflicting job modify index: ${jmi}`));
    const right = await agent.main(['job', 'run', '-detach', '-check-index', String(jmi), '-var', 'greeting=hi-there', file]);
    expect(right.code, right.stderr).to.equal(0);

    const status = await agent.main(['job', 'status', 'cli']);
    expect(status.stdout).to.match(/Status\s+= running/);
    expect(status.stdout).to.match(new RegExp(`${allocId}\\s+\\w+\\s+g\\s+0\\s+run\\s+running`));
    expect((await agent.main(['job', 'status'])).stdout).to.match(/cli\s+service\s+50\s+running/);
    // nomad's catch-all status: the job list, then any id or prefix of a job, alloc or eval
    expect((await agent.main(['status'])).stdout).to.match(/cli\s+service\s+50\s+running/);
    expect((await agent.main(['status', 'cl'])).stdout).to.match(/^ID\s+= cli\n/);
    expect((await agent.main(['status', allocId])).stdout).to.match(/^ID\s+= [0-9a-f-]{36}\nEval ID/);
    // nomad's eval status shortens the id unless -verbose.
    expect((await agent.main(['status', evalId])).stdout).to.match(new RegExp(`^ID\\s+= ${evalId.slice(0, 8)}\nCreate Time`));
    const none = await agent.main(['status', 'zzzz']);
    expect([none.code, none.stderr]).to.deep.equal([1, 'berth: No matches found for "zzzz"\n']);

    const alloc = await agent.main(['alloc', 'status', allocId]);
    expect(alloc.code).to.equal(0);
    expect(alloc.stdout).to.match(/Client Status\s+= running/);
    expect(alloc.stdout).to.match(/Task "t" is "running"/);
    const full = await waitFor(agent, `/v1/allocations?prefix=${allocId}`, (l: any[]) => l.length === 1, 'the alloc');
    const id = full[0].ID;

    await waitFor(agent, `/v1/client/fs/stat/${id}?path=alloc/logs/t.stdout.0`, (s) => s.Size >= 'hi-there\nline2\n'.length, 'the log written');
    const logs = await agent.main(['alloc', 'logs', allocId, 't']);
    expect(logs.stdout).to.equal('hi-there\nline2\n');
    const tail = await agent.main(['alloc', 'logs', '-tail', '-n', '1', allocId]);
    expect(tail.stdout).to.equal('line2\n');
    const fs = await agent.main(['alloc', 'fs', allocId, 'alloc/logs']);
    expect(fs.stdout).to.match(/t\.stdout\.0/);
    const cat = await agent.main(['alloc', 'fs', allocId, 'alloc/logs/t.stdout.0']);
    expect(cat.stdout).to.equal('hi-there\nline2\n');

    expect((await agent.main(['alloc', 'signal', '-s', 'SIGUSR2', allocId, 't'])).code).to.equal(0);
    const restart = await agent.main(['alloc', 'restart', allocId, 't']);
    expect(restart.code, restart.stderr).to.equal(0);
    const nope = await agent.main(['alloc', 'status', 'ffffffff']);
    expect(nope.code).to.equal(1);
    expect(nope.stderr).to.match(/No allocation\(s\) with prefix or id "ffffffff"/);

    const ev = await agent.main(['eval', 'status', evalId]);
    expect(ev.stdout).to.match(/TriggeredBy\s+= job-register/);
    expect(ev.stdout).to.match(/Status\s+= complete/);
    const node = await agent.main(['node', 'status']);
    expect(node.stdout).to.match(/ready/);

    const stop = await agent.main(['job', 'stop', '-purge', 'cli']);
    expect(stop.code, stop.stderr + stop.stdout).to.equal(0);
    // the purge's evaluation is shown, or (already over) collected with the purged job's rows
    expect(stop.stdout).to.match(/finished with status "complete"|finished: it and the purged job's rows are collected/);
    expect((await agent.main(['job', 'status', 'cli'])).code).to.equal(1);
  });

  it('reads and sets the scheduler configuration', async () => {
    const set = await agent.main(['operator', 'scheduler', 'set-config', '-preempt-service-scheduler=true']);
    expect([set.code, set.stdout.trim()]).to.deep.equal([0, 'Scheduler configuration updated!']);
    const get = await agent.main(['operator', 'scheduler', 'get-config']);
    expect(get.stdout).to.match(/Preemption Service Scheduler\s+= true/);
    const usage = await agent.main(['operator', 'scheduler', 'set-config']);
    expect(usage.code).to.equal(2);
  });

  it('exits 1 with a hint when no agent answers', async () => {
    const url = agent.url;
    agent.url = 'http://127.0.0.1:1';
    try {
      const r = await agent.main(['job', 'status']);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/cannot reach the agent at http:\/\/127\.0\.0\.1:1.*BERTH_ADDR/);
    } finally {
      agent.url = url;
    }
  });

  it('alloc stop (by prefix) stops the alloc, and its evaluation places a replacement under the same name', async () => {
    const file = join(dir, 'stopper.nomad.hcl');
    writeFileSync(file, JOB.replace('job "cli"', 'job "stopper"'));
    expect((await agent.main(['job', 'run', '-detach', '-var', 'greeting=hi', file])).code).to.equal(0);
    const [first] = await waitFor(agent, '/v1/job/stopper/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'stopper running');
    const stop = await agent.main(['alloc', 'stop', '-detach', first.ID.slice(0, 8)]);
    expect(stop.code, stop.stderr + stop.stdout).to.equal(0);
    const after = await waitFor(
      agent,
      '/v1/job/stopper/allocations',
      (l: any[]) => l.length === 2 && l.some((a) => a.ID !== first.ID && a.ClientStatus === 'running'),
      'a replacement running',
    );
    const old = after.find((a: any) => a.ID === first.ID);
    const replacement = after.find((a: any) => a.ID !== first.ID);
    expect([old.DesiredStatus, replacement.Name]).to.deep.equal(['stop', first.Name]);
    expect((await agent.main(['job', 'stop', '-purge', 'stopper'])).code).to.equal(0);
  });
});
