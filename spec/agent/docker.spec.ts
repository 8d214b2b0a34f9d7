/**
 * The agent runs docker jobs on a real Docker Engine (issue 37): the node fingerprints the
 * driver (its Engine's version among the attributes), a service job's container publishes its
 * port on the host, its logs, stats, signal, exec, restart and stop work through the agent's API and CLI, a
 * batch container's exit code reaches the task events; with no Engine the driver is reported
 * undetected and a docker job stays blocked on `missing drivers` until an Engine answers, when the
 * next fingerprint places it. Images are built here (busybox, imported): no registry is needed.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { readAgentConfig, resolveAgentConfig } from '../../agent/config/config.ts';
import { AgentProcess, http, waitFor } from '../support/agent.ts';
import { allocOf, containersOf, dockerJob, runJob as run, engine, engineAnswers, engineUntil, importBusybox, removeImage } from '../support/docker.ts';
import { skipOrFailInCi } from '../support/skips.ts';

const REPO = 'berth-agent-spec-busybox';
let IMAGE = '';

const webJob = (id: string) => `job "${id}" {
  group "g" {
    network {
      port "http" { to = 8080 }
    }
    task "t" {
      driver = "docker"
      # httpd is the container's pid 1, which SIGTERM does not end: kill_timeout bounds the stop.
      kill_timeout = "1s"
      config {
        image   = "${IMAGE}"
        command = "sh"
        args    = ["-c", "echo hello-from-$NOMAD_TASK_NAME > /local/index.html; echo started; exec httpd -f -p 8080 -h /local"]
        ports   = ["http"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`;

const batchJob = (id: string, script: string) => dockerJob({ id, image: IMAGE, script });

type Req = Pick<AgentProcess, 'req'>;

describe('agent: docker jobs on a real Engine', function () {
  this.timeout(120_000);
  before(async function () {
    if (!(await engineAnswers())) return skipOrFailInCi(this, 'no Docker Engine answers at /var/run/docker.sock');
    IMAGE = await importBusybox(REPO);
  });
  after(() => removeImage(`${REPO}:1`));

  describe('a -dev agent', () => {
    let agent: AgentProcess;
    before(async function () {
      if (!IMAGE) this.skip();
      agent = await new AgentProcess(['-dev']).ready();
    });
    after(() => agent?.stop());

    it('fingerprints docker with its Engine version', async () => {
      const nodes = (await agent.req('GET', '/v1/nodes')).json;
      const node = (await agent.req('GET', `/v1/node/${nodes[0].ID}`)).json;
      const { version } = await engine.version().then((v) => ({ version: v.Version }));
      expect(node.Drivers.docker).to.include({ Detected: true, Healthy: true, HealthDescription: 'Healthy' });
      expect(node.Attributes['driver.docker']).to.equal('1');
      expect(node.Attributes['driver.docker.version']).to.equal(version);
    });

    it('a service container answers on its host port; logs, stats, signal, exec, restart and stop work through the agent', async () => {
      await run(agent, webJob('web'));
      const alloc = await allocOf(agent, 'web', (a) => a.ClientStatus === 'running', 'the web alloc running');
      const full = (await agent.req('GET', `/v1/allocation/${alloc.ID}`)).json;
      const port = full.AllocatedResources.Shared.Ports.find((p: any) => p.Label === 'http');
      expect(port.To).to.equal(8080);
      const page = await http('GET', `http://${port.HostIP}:${port.Value}/index.html`);
      expect(page.text).to.equal('hello-from-t\n');
      const [c] = await containersOf(alloc.ID);
      expect(c!.Names).to.deep.equal([`/t-${alloc.ID}`]);
      expect(c!.Labels['com.hashicorp.nomad.alloc_id']).to.equal(alloc.ID);

      const logs = await agent.req('GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`);
      expect(logs.text).to.equal('started\n');

      const ex = await agent.cli(['alloc', 'exec', '-task', 't', alloc.ID, 'cat', '/local/index.html']);
      expect(ex.code, ex.stderr).to.equal(0);
      expect(ex.stdout).to.equal('hello-from-t\n');

      // Stats from the Engine; a signal reaches the container (busybox httpd rereads its config on SIGHUP and runs on).
      const stats = await agent.req('GET', `/v1/client/allocation/${alloc.ID}/stats`);
      expect(stats.status, stats.text).to.equal(200);
      expect(stats.json.Tasks.t.ResourceUsage.MemoryStats.Usage).to.be.greaterThan(0);
      const sig = await agent.req('POST', `/v1/client/allocation/${alloc.ID}/signal`, { Task: 't', Signal: 'SIGHUP' });
      expect(sig.status, sig.text).to.equal(200);
      const signalled = await allocOf(
        agent,
        'web',
        (a) => a.ID === alloc.ID && a.TaskStates?.t?.Events?.some((e: any) => e.Type === 'Signaling'),
        'the Signaling event',
      );
      expect(signalled.TaskStates.t.State).to.equal('running');

      const restart = await agent.req('PUT', `/v1/client/allocation/${alloc.ID}/restart`, { TaskName: 't' });
      expect(restart.status, restart.text).to.equal(200);
      await allocOf(agent, 'web', (a) => a.ID === alloc.ID && a.TaskStates?.t?.Restarts === 1 && a.TaskStates.t.State === 'running', 'the task restarted');
      const again = await http('GET', `http://${port.HostIP}:${port.Value}/index.html`);
      expect(again.text).to.equal('hello-from-t\n');

      const stop = await agent.req('DELETE', '/v1/job/web');
      expect(stop.status).to.equal(200);
      await allocOf(agent, 'web', (a) => a.ID === alloc.ID && a.ClientStatus === 'complete', 'the alloc complete');
      await waitFor(agent, `/v1/allocation/${alloc.ID}`, (a: any) => a.TaskStates?.t?.State === 'dead', 'the task dead');
      // The container is removed once its task ended (gc.container).
      await engineUntil(async () => (await containersOf(alloc.ID)).length === 0, 'the container removed');
    });

    it("a batch container's exit code reaches the task events and the alloc fails", async () => {
      await run(agent, batchJob('exit3', 'echo bye; exit 3'));
      const alloc = await allocOf(agent, 'exit3', (a) => a.ClientStatus === 'failed', 'the batch alloc failed');
      const terminated = alloc.TaskStates.t.Events.find((e: any) => e.Type === 'Terminated');
      expect(terminated.ExitCode).to.equal(3);
      expect(terminated.DisplayMessage).to.match(/Exit Code: 3/);
    });
  });

  describe('with no Engine at the endpoint', () => {
    let agent: Agent | undefined;
    let dir = '';
    let sock = '';
    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-docker-endpoint-'));
      sock = path.join(dir, 'docker.sock');
    });
    after(async () => {
      await agent?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('docker is undetected and a docker job blocked on missing drivers, until an Engine answers and the next fingerprint places it', async function () {
      if (!IMAGE) this.skip();
      const patch = readAgentConfig({ plugin: { docker: [{ config: [{ endpoint: `unix://${sock}` }] }] } });
      agent = await startAgent(resolveAgentConfig([patch], { dev: true, port: 0 }), { log: () => {}, fingerprintIntervalMs: 50 });
      const a: Req = { req: (m, p, b) => http(m, agent!.url + p, b) };
      const nodes = (await a.req('GET', '/v1/nodes')).json;
      expect(nodes[0].Drivers.docker).to.include({ Detected: false, Healthy: false, HealthDescription: 'Docker is not available' });
      await run(a, batchJob('later', 'echo placed'));
      const blocked = await waitFor(a, '/v1/job/later/evaluations', (es: any[]) => es.some((e) => e.Status === 'blocked'), 'a blocked eval');
      const failed = blocked.find((e: any) => e.FailedTGAllocs)?.FailedTGAllocs?.g;
      expect(failed.ConstraintFiltered).to.deep.equal({ 'missing drivers': 1 });
      expect((await a.req('GET', '/v1/job/later/allocations')).json).to.deep.equal([]);

      // The Engine appears at the endpoint: the next fingerprint finds it and the job is placed.
      fs.symlinkSync('/var/run/docker.sock', sock);
      await waitFor(a, '/v1/nodes', (ns: any[]) => ns[0]?.Drivers?.docker?.Healthy === true, 'docker fingerprinted healthy');
      const alloc = await allocOf(a, 'later', (x) => x.ClientStatus === 'complete', 'the blocked job placed and complete');
      expect((await a.req('GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text).to.equal('placed\n');
    });
  });
});
