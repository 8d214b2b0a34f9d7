/**
 * Deployments: a job update with `update { max_parallel = 1 }` replaces one alloc at a time, each
 * batch waiting for the previous one's health (here task states: every task running for
 * `min_healthy_time`); the deployment is readable at /v1/job/:id/deployments and
 * /v1/deployment/:id, ends successful, and a failed one stops there.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const job = (version: string, command: string) => ({
  Job: {
    ID: 'roll',
    Name: 'roll',
    Type: 'service',
    TaskGroups: [
      {
        Name: 'g',
        Count: 3,
        Update: { MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: 300e6, HealthyDeadline: 60e9 },
        RestartPolicy: { Attempts: 0, Mode: 'fail', Interval: 60e9, Delay: 1e9 },
        Tasks: [
          {
            Name: 't',
            Driver: 'raw_exec',
            Env: { VERSION: version },
            Config: { command: '/bin/sh', args: ['-c', command] },
            KillTimeout: 1e9,
            Resources: { CPU: 20, MemoryMB: 16 },
          },
        ],
      },
    ],
  },
});

const SLEEP = "trap 'exit 0' TERM; while :; do sleep 0.1; done";

describe('agent: deployments', function () {
  this.timeout(90_000);
  let agent: AgentProcess | undefined;

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
  });

  it('rolls max_parallel allocs at a time, each batch after the previous is healthy; a failed deployment stops', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('1', SLEEP));
    await waitFor(agent, '/v1/job/roll/allocations', (l: any[]) => l.length === 3 && l.every((a) => a.ClientStatus === 'running'), 'v0 running');
    // Version 0 has its deployment too (Nomad's reconciler makes one on the first run): all three at once.
    const [d0] = await waitFor(agent, '/v1/job/roll/deployments', (l: any[]) => l[0]?.Status === 'successful', 'the v0 deployment done');
    expect([d0.JobVersion, d0.TaskGroups.g.DesiredTotal, d0.TaskGroups.g.PlacedAllocs, d0.TaskGroups.g.HealthyAllocs]).to.deep.equal([0, 3, 3, 3]);

    await agent.req('POST', '/v1/jobs', job('2', SLEEP));
    // Watch every change until the rollout ends: never more than one new-version alloc unhealthy.
    let index = 0;
    let most = 0;
    for (;;) {
      const r = await agent.req('GET', `/v1/job/roll/allocations?index=${index}&wait=20s`);
      index = Number(r.headers['x-nomad-index']);
      const v1 = (r.json as any[]).filter((a) => a.JobVersion === 1 && a.DesiredStatus === 'run');
      most = Math.max(most, v1.filter((a) => a.DeploymentStatus?.Healthy !== true).length);
      if (v1.length === 3 && v1.every((a) => a.DeploymentStatus?.Healthy === true)) break;
    }
    expect(most).to.equal(1);
    const deps = (await agent.req('GET', '/v1/job/roll/deployments')).json as any[];
    expect(deps.map((x) => x.JobVersion)).to.deep.equal([1, 0]);
    const d = (await agent.req('GET', `/v1/deployment/${deps[0].ID}`)).json;
    expect([d.Status, d.JobVersion, d.TaskGroups.g.DesiredTotal, d.TaskGroups.g.HealthyAllocs]).to.deep.equal(['successful', 1, 3, 3]);

    // berth deployment list|status show it as nomad does, by id prefix.
    const list = await agent.main(['deployment', 'list']);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.match(
      new RegExp(
        `^ID\\s+Job ID\\s+Job Version\\s+Status\\s+Description\\n${d.ID.slice(0, 8)}\\s+roll\\s+1\\s+successful\\s+Deployment completed successfully$`,
        'm',
      ),
    );
    const status = await agent.main(['deployment', 'status', d.ID.slice(0, 5)]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.match(/^ID\s+= \w{8}\nJob ID\s+= roll\nJob Version\s+= 1\nStatus\s+= successful\n/);
    expect(status.stdout).to.match(/\nDeployed\nTask Group\s+Desired\s+Placed\s+Healthy\s+Unhealthy\s+Progress Deadline\ng\s+3\s+3\s+3\s+0\s+/);
    expect((await agent.main(['deployment', 'status', 'ffffffff'])).stderr).to.include('No deployment(s) with prefix or id "ffffffff" found');

    // berth job run follows a rolling update to its end.
    const dir = mkdtempSync(join(tmpdir(), 'berth-agent-deploy-'));
    try {
      writeFileSync(join(dir, 'roll.json'), JSON.stringify(job('3', SLEEP)));
      const run = await agent.cli(['job', 'run', join(dir, 'roll.json')]);
      expect(run.code, run.stdout + run.stderr).to.equal(0);
      expect(run.stdout).to.match(/Monitoring deployment "\w+" of job "roll"/);
      expect(run.stdout).to.match(/Deployment "\w+" successful: Deployment completed successfully/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Version 3 fails at once: the first batch's alloc is unhealthy, the rollout stops there.
    await agent.req('POST', '/v1/jobs', job('4', 'exit 1'));
    const failed = await waitFor(agent, '/v1/job/roll/deployments', (l: any[]) => l[0]?.JobVersion === 3 && l[0].Status === 'failed', 'v3 deployment failed');
    expect(failed[0].StatusDescription).to.equal('Failed due to unhealthy allocations');
    const allocs = (await agent.req('GET', '/v1/job/roll/allocations')).json as any[];
    expect(allocs.filter((a) => a.JobVersion === 3)).to.have.length(1);
    expect(allocs.filter((a) => a.JobVersion === 2 && a.ClientStatus === 'running')).to.have.length(2);
  });

  it('issue #35: version 0 has a deployment: job run monitors it, deployment status shows it; a newer version cancels one still running', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    const dir = mkdtempSync(join(tmpdir(), 'berth-agent-deploy-v0-'));
    try {
      writeFileSync(join(dir, 'roll.json'), JSON.stringify(job('1', SLEEP)));
      const run = await agent.cli(['job', 'run', join(dir, 'roll.json')]);
      expect(run.code, run.stdout + run.stderr).to.equal(0);
      expect(run.stdout).to.match(/Monitoring deployment "\w+" of job "roll"/);
      expect(run.stdout).to.match(/Deployment "\w+" successful: Deployment completed successfully/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const [d0] = (await agent.req('GET', '/v1/job/roll/deployments')).json as any[];
    expect([d0.JobVersion, d0.Status, d0.TaskGroups.g.DesiredTotal, d0.TaskGroups.g.PlacedAllocs]).to.deep.equal([0, 'successful', 3, 3]);
    const allocs = (await agent.req('GET', '/v1/job/roll/allocations')).json as any[];
    for (const a of allocs) expect((await agent.req('GET', `/v1/allocation/${a.ID}`)).json.DeploymentID).to.equal(d0.ID);
    const status = await agent.main(['deployment', 'status', d0.ID.slice(0, 8)]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.match(/^ID\s+= \w{8}\nJob ID\s+= roll\nJob Version\s+= 0\nStatus\s+= successful\n/);

    // A job whose first deployment waits on health a long time: the next version cancels it, as Nomad's reconciler does.
    const slow = (v: string) => {
      const j = job(v, SLEEP);
      j.Job.ID = j.Job.Name = 'slow';
      j.Job.TaskGroups[0]!.Update.MinHealthyTime = 600e9;
      return j;
    };
    await agent.req('POST', '/v1/jobs', slow('1'));
    const [first] = await waitFor(agent, '/v1/job/slow/deployments', (l: any[]) => l[0]?.TaskGroups.g.PlacedAllocs === 3, 'the slow v0 deployment placed');
    expect(first.Status).to.equal('running');
    await agent.req('POST', '/v1/jobs', slow('2'));
    const cancelled = await waitFor(agent, `/v1/deployment/${first.ID}`, (x) => x.Status !== 'running', 'the v0 deployment cancelled');
    expect([cancelled.Status, cancelled.StatusDescription]).to.deep.equal(['cancelled', 'Cancelled due to newer version of job']);
  });

  it('pause holds a rollout after its batch (health still counted), resume goes on to success; fail stops it; ended ones refuse', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('1', SLEEP));
    await waitFor(agent, '/v1/job/roll/deployments', (l: any[]) => l[0]?.Status === 'successful', 'the v0 deployment done');
    await agent.req('POST', '/v1/jobs', job('2', SLEEP));
    const [d] = await waitFor(agent, '/v1/job/roll/deployments', (l: any[]) => l[0]?.JobVersion === 1, 'the v1 deployment');
    const paused = await agent.main(['deployment', 'pause', d.ID.slice(0, 8)]);
    expect([paused.code, paused.stdout.trim()], paused.stderr).to.deep.equal([0, `Deployment "${d.ID.slice(0, 8)}" paused`]);
    // the first batch's alloc still becomes healthy, and is counted; no second batch follows it
    const held = await waitFor(agent, `/v1/deployment/${d.ID}`, (x) => x.TaskGroups.g.HealthyAllocs === 1, 'one healthy while paused');
    expect([held.Status, held.StatusDescription]).to.deep.equal(['paused', 'Deployment is paused']);
    const evals = (await agent.req('GET', '/v1/job/roll/evaluations')).json as any[];
    expect(evals.filter((e) => e.TriggeredBy === 'deployment-watcher' && e.CreateIndex > d.CreateIndex)).to.deep.equal([]);
    const v1 = ((await agent.req('GET', '/v1/job/roll/allocations')).json as any[]).filter((a) => a.JobVersion === 1);
    expect(v1).to.have.length(1);

    const resumed = await agent.main(['deployment', 'resume', '-detach', d.ID]);
    expect([resumed.code, resumed.stdout.trim()], resumed.stderr).to.deep.equal([0, `Deployment "${d.ID.slice(0, 8)}" resumed`]);
    const done = await waitFor(agent, `/v1/deployment/${d.ID}`, (x) => x.Status !== 'running', 'the v1 deployment ended');
    expect([done.Status, done.TaskGroups.g.HealthyAllocs]).to.deep.equal(['successful', 3]);

    // ended: each action is refused with Nomad's words
    const again = await agent.req('POST', `/v1/deployment/pause/${d.ID}`, { DeploymentID: d.ID, Pause: true });
    expect([again.status, again.text.trim()]).to.deep.equal([400, "can't pause terminal deployment"]);
    const failEnded = await agent.main(['deployment', 'fail', d.ID]);
    expect(failEnded.code).to.equal(1);
    expect(failEnded.stderr).to.include("can't fail terminal deployment");

    // a new version's rollout, failed by the operator: no further batch; an ended one is not promoted
    await agent.req('POST', '/v1/jobs', job('3', SLEEP));
    const [d2] = await waitFor(agent, '/v1/job/roll/deployments', (l: any[]) => l[0]?.JobVersion === 2, 'the v2 deployment');
    const failed = await agent.main(['deployment', 'fail', d2.ID]);
    expect(failed.code, failed.stderr).to.equal(0);
    expect(failed.stdout).to.match(/^Deployment "\w{8}" failed\n==> .*Monitoring evaluation/);
    const f = (await agent.req('GET', `/v1/deployment/${d2.ID}`)).json;
    expect([f.Status, f.StatusDescription]).to.deep.equal(['failed', 'Deployment marked as failed']);
    // the fail's evaluation (which the CLI followed to its end) placed nothing more
    const v2 = ((await agent.req('GET', '/v1/job/roll/allocations')).json as any[]).filter((a) => a.JobVersion === 2);
    expect(v2).to.have.length(1);
    const promote = await agent.req('POST', `/v1/deployment/promote/${d2.ID}`, { DeploymentID: d2.ID, All: true });
    expect([promote.status, promote.text.trim()]).to.deep.equal([400, "can't promote terminal deployment"]);
    expect((await agent.req('POST', '/v1/deployment/fail/nosuch')).status).to.equal(404);
  });
});
