/**
 * Nomad's operator endpoints as its tools use them: the scheduler configuration's check-and-set
 * (`?cas=N` applies only at index N) and its value kept across a restart, and the raft
 * configuration of a one-node agent.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { AgentProcess } from '../support/agent.ts';

describe('agent: operator endpoints as Nomad serves them', function () {
  this.timeout(60_000);
  let agent: AgentProcess;

  before(async function () {
    this.timeout(60_000);
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
  });

  it('PUT /v1/operator/scheduler/configuration?cas=N: a stale N answers Updated false and changes nothing; the current N applies', async () => {
    const before = (await agent.req('GET', '/v1/operator/scheduler/configuration')).json;
    const index = before.SchedulerConfig.ModifyIndex as number;
    const was = before.SchedulerConfig.PreemptionConfig.BatchSchedulerEnabled as boolean;
    const body = { PreemptionConfig: { BatchSchedulerEnabled: !was } };

    const stale = await agent.req('PUT', `/v1/operator/scheduler/configuration?cas=${index + 1000}`, body);
    expect(stale.status).to.equal(200);
    expect(stale.json.Updated).to.equal(false);
    const after = (await agent.req('GET', '/v1/operator/scheduler/configuration')).json;
    expect(after.SchedulerConfig.PreemptionConfig.BatchSchedulerEnabled).to.equal(was);
    expect(after.SchedulerConfig.ModifyIndex).to.equal(index);

    const bad = await agent.req('PUT', '/v1/operator/scheduler/configuration?cas=abc', body);
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('Error parsing cas value');

    const fresh = await agent.req('POST', `/v1/operator/scheduler/configuration?cas=${index}`, body);
    expect(fresh.json.Updated).to.equal(true);
    const now = (await agent.req('GET', '/v1/operator/scheduler/configuration')).json;
    expect(now.SchedulerConfig.PreemptionConfig.BatchSchedulerEnabled).to.equal(!was);
    expect(now.SchedulerConfig.ModifyIndex).to.be.greaterThan(index);

    // The index it was set at is stale now.
    const again = await agent.req('PUT', `/v1/operator/scheduler/configuration?cas=${index}`, { PreemptionConfig: { BatchSchedulerEnabled: was } });
    expect(again.json.Updated).to.equal(false);
  });

  it('GET /v1/operator/raft/configuration: one server, this agent, the leader and a voter', async () => {
    const r = await agent.req('GET', '/v1/operator/raft/configuration');
    expect(r.status).to.equal(200);
    const [node] = (await agent.req('GET', '/v1/nodes')).json;
    const self = (await agent.req('GET', '/v1/agent/self')).json;
    expect(r.json.Servers).to.deep.equal([
      { ID: node.ID, Node: `${self.config.NodeName}.${self.config.Region}`, Address: new URL(agent.url).host, Leader: true, Voter: true, RaftProtocol: '3' },
    ]);
    expect(r.json.Index).to.be.a('number');
  });

  it('berth operator raft list-peers prints the peers as nomad does: Node, ID, Address, State, Voter, RaftProtocol', async () => {
    const [node] = (await agent.req('GET', '/v1/nodes')).json;
    const self = (await agent.req('GET', '/v1/agent/self')).json;
    const r = await agent.main(['operator', 'raft', 'list-peers']);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).to.have.length(2);
    expect(lines[0]!.split(/\s+/)).to.deep.equal(['Node', 'ID', 'Address', 'State', 'Voter', 'RaftProtocol']);
    expect(lines[1]!.split(/\s+/)).to.deep.equal([`${self.config.NodeName}.${self.config.Region}`, node.ID, new URL(agent.url).host, 'leader', 'true', '3']);
    // Columns line up as columnize lays them out: each value starts where its header does.
    const values = [node.ID, new URL(agent.url).host, 'leader', 'true', '3'];
    ['ID', 'Address', 'State', 'Voter', 'RaftProtocol'].forEach((h, i) => {
      const at = lines[0]!.indexOf(h);
      expect(lines[1]!.slice(at - 2, at), h).to.equal('  ');
      expect(lines[1]!.startsWith(values[i]!, at), h).to.equal(true);
    });
    const json = await agent.main(['operator', 'raft', 'list-peers', '-json']);
    expect(JSON.parse(json.stdout).Servers).to.have.length(1);
  });
});

describe('agent: the scheduler configuration across a restart', function () {
  this.timeout(60_000);
  let dir: string;
  let agent: Agent | undefined;
  const start = async () => (agent = await startAgent(resolveAgentConfig([], { dataDir: dir, port: 0 }), { log: () => {} }));
  const get = async (a: Agent) => ((await (await fetch(`${a.url}/v1/operator/scheduler/configuration`)).json()) as any).SchedulerConfig;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-sched-config-'));
  });
  after(async () => {
    await agent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('what an operator set is what the agent serves after it restarts on the same data dir', async () => {
    const first = await start();
    const was = await get(first);
    const body = { PreemptionConfig: { ...was.PreemptionConfig, BatchSchedulerEnabled: !was.PreemptionConfig.BatchSchedulerEnabled } };
    const put = await fetch(`${first.url}/v1/operator/scheduler/configuration`, { method: 'PUT', body: JSON.stringify(body) });
    expect(put.status).to.equal(200);
    const set = await get(first);
    expect(set.PreemptionConfig.BatchSchedulerEnabled).to.equal(!was.PreemptionConfig.BatchSchedulerEnabled);
    await first.close();
    agent = undefined;
    const again = await get(await start());
    expect(again).to.deep.equal(set);
  });
});
