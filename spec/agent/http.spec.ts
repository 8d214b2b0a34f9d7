/**
 * Nomad's HTTP API as the agent serves it, driven over HTTP only: paths, verbs, PascalCase JSON,
 * status codes and Nomad's error texts; jobs (parse, register, plan, scale, versions, stop,
 * purge), allocations, evaluations, the node; blocking queries; client fs, logs (framed, plain,
 * follow, from the end), stats, signal, restart; the event stream; bounded bodies.
 */
import { expect } from 'chai';
import { get } from 'node:http';
import { AgentProcess, http, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const JOB_HCL = `job "web" {
  group "g" {
    count = 1
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args = ["-c", "echo hello; echo oops >&2; trap 'echo got-usr1' USR1; i=0; while :; do read -t 0.2 x < /dev/zero 2>/dev/null; sleep 0.2; echo tick $i; i=$((i+1)); done"]
      }
      resources {
        cpu = 50
        memory = 32
      }
    }
  }
}
`;

/** Reads an NDJSON/framed stream until `done(text)` says enough; then aborts it. */
function readStream(url: string, done: (text: string) => boolean, headers: Record<string, string> = {}): Promise<string> {
  const ac = new AbortController();
  return new Promise((resolve, reject) => {
    let text = '';
    const req = get(url, { signal: ac.signal, headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (done(text)) {
          ac.abort();
          resolve(text);
        }
      });
      res.on('end', () => resolve(text));
    });
    req.on('error', (e) => (ac.signal.aborted ? resolve(text) : reject(e)));
  });
}

const frames = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l));
const decoded = (text: string) =>
  frames(text)
    .map((f) => (f.Data ? Buffer.from(f.Data, 'base64').toString() : ''))
    .join('');

