/**
 * The agent's own actors in berth's viewer: every evaluation the broker processes is an
 * `eval-<id>` actor the client's viewer feed shows (here through the feed's recording, the same
 * records a `/ui` page gets), from `scheduling` to its final state; every deployment is a
 * `deployment-<id>` watcher actor from `running` to how it ended.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecording, type ViewerRecord } from '../../index.ts';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';

describe('agent: evaluations in the viewer', function () {
  this.timeout(60_000);
  let agent: Agent | undefined;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-viewer-'));
  });
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows each evaluation as an eval-<id> actor while it is scheduled, then its final state', async () => {
    const file = join(dir, 'feed.ndjson');
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined, client: { record: file } });
    const res = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      body: JSON.stringify({
        Job: {
          ID: 'shown',
          Type: 'batch',
          TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
        },
      }),
    });
    const { EvalID } = (await res.json()) as { EvalID: string };
    expect(EvalID).to.match(/^[0-9a-f-]{36}$/);
    // Wait for the evaluation to finish through a blocking query on it.
    for (let index = 0; ;) {
      const r = await fetch(`${agent.url}/v1/evaluation/${EvalID}?index=${index}&wait=5s`);
      index = Number(r.headers.get('x-nomad-index'));
      if (((await r.json()) as { Status: string }).Status === 'complete') break;
    }
    await agent.close();
    agent = undefined;

    const records = readRecording(file).records.filter((r: ViewerRecord) => 'id' in r && r.id === `eval-${EvalID}`);
    const actor = records.find((r) => r.k === 'actor');
    expect(actor, 'an actor record for the evaluation').to.include({ name: `eval-${EvalID}` });
    const states = records.filter((r) => r.k === 'state').map((r) => `${(r as { state: string }).state}:${(r as { status: string }).status}`);
    expect(states).to.deep.equal(['scheduling:active', 'complete:done']);
  });

  it('shows each deployment as a deployment-<id> watcher actor until it ends', async () => {
    const file = join(dir, 'feed.ndjson');
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined, client: { record: file } });
    const job = (version: string) => ({
      Job: {
        ID: 'roll',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Count: 2,
            Update: { MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: 100e6, HealthyDeadline: 60e9 },
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Env: { VERSION: version },
                Config: { command: '/bin/sh', args: ['-c', "trap 'exit 0' TERM; while :; do sleep 0.1; done"] },
                KillTimeout: 1e9,
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    });
    const post = (body: unknown) => fetch(`${agent!.url}/v1/jobs`, { method: 'POST', body: JSON.stringify(body) });
    const until = async (path: string, test: (json: any) => boolean) => {
      for (let index = 0; ;) {
        const r = await fetch(`${agent!.url}${path}${path.includes('?') ? '&' : '?'}index=${index}&wait=5s`);
        index = Number(r.headers.get('x-nomad-index'));
        const json = await r.json();
        if (test(json)) return json;
      }
    };
    await post(job('1'));
    await until('/v1/job/roll/allocations', (l: any[]) => l.length === 2 && l.every((a) => a.ClientStatus === 'running'));
    await post(job('2'));
    const [d] = await until('/v1/job/roll/deployments', (l: any[]) => l[0]?.Status === 'successful');
    expect(agent.core.deploymentWatchers.watching).to.deep.equal([]);
    await agent.close();
    agent = undefined;

    const records = readRecording(file).records.filter((r: ViewerRecord) => 'id' in r && r.id === `deployment-${d.ID}`);
    expect(
      records.find((r) => r.k === 'actor'),
      'an actor record for the deployment',
    ).to.include({ name: `deployment-${d.ID}` });
    const states = records.filter((r) => r.k === 'state').map((r) => `${(r as { state: string }).state}:${(r as { status: string }).status}`);
    expect(states).to.deep.equal(['running:active', 'successful:done']);
  });
});
