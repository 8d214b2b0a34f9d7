/**
 * Docker tasks across a kill -9 of the agent, on a real Engine (issue 37): the restarted agent
 * reattaches to the container its handle names (the same id, started once, still serving), a
 * container berth's labels name for an alloc no one holds is removed (Nomad's dangling container
 * reconciler), and a container that died while the agent was down is reported and restarted by
 * the restart policy.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentProcess } from '../support/agent.ts';
import { allocOf, containersOf, dockerJob, engine, engineAnswers, engineUntil, importBusybox, removeImage, runJob } from '../support/docker.ts';
import { skipOrFailInCi } from '../support/skips.ts';

describe('agent: docker tasks across a kill -9 of the agent', function () {
  this.timeout(180_000);
  let image = '';
  let dir = '';
  let agent: AgentProcess | undefined;
  const dangling = `berth-dangling-spec-${process.pid}`;

  before(async function () {
    if (!(await engineAnswers())) return skipOrFailInCi(this, 'no Docker Engine answers at /var/run/docker.sock');
    image = await importBusybox('berth-restore-spec-busybox');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-docker-restore-'));
  });
  after(async () => {
    await agent?.stop();
    // A -dev agent on the data dir restores every alloc and destroys it on the way out.
    if (dir && fs.existsSync(path.join(dir, 'data'))) await (await new AgentProcess(['-dev', '-data-dir', path.join(dir, 'data')]).ready()).stop();
    await engine
      .getContainer(dangling)
      .remove({ force: true })
      .catch(() => {});
    await removeImage(image);
    // That agent's destroy is best effort (bounded by its shutdown): what it left mounted goes here.
    if (dir) {
      try {
        execFileSync('umount', ['-R', '-l', dir], { stdio: 'ignore' });
      } catch {}
      for (const m of fs
        .readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[4] ?? '')) {
        if (!m.startsWith(`${dir}/`)) continue;
        try {
          execFileSync('umount', ['-l', m], { stdio: 'ignore' });
        } catch {}
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reattaches to the same container, removes a dangling one, and restarts one that died meanwhile', async () => {
    const dataDir = path.join(dir, 'data');
    // The orphan below is seconds old: without a zero creation_grace the reconciler keeps it (it
    // could be another client's on this Engine).
    const config = path.join(dir, 'docker.hcl');
    fs.writeFileSync(config, 'plugin "docker" {\n  config {\n    gc {\n      dangling_containers {\n        creation_grace = "0s"\n      }\n    }\n  }\n}\n');
    agent = await new AgentProcess(['-data-dir', dataDir, '-config', config]).ready();
    await runJob(
      agent,
      dockerJob({
        id: 'keep',
        image,
        type: 'service',
        script: 'echo start >> /alloc/starts; trap "exit 0" TERM; while :; do sleep 1; done',
        group: '    restart {\n      attempts = 3\n      delay = "0s"\n      mode = "fail"\n    }\n',
      }),
    );
    const alloc = await allocOf(agent, 'keep', (a) => a.ClientStatus === 'running', 'the alloc running');
    const [before] = await containersOf(alloc.ID);
    const startedAt = (await engine.getContainer(before!.Id).inspect()).State.StartedAt;
    await agent.crash();
    agent = undefined;

    // While the agent is down: a container of berth's for an alloc that no longer exists.
    const orphan = await engine.createContainer({
      name: dangling,
      Image: image,
      Cmd: ['sleep', '600'],
      Labels: { 'com.hashicorp.nomad.alloc_id': '00000000-0000-4000-8000-000000000000' },
    });
    await orphan.start();

    agent = await new AgentProcess(['-data-dir', dataDir, '-config', config]).ready();
    const back = await allocOf(agent, 'keep', (a) => a.ID === alloc.ID && a.TaskStates?.t?.State === 'running', 'the alloc back');
    expect(back.TaskStates.t.Restarts).to.equal(0);
    const now = await containersOf(alloc.ID);
    expect(now.map((c) => c.Id)).to.deep.equal([before!.Id]);
    expect((await engine.getContainer(before!.Id).inspect()).State.StartedAt, 'not started again').to.equal(startedAt);
    await engineUntil(
      () =>
        engine
          .getContainer(dangling)
          .inspect()
          .then(
            () => false,
            (e: { statusCode?: number }) => e.statusCode === 404,
          ),
      'the dangling container removed',
    );
    const starts = await agent.req('GET', `/v1/client/fs/cat/${alloc.ID}?path=alloc/starts`);
    expect(starts.text).to.equal('start\n');

    // Down again, and the container dies meanwhile: the restart policy starts it again.
    await agent.crash();
    agent = undefined;
    await engine.getContainer(before!.Id).kill({ signal: 'SIGKILL' });
    agent = await new AgentProcess(['-data-dir', dataDir]).ready();
    const restarted = await allocOf(
      agent,
      'keep',
      (a) => a.ID === alloc.ID && a.TaskStates?.t?.Restarts === 1 && a.TaskStates.t.State === 'running',
      'the task restarted by its policy',
    );
    const terminated = restarted.TaskStates.t.Events.find((e: any) => e.Type === 'Terminated');
    expect(terminated.ExitCode).to.equal(137);
    expect((await agent.req('GET', `/v1/client/fs/cat/${alloc.ID}?path=alloc/starts`)).text).to.equal('start\nstart\n');
    const after = await containersOf(alloc.ID);
    expect(after).to.have.length(1);
    expect(after[0]!.State).to.equal('running');
  });
});
