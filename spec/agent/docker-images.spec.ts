/**
 * Docker images and rules through the agent, on a real Engine (issue 37): an image `load`ed from
 * an artifact tarball runs with no registry; an image on a registry on loopback is pulled ("Downloading
 * image"); an image no task uses any more is removed after the plugin's `image_delay`; the
 * plugin's rules refuse a privileged container, a capability outside `allow_caps` and a host
 * volume with clear task events, before any container exists; a container past its memory is
 * reported "OOM Killed" with exit 137.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AgentProcess, http as request } from '../support/agent.ts';
import { allocOf, containersOf, dockerJob, engine, engineAnswers, engineUntil, importBusybox, removeImage, runJob } from '../support/docker.ts';
import { skipOrFailInCi } from '../support/skips.ts';

const REPO = 'berth-images-spec-busybox';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

const followProgress = (stream: NodeJS.ReadableStream) =>
  new Promise((resolve, reject) => engine.modem.followProgress(stream, (e: Error | null) => (e ? reject(e) : resolve(undefined))));

const eventsOf = (alloc: any): string[] => alloc.TaskStates.t.Events.map((e: any) => `${e.Type}: ${e.DisplayMessage}`);

describe('agent: docker images and rules', function () {
  this.timeout(180_000);
  let image = '';
  let agent: AgentProcess | undefined;
  let dir = '';

  before(async function () {
    if (!(await engineAnswers())) return skipOrFailInCi(this, 'no Docker Engine answers at /var/run/docker.sock');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-docker-images-'));
    const config = path.join(dir, 'agent.hcl');
    // A short image_delay: the GC spec waits for it (as Nomad's, in the plugin block).
    fs.writeFileSync(config, 'plugin "docker" {\n  config {\n    gc {\n      image_delay = "200ms"\n    }\n  }\n}\n');
    agent = await new AgentProcess(['-dev', '-config', config]).ready();
  });
  // Imported afresh for each spec: the agent's image GC (200 ms here) removes an image once no task uses it.
  beforeEach(async () => {
    image = await importBusybox(REPO);
  });
  after(async () => {
    await agent?.stop();
    await removeImage(image);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('load: an image saved to a tarball, fetched as an artifact, runs with no registry', async () => {
    const ref = 'berth-load-spec:1';
    await engine.getImage(image).tag({ repo: 'berth-load-spec', tag: '1' });
    const tarball = path.join(dir, 'load.tar');
    await pipeline((await engine.getImage(ref).get()) as NodeJS.ReadableStream, fs.createWriteStream(tarball));
    // Only the tarball has it now (the image itself stays under its other name).
    await engine.getImage(ref).remove();
    const server = http.createServer((_req, res) => fs.createReadStream(tarball).pipe(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/load.tar`;
      await runJob(
        agent!,
        dockerJob({
          id: 'loaded',
          image: ref,
          script: 'echo loaded-and-ran',
          task: `      artifact {\n        source = "${url}"\n        options {\n          archive = false\n        }\n      }`,
          config: '        load = "load.tar"',
        }),
      );
      const alloc = await allocOf(agent!, 'loaded', (a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed', 'the loaded job done');
      expect(alloc.ClientStatus, eventsOf(alloc).join('\n')).to.equal('complete');
      expect(eventsOf(alloc).some((e) => e === 'Driver: Loading image')).to.equal(true);
      expect((await agent!.req('GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text).to.equal('loaded-and-ran\n');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await removeImage(ref);
    }
  });

  describe('a registry on loopback', () => {
    let registry: ChildProcess | undefined;
    let port = 0;
    before(async () => {
      port = await freePort();
      const root = path.join(dir, 'registry');
      fs.mkdirSync(root);
      const cfg = path.join(dir, 'registry.yml');
      fs.writeFileSync(cfg, `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${root}\nhttp:\n  addr: 127.0.0.1:${port}\n`);
      registry = spawn('docker-registry', ['serve', cfg], { stdio: 'ignore' });
      await engineUntil(
        () =>
          request('GET', `http://127.0.0.1:${port}/v2/`).then(
            (r) => r.status === 200,
            () => false,
          ),
        'the registry answering',
      );
    });
    after(async () => {
      registry?.kill('SIGKILL');
      if (registry && registry.exitCode === null) await new Promise((r) => registry!.once('exit', r));
    });

    it('an image only the registry has is pulled ("Downloading image") and runs', async () => {
      const repo = `127.0.0.1:${port}/berth-pull-spec`;
      await engine.getImage(image).tag({ repo, tag: '1' });
      // The Engine wants an X-Registry-Auth header even for a registry without auth.
      await followProgress((await engine.getImage(`${repo}:1`).push({ authconfig: { serveraddress: `127.0.0.1:${port}` } })) as NodeJS.ReadableStream);
      await engine.getImage(`${repo}:1`).remove();
      try {
        await runJob(agent!, dockerJob({ id: 'pulled', image: `${repo}:1`, script: 'echo pulled-and-ran' }));
        const alloc = await allocOf(agent!, 'pulled', (a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed', 'the pulled job done');
        expect(alloc.ClientStatus, eventsOf(alloc).join('\n')).to.equal('complete');
        expect(eventsOf(alloc).some((e) => e === 'Driver: Downloading image')).to.equal(true);
        expect((await agent!.req('GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text).to.equal('pulled-and-ran\n');
      } finally {
        await removeImage(`${repo}:1`);
      }
    });

    it('a service from the registry image answers on its host port, then stops', async () => {
      const ref = `127.0.0.1:${port}/berth-pull-spec:1`;
      await removeImage(ref); // only the registry has it
      await runJob(
        agent!,
        dockerJob({
          id: 'pulled-web',
          image: ref,
          type: 'service',
          script: 'echo from-the-registry > /local/index.html; exec httpd -f -p 8080 -h /local',
          group: '    network {\n      port "http" {\n        to = 8080\n      }\n    }\n',
          config: '        ports = ["http"]',
          task: '      kill_timeout = "1s"',
        }),
      );
      try {
        const alloc = await allocOf(agent!, 'pulled-web', (a) => a.ClientStatus === 'running' || a.ClientStatus === 'failed', 'the registry service running');
        expect(alloc.ClientStatus, eventsOf(alloc).join('\n')).to.equal('running');
        expect(eventsOf(alloc)).to.include('Driver: Downloading image');
        const full = (await agent!.req('GET', `/v1/allocation/${alloc.ID}`)).json;
        const p = full.AllocatedResources.Shared.Ports.find((x: any) => x.Label === 'http');
        expect((await request('GET', `http://${p.HostIP}:${p.Value}/index.html`)).text).to.equal('from-the-registry\n');
        expect((await agent!.req('DELETE', '/v1/job/pulled-web')).status).to.equal(200);
        await allocOf(agent!, 'pulled-web', (a) => a.ID === alloc.ID && a.ClientStatus === 'complete', 'the registry service stopped');
        await engineUntil(async () => (await containersOf(alloc.ID)).length === 0, 'its container removed');
      } finally {
        await removeImage(ref);
      }
    });
  });

  it('an image no task uses any more is removed after image_delay; one a task uses stays', async () => {
    const gcImage = await importBusybox('berth-gc-spec', String(Date.now()));
    try {
      const { Id } = await engine.getImage(gcImage).inspect();
      await runJob(agent!, dockerJob({ id: 'gc-user', image: gcImage, type: 'service', script: 'trap "exit 0" TERM; while :; do sleep 1; done' }));
      const alloc = await allocOf(agent!, 'gc-user', (a) => a.ClientStatus === 'running', 'the gc job running');
      expect((await engine.getImage(Id).inspect()).Id).to.equal(Id);
      expect((await agent!.req('DELETE', '/v1/job/gc-user')).status).to.equal(200);
      await allocOf(agent!, 'gc-user', (a) => a.ID === alloc.ID && a.ClientStatus === 'complete', 'the gc job stopped');
      await engineUntil(
        () =>
          engine
            .getImage(Id)
            .inspect()
            .then(
              () => false,
              (e: { statusCode?: number }) => e.statusCode === 404,
            ),
        'the unused image removed',
      );
    } finally {
      await removeImage(gcImage);
    }
  });

  for (const [name, config, refusal] of [
    ['privileged = true', '        privileged = true', /allow_privileged/],
    ['cap_add outside allow_caps', '        cap_add = ["sys_admin"]', /sys_admin/],
    ['a host volume with volumes disabled', '        volumes = ["/etc:/host-etc"]', /volumes/],
  ] as const)
    it(`refuses ${name} with a clear task event, before any container exists`, async () => {
      const id = `rule-${name.split(' ')[0]!.replace(/[^a-z_]/g, '')}`;
      await runJob(agent!, dockerJob({ id, image, script: 'echo never', config }));
      const alloc = await allocOf(agent!, id, (a) => a.ClientStatus === 'failed', `the ${name} job failed`);
      const events = eventsOf(alloc);
      expect(
        events.some((e) => refusal.test(e)),
        events.join('\n'),
      ).to.equal(true);
      expect(await containersOf(alloc.ID)).to.deep.equal([]);
    });

  it('a container past its memory is reported OOM Killed, exit 137', async () => {
    // 64 MB of x's held in a shell variable, in a 20 MB container without swap.
    await runJob(agent!, dockerJob({ id: 'oom', image, memory: 20, script: 'a=$(head -c 64000000 /dev/zero | tr "\\\\0" x); echo survived' }));
    const alloc = await allocOf(agent!, 'oom', (a) => a.ClientStatus === 'failed' || a.ClientStatus === 'complete', 'the oom job done');
    const terminated = alloc.TaskStates.t.Events.find((e: any) => e.Type === 'Terminated');
    expect(terminated, eventsOf(alloc).join('\n')).to.not.equal(undefined);
    expect(terminated.ExitCode).to.equal(137);
    expect(terminated.DisplayMessage).to.match(/OOM Killed/);
  });
});
