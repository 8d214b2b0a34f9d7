/**
 * The seed's #10200 repro with docker tasks (issue 37): the same `lo` and `hi` job files with
 * `driver = "docker"`, on a real Engine. `hi` evicts two `lo` allocs and waits for each with its
 * own watcher (each watching its own id); their containers are stopped and removed before `hi`'s
 * container runs.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentProcess } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { containersOf, engineAnswers, importBusybox, removeImage } from '../support/docker.ts';
import { skipOrFailInCi } from '../support/skips.ts';
import { expectSeedStory } from '../support/seed-story.ts';

const DIR = fileURLToPath(new URL('../../examples/seed-10200/', import.meta.url));

/** An example job file with its raw_exec task turned into a docker one running the same script. */
const asDocker = (file: string, image: string) =>
  fs
    .readFileSync(path.join(DIR, file), 'utf8')
    .replace('driver = "raw_exec"', 'driver = "docker"')
    .replace('command = "/bin/sh"', `image   = "${image}"\n        command = "sh"`);

describe('agent: the seed #10200 repro with docker tasks', function () {
  this.timeout(120_000);
  let image = '';
  let dir = '';
  let agent: AgentProcess | undefined;

  before(async function () {
    if (!(await engineAnswers())) return skipOrFailInCi(this, 'no Docker Engine answers at /var/run/docker.sock');
    image = await importBusybox('berth-seed-spec-busybox');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-seed-docker-'));
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    await removeImage(image);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('evicts two lo containers, one watcher per evicted alloc, then runs hi', async () => {
    for (const f of ['lo.nomad.hcl', 'hi.nomad.hcl']) fs.writeFileSync(path.join(dir, f), asDocker(f, image));
    expect(fs.readFileSync(path.join(dir, 'lo.nomad.hcl'), 'utf8')).to.include('driver = "docker"');
    agent = await new AgentProcess(['-dev', '-config', `${DIR}agent.hcl`]).ready();
    const lo = await agent.cli(['job', 'run', path.join(dir, 'lo.nomad.hcl')]);
    expect(lo.code, lo.stdout + lo.stderr).to.equal(0);
    expect(lo.stdout.match(/-> "running"/g)).to.have.length(3);

    const hi = await agent.cli(['job', 'run', path.join(dir, 'hi.nomad.hcl')]);
    expect(hi.code, hi.stdout + hi.stderr).to.equal(0);
    expectSeedStory(hi.stdout);

    // The containers: hi's and one lo's run; the victims' are gone.
    const allocs = (await agent.req('GET', '/v1/allocations')).json as any[];
    const hiAlloc = allocs.find((a) => a.JobID === 'hi');
    const victims = allocs.filter((a) => a.DesiredStatus === 'evict');
    expect(victims).to.have.length(2);
    expect((await containersOf(hiAlloc.ID)).map((c) => c.State)).to.deep.equal(['running']);
    for (const v of victims) {
      expect(v.ClientStatus).to.equal('complete');
      expect(await containersOf(v.ID)).to.deep.equal([]);
    }
    const survivor = allocs.find((a) => a.JobID === 'lo' && a.DesiredStatus === 'run');
    expect((await containersOf(survivor.ID)).map((c) => c.State)).to.deep.equal(['running']);
    const logs = await agent.req('GET', `/v1/client/fs/logs/${victims[0].ID}?task=sleep&type=stdout&plain=true`);
    expect(logs.text).to.match(/^lo \d running\nlo stopping\n$/);
  });
});
