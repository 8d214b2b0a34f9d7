/**
 * A job's versions with their diffs (`?diffs=true`, `&diff_version=N`, as Nomad's
 * `GetJobVersions`), and a scale's evaluation (trigger `job-scaling`), on an in-process agent.
 */
import { expect } from 'chai';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { http } from '../support/agent.ts';

const hcl = (v: string) => `job "vers" {
  type = "batch"
  meta {
    v = "${v}"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;

/** The `Meta[v]` change of one version's diff, as [old, new]. */
const metaChange = (diff: { Fields: Array<{ Name: string; Old: string; New: string }> | null }) =>
  (diff.Fields ?? []).filter((f) => f.Name === 'Meta[v]').map((f) => [f.Old, f.New]);

describe('agent: job versions and their diffs, and a scale', function () {
  this.timeout(60_000);
  let agent: Agent;
  const req = (method: string, path: string, body?: unknown) => http(method, `${agent.url}${path}`, body);
  before(async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
    for (const v of ['0', '1', '2']) {
      const parsed = await req('POST', '/v1/jobs/parse', { JobHCL: hcl(v) });
      expect((await req('POST', '/v1/jobs', { Job: parsed.json })).status).to.equal(200);
    }
  });
  after(async () => {
    await agent?.close();
  });

  it('versions?diffs=true diffs each version against the one before it; &diff_version=N against version N, itself included', async () => {
    const chain = (await req('GET', '/v1/job/vers/versions?diffs=true')).json;
    expect(chain.Versions.map((j: { Version: number }) => j.Version)).to.deep.equal([2, 1, 0]);
    expect(chain.Diffs.map(metaChange)).to.deep.equal([[['1', '2']], [['0', '1']]]);
    const against0 = (await req('GET', '/v1/job/vers/versions?diffs=true&diff_version=0')).json;
    // Every version against version 0, itself included (no change there).
    expect(against0.Diffs.map(metaChange)).to.deep.equal([[['0', '2']], [['0', '1']], []]);
  });

  it('a scale registers a new version and evaluates it with trigger job-scaling', async () => {
    const scale = await req('POST', '/v1/job/vers/scale', { Count: 2, Target: { Group: 'g' } });
    expect(scale.status, scale.text).to.equal(200);
    const ev = (await req('GET', `/v1/evaluation/${scale.json.EvalID}`)).json;
    expect(ev.TriggeredBy).to.equal('job-scaling');
    expect((await req('GET', '/v1/job/vers')).json.Version).to.equal(3);
  });
});