describe('agent: the HTTP API', function () {
  this.timeout(60_000);
  let agent: AgentProcess;
  let allocId: string;

  before(async function () {
    this.timeout(60_000);
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  it("answers status, self and regions; unknown routes 404 and wrong verbs 405 with Nomad's text", async () => {
    const leader = await agent.req('GET', '/v1/status/leader');
    expect(leader.status).to.equal(200);
    expect(leader.json).to.equal(new URL(agent.url).host);
    const self = await agent.req('GET', '/v1/agent/self');
    expect(self.json.config.DevMode).to.equal(true);
    expect(self.json.member.Status).to.equal('alive');
    expect((await agent.req('GET', '/v1/regions')).json).to.deep.equal(['global']);
    const nope = await agent.req('GET', '/v1/nope/such');
    expect([nope.status, nope.text]).to.deep.equal([404, '404 page not found']);
    const verb = await agent.req('DELETE', '/v1/allocations');
    expect([verb.status, verb.text]).to.deep.equal([405, 'Invalid method']);
    const node = (await agent.req('GET', '/v1/nodes')).json[0];
    expect(node.Status).to.equal('ready');
    const full = await agent.req('GET', `/v1/node/${node.ID}`);
    expect(full.json.HTTPAddr).to.equal(new URL(agent.url).host);
    expect(full.headers['x-nomad-index']).to.match(/^\d+$/);
  });

  it('issue #35: the node and its stub hold the fields of their own structs; ?resources=true and ?os=true add what Nomad adds', async () => {
    const [stub] = (await agent.req('GET', '/v1/nodes')).json;
    const full = (await agent.req('GET', `/v1/node/${stub.ID}`)).json;
    // Nomad's NodeListStub has Address (the host) and Version; its Node has HTTPAddr and neither.
    expect(stub.Address).to.equal(new URL(agent.url).hostname);
    expect(stub.Version).to.equal(full.Attributes['nomad.version']);
    for (const k of ['HTTPAddr', 'NodeResources', 'ReservedResources', 'Attributes']) expect(stub, k).not.to.have.property(k);
    for (const k of ['Address', 'Version', 'SecretID', 'ComputedClass']) expect(full, k).not.to.have.property(k);
    expect([full.HostVolumes, full.HostNetworks, full.LastDrain]).to.deep.equal([{}, {}, null]);
    expect(full.StatusUpdatedAt).to.be.within(Math.floor(Date.now() / 1000) - 600, Math.floor(Date.now() / 1000));
    expect(stub.LastDrain).to.equal(null);

    const [withResources] = (await agent.req('GET', '/v1/nodes?resources=true')).json;
    expect(withResources.NodeResources).to.deep.equal(full.NodeResources);
    expect(withResources.ReservedResources).to.deep.equal(full.ReservedResources);
    expect(withResources.NodeResources.Cpu.CpuShares).to.be.greaterThan(0);
    expect([withResources.NodeResources.MinDynamicPort, withResources.NodeResources.MaxDynamicPort]).to.deep.equal([20000, 32000]);
    expect(withResources).not.to.have.property('Attributes');

    const [withOs] = (await agent.req('GET', '/v1/nodes?os=true')).json;
    expect(withOs.Attributes).to.deep.equal({ 'os.name': full.Attributes['os.name'] });
    expect(withOs).not.to.have.property('NodeResources');
  });

  it('parses, plans, registers, scales and lists jobs', async () => {
    const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: JOB_HCL, Canonicalize: true });
    expect(parsed.status).to.equal(200);
    expect(parsed.json.ID).to.equal('web');
    expect(parsed.json.TaskGroups[0].Tasks[0].Resources.CPU).to.equal(50);
    const bad = await agent.req('POST', '/v1/jobs/parse', { JobHCL: 'job "x" {' });
    expect(bad.status).to.equal(400);

    const plan = await agent.req('POST', '/v1/job/web/plan', { Job: parsed.json });
    expect(plan.json.Annotations.DesiredTGUpdates.g.Place).to.equal(1);
    expect((await agent.req('GET', '/v1/jobs')).json).to.deep.equal([]);

    const reg = await agent.req('POST', '/v1/jobs', { Job: parsed.json });
    expect(reg.status).to.equal(200);
    expect(reg.json.EvalID).to.match(/^[0-9a-f-]{36}$/);
    expect(Number(reg.headers['x-nomad-index'])).to.equal(reg.json.JobModifyIndex);
    const ev = await waitFor(agent, `/v1/evaluation/${reg.json.EvalID}`, (e) => e.Status === 'complete', 'eval complete');
    expect(ev.TriggeredBy).to.equal('job-register');
    // Issue #35: the evaluation carries the job's real JobModifyIndex and the index the scheduler read.
    expect(ev.JobModifyIndex).to.equal(reg.json.JobModifyIndex);
    expect(ev.SnapshotIndex).to.be.at.least(reg.json.JobModifyIndex);
    expect([ev.Wait, ev.RelatedEvals]).to.deep.equal([0, null]);
    expect((await agent.req('GET', `/v1/evaluation/${ev.ID}?related=true`)).json.RelatedEvals).to.deep.equal([]);
    const allocs = await waitFor(agent, '/v1/job/web/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'web running');
    allocId = allocs[0].ID;
    expect(allocs[0].Name).to.equal('web.g[0]');
    // The stub has its AllocatedResources and JobVersion; the full allocation neither JobVersion nor MigrateToken.
    expect(allocs[0].AllocatedResources.Tasks.t.Cpu).to.deep.equal({ CpuShares: 50 });
    expect(allocs[0].JobVersion).to.equal(0);
    for (const k of ['DesiredTransition', 'PreviousAllocation', 'DeploymentID']) expect(allocs[0], k).not.to.have.property(k);
    const full = (await agent.req('GET', `/v1/allocation/${allocId}`)).json;
    for (const k of ['JobVersion', 'MigrateToken', 'JobType']) expect(full, k).not.to.have.property(k);
    expect([full.Job.Version, full.PreviousAllocation]).to.deep.equal([0, '']);
    // The deployment of version 0 (the job is a service job: Nomad's default update strategy) with its times.
    const [d] = await waitFor(agent, '/v1/job/web/deployments', (l: any[]) => l.length === 1, 'the v0 deployment');
    expect(d.JobSpecModifyIndex).to.equal(reg.json.JobModifyIndex);
    expect(d.CreateTime / 1e6).to.be.within(Date.now() - 60_000, Date.now());
    expect(d.ModifyTime).to.be.at.least(d.CreateTime);
    expect((await agent.req('GET', '/v1/jobs')).json[0]).not.to.have.property('Version');

    const job = (await agent.req('GET', '/v1/job/web')).json;
    expect([job.Status, job.Version, job.Priority, job.Type]).to.deep.equal(['running', 0, 50, 'service']);
    expect((await agent.req('GET', '/v1/job/web/summary')).json.Summary.g.Running).to.equal(1);
    expect((await agent.req('GET', '/v1/job/web/evaluations')).json.map((e: any) => e.ID)).to.include(reg.json.EvalID);
    // Register with a stale index is refused.
    const stale = await agent.req('POST', '/v1/jobs', { Job: parsed.json, EnforceIndex: true, JobModifyIndex: 1 });
    expect(stale.status).to.equal(400);
    expect(stale.text).to.match(/Enforcing job modify index 1/);

    const scale = await agent.req('POST', '/v1/job/web/scale', { Count: 2, Target: { Group: 'g' } });
    expect(scale.status).to.equal(200);
    await waitFor(agent, '/v1/job/web/scale', (s) => s.TaskGroups.g.Running === 2, 'two running');
    expect((await agent.req('GET', '/v1/job/web/versions')).json.Versions.map((v: any) => v.Version)).to.deep.equal([1, 0]);
    await agent.req('POST', '/v1/job/web/scale', { Count: 1, Target: { Group: 'g' } });
    await waitFor(agent, '/v1/job/web/allocations', (l: any[]) => l.filter((a) => a.DesiredStatus === 'run').length === 1, 'back to one');
    expect((await agent.req('POST', '/v1/job/nope/scale', { Count: 1, Target: { Group: 'g' } })).status).to.equal(404);
  });

  it('wakes a blocking query on /v1/allocations within 50 ms of a change, and honours wait=', async () => {
    // Nothing changes the node: the query answers at its wait= deadline with the same index.
    const nodes = await agent.req('GET', '/v1/nodes');
    const nodeIndex = Number(nodes.headers['x-nomad-index']);
    const t0 = Date.now();
    const timedOut = await agent.req('GET', `/v1/nodes?index=${nodeIndex}&wait=200ms`);
    expect(Date.now() - t0).to.be.at.least(190);
    expect(Number(timedOut.headers['x-nomad-index'])).to.equal(nodeIndex);

    const first = await agent.req('GET', '/v1/allocations');
    const index = Number(first.headers['x-nomad-index']);

    let wokeAt = 0;
    const blocked = agent.req('GET', `/v1/allocations?index=${index}&wait=30s`).then((r) => {
      wokeAt = Date.now();
      return r;
    });
    // Give the query time to park. Not a proof: had it not parked yet, it would answer at once
    // with the newer index and the assertions below would still hold.
    await new Promise((r) => setTimeout(r, 100));
    const extra = (await agent.req('GET', '/v1/job/web/allocations')).json.find((a: any) => a.DesiredStatus === 'run');
    const stop = await agent.req('POST', `/v1/allocation/${extra.ID}/stop`);
    const changedAt = Date.now();
    expect(stop.status).to.equal(200);
    const r = await blocked;
    expect(Number(r.headers['x-nomad-index'])).to.be.greaterThan(index);
    expect(wokeAt - changedAt).to.be.below(50);
    const replaced = await waitFor(
      agent,
      '/v1/job/web/allocations',
      (l: any[]) => l.some((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running' && a.ID !== extra.ID),
      'a replacement',
    );
    allocId = replaced.find((a: any) => a.DesiredStatus === 'run' && a.ID !== extra.ID).ID;
  });

  it('serves the alloc dir and the logs: framed, plain, from the end, followed', async () => {
    const ls = await agent.req('GET', `/v1/client/fs/ls/${allocId}?path=/`);
    expect(ls.json.map((e: any) => e.Name)).to.include.members(['alloc', 't']);
    const st = await agent.req('GET', `/v1/client/fs/stat/${allocId}?path=alloc/logs`);
    expect(st.json.IsDir).to.equal(true);
    expect((await agent.req('GET', `/v1/client/fs/cat/${allocId}?path=../../../etc/passwd`)).status).to.equal(400);
    expect((await agent.req('GET', `/v1/client/fs/stat/${allocId}?path=nope`)).status).to.equal(404);

    // The task may not have written yet: follow until it has.
    await readStream(`${agent.url}/v1/client/fs/logs/${allocId}?task=t&type=stderr&follow=true`, (t) => decoded(t).includes('oops\n'));
    await readStream(`${agent.url}/v1/client/fs/logs/${allocId}?task=t&type=stdout&follow=true`, (t) => decoded(t).includes('hello\n'));
    const framed = await agent.req('GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout`);
    expect(decoded(framed.text)).to.match(/^hello\n/);
    expect(frames(framed.text)[0].File).to.equal('alloc/logs/t.stdout');
    const plain = await agent.req('GET', `/v1/client/fs/logs/${allocId}?task=t&type=stderr&plain=true`);
    expect(plain.text).to.equal('oops\n');
    const tail = await agent.req('GET', `/v1/client/fs/logs/${allocId}?task=t&type=stderr&plain=true&origin=end&offset=3`);
    expect(tail.text).to.equal('ps\n');
    const readat = await agent.req('GET', `/v1/client/fs/readat/${allocId}?path=alloc/logs/t.stdout.0&offset=1&limit=4`);
    expect(readat.text).to.equal('ello');
    // Follow: frames keep coming as the task writes.
    const followed = await readStream(`${agent.url}/v1/client/fs/logs/${allocId}?task=t&type=stdout&follow=true&origin=end&offset=0`, (t) =>
      /tick \d+\n/.test(decoded(t)),
    );
    expect(decoded(followed)).to.match(/tick \d+/);
    const cli = await agent.cli(['alloc', 'logs', '-stderr', allocId.slice(0, 8)]);
    expect([cli.code, cli.stdout]).to.deep.equal([0, 'oops\n']);
  });

  it('answers stats, signals and restarts tasks', async () => {
    const stats = await agent.req('GET', `/v1/client/allocation/${allocId}/stats`);
    expect(stats.status).to.equal(200);
    expect(stats.json.Tasks.t.ResourceUsage.MemoryStats).to.have.property('RSS');
    const sig = await agent.req('POST', `/v1/client/allocation/${allocId}/signal`, { Task: 't', Signal: 'SIGUSR1' });
    expect(sig.status).to.equal(200);
    const bad = await agent.req('POST', `/v1/client/allocation/${allocId}/signal`, { Task: 'nope', Signal: 'SIGUSR1' });
    expect(bad.status).to.equal(400);
    const restart = await agent.req('POST', `/v1/client/allocation/${allocId}/restart`, { TaskName: 't' });
    expect(restart.status).to.equal(200);
    const a = await waitFor(agent, `/v1/allocation/${allocId}`, (x) => x.TaskStates.t.Restarts === 1 && x.TaskStates.t.State === 'running', 'restarted');
    expect(a.TaskStates.t.Events.map((e: any) => e.Type)).to.include('Restarting');
    expect((await agent.req('GET', '/v1/client/allocation/00000000-0000-0000-0000-000000000000/stats')).status).to.equal(404);
  });

  it('streams events by topic', async () => {
    // Opened from the job's current index, the stream replays anything newer, so it sees the
    // registration below whether or not it is attached by then (no pause needed).
    const current = await agent.req('GET', '/v1/job/web');
    const job = current.json;
    const stream = readStream(`${agent.url}/v1/event/stream?topic=Job:web&index=${current.headers['x-nomad-index']}`, (t) => t.includes('JobRegistered'));
    await agent.req('POST', '/v1/job/web', { Job: { ...job, Meta: { v: '2' } } });
    const text = await stream;
    const ev = frames(text).find((f) => f.Events)!.Events[0];
    expect([ev.Topic, ev.Type, ev.Key]).to.deep.equal(['Job', 'JobRegistered', 'web']);
    expect(ev.Payload.Job.Meta).to.deep.equal({ v: '2' });
  });

  it("sends /ui to berth's viewer, which shows the agent's allocs", async () => {
    const ui = await agent.req('GET', '/ui');
    expect(ui.status).to.equal(307);
    const viewer = String(ui.headers.location);
    expect(viewer).to.match(/^http:\/\/127\.0\.0\.1:\d+/);
    const page = await http('GET', viewer);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/<html/i);
  });

  it('refuses bad bodies: not JSON, too large, no job', async () => {
    expect((await agent.req('POST', '/v1/jobs', '{nope')).status).to.equal(400);
    expect((await agent.req('POST', '/v1/jobs', {})).text).to.equal('Job must be specified');
    const huge = await agent.req('POST', '/v1/jobs', 'x'.repeat(5 * 1024 * 1024));
    expect(huge.status).to.equal(413);
    expect((await agent.req('POST', '/v1/job/other', { Job: { ID: 'web', TaskGroups: [] } })).text).to.equal('Job ID does not match name');
  });

  it('stops and purges a job', async () => {
    const stop = await agent.req('DELETE', '/v1/job/web');
    expect(stop.status).to.equal(200);
    await waitFor(agent, '/v1/job/web/allocations', (l: any[]) => l.every((a) => a.ClientStatus === 'complete'), 'all stopped');
    expect((await agent.req('GET', '/v1/job/web')).json.Status).to.equal('dead');
    await agent.req('DELETE', '/v1/job/web?purge=true');
    expect((await agent.req('GET', '/v1/job/web')).status).to.equal(404);
    expect((await http('GET', `${agent.url}/v1/job/web`)).text).to.equal('job not found');
  });
});
