/**
 * Canaries on the agent (issue #36 item 5), over HTTP on loopback with real raw_exec tasks: a job
 * update with `update { canary = 1 }` places its canary beside the old allocs and waits for
 * `deployment promote` (refused while the canary is not healthy); promotion completes the
 * rollout and makes the version stable; `auto_promote` promotes on its own; a failing canary with
 * `auto_revert` fails the deployment and registers the latest stable version again.
 * Health is task states with a short `min_healthy_time`; every wait is a blocking query.
 */
import { expect } from 'chai';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const SLEEP = "trap 'exit 0' TERM; while :; do sleep 0.1; done";

function job(version: string, command: string, update: Record<string, unknown> = {}) {
  return {
    Job: {
      ID: 'can',
      Name: 'can',
      Type: 'service',
      TaskGroups: [
        {
          Name: 'g',
          Count: 2,
          Update: { MaxParallel: 1, Canary: 1, HealthCheck: 'task_states', MinHealthyTime: 200e6, HealthyDeadline: 60e9, ...update },
          RestartPolicy: { Attempts: 0, Mode: 'fail', Interval: 60e9, Delay: 1e9 },
          ReschedulePolicy: { Attempts: 0, Unlimited: false },
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
  };
}

const allocs = async (agent: AgentProcess) => (await agent.req('GET', '/v1/job/can/allocations')).json as any[];
const live = (l: any[], v: number) => l.filter((a) => a.JobVersion === v && a.DesiredStatus === 'run');
/** The job's evaluations are all processed (nothing pending or blocked): what the agent decided is in. */
const settled = (l: any[]) => l.length > 0 && l.every((e) => e.Status === 'complete' || e.Status === 'canceled');

describe('agent: canaries', function () {
  this.timeout(120_000);
  let agent: AgentProcess | undefined;

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
  });

  it('a canary update waits for promote beside the old allocs; promote (refused until healthy) completes the rollout', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('0', SLEEP));
    // Version 0 places no canary: both allocs at once, and the version is stable once its deployment succeeds.
    const [d0] = await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.Status === 'successful', 'v0 deployed');
    expect([d0.TaskGroups.g.DesiredCanaries, d0.TaskGroups.g.PlacedCanaries, d0.TaskGroups.g.PlacedAllocs]).to.deep.equal([0, null, 2]);
    const versions0 = (await agent.req('GET', '/v1/job/can/versions')).json;
    expect(versions0.Versions.map((v: any) => [v.Version, v.Stable])).to.deep.equal([[0, true]]);

    // Version 1's canary never becomes healthy (a long min_healthy_time): promotion is refused.
    await agent.req('POST', '/v1/jobs', job('1', SLEEP, { MinHealthyTime: 600e9 }));
    const [d1] = await waitFor(
      agent,
      '/v1/job/can/deployments',
      (l: any[]) => l[0]?.JobVersion === 1 && l[0].TaskGroups.g.PlacedCanaries?.length === 1,
      'v1 canary',
    );
    expect([d1.Status, d1.StatusDescription, d1.TaskGroups.g.DesiredCanaries, d1.TaskGroups.g.Promoted, d1.TaskGroups.g.DesiredTotal]).to.deep.equal([
      'running',
      'Deployment is running but requires manual promotion',
      1,
      false,
      2,
    ]);
    const refused = await agent.req('POST', `/v1/deployment/promote/${d1.ID}`, { DeploymentID: d1.ID, All: true });
    expect([refused.status, refused.text]).to.deep.equal([400, '1 error occurred:\n\t* Task group "g" has 0/1 healthy allocations\n\n']);
    const cliRefused = await agent.main(['deployment', 'promote', d1.ID.slice(0, 8)]);
    expect(cliRefused.code).to.equal(1);
    expect(cliRefused.stderr).to.include('Task group "g" has 0/1 healthy allocations');

    // Version 2 cancels version 1's deployment and stops its canary (never promoted); its own canary is healthy soon.
    await agent.req('POST', '/v1/jobs', job('2', SLEEP));
    const [d2] = await waitFor(
      agent,
      '/v1/job/can/deployments',
      (l: any[]) => l[0]?.JobVersion === 2 && l[0].TaskGroups.g.HealthyAllocs === 1,
      'v2 canary healthy',
    );
    await waitFor(agent, '/v1/job/can/evaluations', settled, 'evaluations processed');
    let now = await allocs(agent);
    expect(live(now, 1)).to.deep.equal([]);
    expect(live(now, 0)).to.have.length(2);
    const canary = live(now, 2);
    expect(canary.map((a) => [a.Name, a.DeploymentStatus.Canary, a.DeploymentStatus.Healthy])).to.deep.equal([['can.g[0]', true, true]]);
    expect(d2.TaskGroups.g.PlacedCanaries).to.deep.equal([canary[0].ID]);
    const cancelled = (await agent.req('GET', `/v1/deployment/${d1.ID}`)).json;
    expect([cancelled.Status, cancelled.StatusDescription]).to.deep.equal(['cancelled', 'Cancelled due to newer version of job']);
    // Healthy but not promoted: the deployment still waits, nothing of version 0 was replaced.
    const waiting = (await agent.req('GET', `/v1/deployment/${d2.ID}`)).json;
    expect([waiting.Status, waiting.StatusDescription]).to.deep.equal(['running', 'Deployment is running but requires manual promotion']);
    const status = await agent.main(['deployment', 'status', d2.ID.slice(0, 8)]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.match(/\nDescription\s+= Deployment is running but requires manual promotion\n/);
    expect(status.stdout).to.match(
      /\nTask Group\s+Promoted\s+Desired\s+Canaries\s+Placed\s+Healthy\s+Unhealthy\s+Progress Deadline\ng\s+false\s+2\s+1\s+1\s+1\s+0\s+/,
    );

    // Promoted (the CLI, one group): the canary counts toward the total, the old allocs go.
    const promoted = await agent.main(['deployment', 'promote', '-group', 'g', d2.ID.slice(0, 8)]);
    expect(promoted.code, promoted.stdout + promoted.stderr).to.equal(0);
    expect(promoted.stdout).to.match(/^==> .*Monitoring evaluation/);
    const done = await waitFor(agent, `/v1/deployment/${d2.ID}`, (x) => x.Status !== 'running', 'v2 deployment ended');
    expect([done.Status, done.TaskGroups.g.Promoted, done.TaskGroups.g.HealthyAllocs, done.TaskGroups.g.PlacedAllocs]).to.deep.equal([
      'successful',
      true,
      2,
      2,
    ]);
    now = await allocs(agent);
    expect(live(now, 0)).to.deep.equal([]);
    expect(
      live(now, 2)
        .map((a) => [a.Name, a.DeploymentStatus.Canary])
        .sort(),
    ).to.deep.equal([
      ['can.g[0]', false],
      ['can.g[1]', false],
    ]);
    const versions = (await agent.req('GET', '/v1/job/can/versions')).json;
    expect(versions.Versions.map((v: any) => [v.Version, v.Stable])).to.deep.equal([
      [2, true],
      [1, false],
      [0, true],
    ]);
  });

  it('auto_promote promotes healthy canaries; a failing canary with auto_revert rolls back to the latest stable version', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('0', SLEEP));
    await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.Status === 'successful', 'v0 deployed');

    // auto_promote: no operator; the deployment ends successful, version 1 is stable.
    await agent.req('POST', '/v1/jobs', job('1', SLEEP, { AutoPromote: true, AutoRevert: true }));
    const [d1] = await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.JobVersion === 1, 'v1 deployment');
    expect(d1.StatusDescription).to.be.oneOf([
      'Deployment is running pending automatic promotion',
      'Deployment is running',
      'Deployment completed successfully',
    ]);
    const ok = await waitFor(agent, `/v1/deployment/${d1.ID}`, (x) => x.Status !== 'running', 'v1 deployment ended');
    expect([ok.Status, ok.TaskGroups.g.Promoted, ok.TaskGroups.g.DesiredCanaries, ok.TaskGroups.g.HealthyAllocs]).to.deep.equal(['successful', true, 1, 2]);

    // Version 2's canary fails at once: the deployment fails and version 1 (the latest stable) is registered again as version 3.
    await agent.req('POST', '/v1/jobs', job('2', 'exit 1', { AutoRevert: true }));
    const [failed] = await waitFor(
      agent,
      '/v1/job/can/deployments',
      (l: any[]) => l.some((d) => d.JobVersion === 2 && d.Status === 'failed'),
      'v2 failed',
    ).then((l: any[]) => l.filter((d) => d.JobVersion === 2));
    expect(failed.StatusDescription).to.equal('Failed due to unhealthy allocations - rolling back to job version 1');
    expect(failed.TaskGroups.g.AutoRevert).to.equal(true);
    const reverted = await waitFor(agent, '/v1/job/can', (j) => j.Version === 3, 'job reverted');
    expect(reverted.TaskGroups[0].Tasks[0].Env).to.deep.equal({ VERSION: '1' });
    await waitFor(agent, '/v1/job/can/evaluations', settled, 'evaluations processed');
    const now = await allocs(agent);
    // The failed canary stops; version 1's allocs carry on (updated in place to version 3).
    expect(now.filter((a) => a.JobVersion === 2).map((a) => a.DesiredStatus)).to.deep.equal(['stop']);
    expect(now.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running')).to.have.length(2);
    expect(live(now, 1).concat(live(now, 3))).to.have.length(2);
    // The revert's own deployment: the allocs it updated in place were healthy, so it succeeds and version 3 is stable.
    const [d3] = await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.JobVersion === 3 && l[0].Status !== 'running', 'v3 deployment ended');
    expect([d3.Status, d3.TaskGroups.g.HealthyAllocs]).to.deep.equal(['successful', 2]);

    // An operator's fail of a version whose group auto-reverts names the rollback too (CLI: Nomad's
    // words): to version 3 now, the newest stable one (version 1's spec).
    await agent.req('POST', '/v1/jobs', job('4', SLEEP, { AutoRevert: true, MinHealthyTime: 600e9 }));
    const [d4] = await waitFor(
      agent,
      '/v1/job/can/deployments',
      (l: any[]) => l[0]?.JobVersion === 4 && l[0].TaskGroups.g.PlacedCanaries?.length === 1,
      'v4 canary',
    );
    const fail = await agent.main(['deployment', 'fail', '-detach', d4.ID]);
    expect([fail.code, fail.stdout.trim()], fail.stderr).to.deep.equal([0, `Deployment "${d4.ID.slice(0, 8)}" failed. Auto-reverted to job version 3.`]);
    const f = (await agent.req('GET', `/v1/deployment/${d4.ID}`)).json;
    expect([f.Status, f.StatusDescription]).to.deep.equal(['failed', 'Deployment marked as failed - rolling back to job version 3']);
    expect((await waitFor(agent, '/v1/job/can', (j) => j.Version === 5, 'job reverted again')).TaskGroups[0].Tasks[0].Env).to.deep.equal({ VERSION: '1' });
  });

  it('progress_deadline: a canary that never turns healthy in time fails the deployment, and auto_revert rolls back', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('0', SLEEP));
    await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.Status === 'successful', 'v0 deployed');
    // Running but never healthy (min_healthy_time of 10 minutes) against a 500ms progress deadline.
    await agent.req('POST', '/v1/jobs', job('1', SLEEP, { MinHealthyTime: 600e9, ProgressDeadline: 500e6, AutoRevert: true }));
    const [d1] = await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.JobVersion === 1, 'v1 deployment');
    expect(d1.TaskGroups.g.RequireProgressBy).to.not.equal('0001-01-01T00:00:00Z');
    const failed = await waitFor(agent, `/v1/deployment/${d1.ID}`, (x) => x.Status !== 'running', 'v1 deployment ended');
    expect([failed.Status, failed.StatusDescription]).to.deep.equal(['failed', 'Failed due to progress deadline - rolling back to job version 0']);
    const reverted = await waitFor(agent, '/v1/job/can', (j) => j.Version === 2, 'job reverted');
    expect(reverted.TaskGroups[0].Tasks[0].Env).to.deep.equal({ VERSION: '0' });
    await waitFor(agent, '/v1/job/can/evaluations', settled, 'evaluations processed');
    const now = await allocs(agent);
    expect(now.filter((a) => a.JobVersion === 1).map((a) => a.DesiredStatus)).to.deep.equal(['stop']);
  });

  it('a failing canary without auto_revert fails the deployment and is stopped; the old allocs run on', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', job('0', SLEEP));
    await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.Status === 'successful', 'v0 deployed');
    await agent.req('POST', '/v1/jobs', job('1', 'exit 1'));
    const [d1] = await waitFor(agent, '/v1/job/can/deployments', (l: any[]) => l[0]?.JobVersion === 1 && l[0].Status !== 'running', 'v1 ended');
    expect([d1.Status, d1.StatusDescription, d1.TaskGroups.g.UnhealthyAllocs]).to.deep.equal(['failed', 'Failed due to unhealthy allocations', 1]);
    await waitFor(agent, '/v1/job/can/evaluations', settled, 'evaluations processed');
    const now = await allocs(agent);
    expect(now.filter((a) => a.JobVersion === 1).map((a) => [a.DesiredStatus, a.DesiredDescription])).to.deep.equal([
      ['stop', 'alloc not needed due to job update'],
    ]);
    expect(live(now, 0).map((a) => a.ClientStatus)).to.deep.equal(['running', 'running']);
    expect((await agent.req('GET', '/v1/job/can')).json.Version).to.equal(1);
  });
});
