import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliProcess, runCli, runMain, stopCliProcesses } from '../support/cli.ts';

describe('berth init writes a file berth run runs', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-init-'))));
  afterEach(async () => {
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the batch example runs its command: the greeting with the task name and alloc id, exit 0', async () => {
    const file = join(dir, 'alloc.json');
    expect((await runMain(['init', file])).code).to.equal(0);
    const r = await runCli(['run', file]);
    expect(r.code, r.stderr).to.equal(0);
    const id = /allocation ([0-9a-f-]{36}): complete \(exit 0\)/.exec(r.stdout)?.[1];
    expect(id, r.stdout).to.be.a('string');
    expect(r.stdout).to.include(`hello | hello from hello in ${id}`);
    expect(r.leftovers).to.deep.equal([]);
  });

  it('the service example ticks until SIGINT stops it (exit 130)', async () => {
    const file = join(dir, 'alloc.json');
    expect((await runMain(['init', '--service', file])).code).to.equal(0);
    const p = new CliProcess(['run', file]);
    await p.waitFor(/^ticker \| tick 0$/m);
    p.child.kill('SIGINT');
    const r = await p.exited;
    expect(r.code, r.stderr).to.equal(130);
    expect(r.stdout).to.match(/: complete, stopped by SIGINT \(exit 130\)/);
    expect(p.leftovers()).to.deep.equal([]);
  });
});
