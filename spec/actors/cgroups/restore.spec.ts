/**
 * A host killed with -9 while its task runs: a new client restores the alloc, reattaches the
 * task's cgroup, and stop + destroy leave no process and no cgroup. Root only.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';
import { allocDirsOf, anyDirLeft, cgroupOf, handleOf, pidsIn } from './support/cgroup-helpers.ts';
import { alive, until } from '../drivers/support/helpers.ts';
import { skipOrFailInCi } from '../../support/skips.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');

describe('cgroups: host kill -9, restore, stop (root)', function () {
  this.timeout(40_000);
  const newClient = useTempClients();
  const hosts: number[] = [];
  const dirs: string[] = [];

  before(function () {
    if (process.geteuid?.() !== 0) skipOrFailInCi(this, 'cgroups need root');
    const d = detectCgroups();
    if (!d.ok) skipOrFailInCi(this, `no writable cgroup hierarchy: ${d.reason}`);
  });
  afterEach(() => {
    for (const pid of hosts.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('reattaches the surviving task with its cgroup; stop and destroy leave nothing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-cgrestore-'));
    dirs.push(dataDir);
    // a task with a setsid'd grandchild, so only the cgroup can find everything
    const alloc = makeAlloc([
      {
        name: 'web',
        driver: 'raw_exec',
        killTimeoutMs: 1000,
        resources: { memoryMB: 64, cpu: 100 },
        config: { command: '/bin/sh', args: ['-c', "(setsid sh -c 'exec sleep 1000' &); exec sleep 1000"] },
      },
    ]);
    const host = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'support', 'client-host.ts'), dataDir, JSON.stringify(alloc)], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    hosts.push(host.pid!);
    await new Promise<void>((resolve, reject) => {
      host.stdout!.setEncoding('utf8');
      host.stdout!.on('data', (c: string) => c.includes('ready') && resolve());
      host.on('exit', (code) => reject(new Error(`host exited early (${code})`)));
    });
    const exited = new Promise((r) => host.once('exit', r));
    host.kill('SIGKILL');
    await exited;
    host.stdout!.destroy();

    const client = newClient({ dataDir });
    const [r] = await client.restore();
    expect(r, 'restored runner').to.not.equal(undefined);
    await until(() => !!handleOf(r!, 'web'), 10_000, 'the reattached handle');
    const cg = cgroupOf(r!, 'web');
    // Both sleeps survived the host, and nothing else runs there: the task was reattached, not
    // started again (a third process here would be a second copy of the task).
    await until(() => pidsIn(cg).length >= 2, 5000, 'sleep, its grandchild');
    expect(pidsIn(cg)).to.have.length(2);
    const pids = pidsIn(cg);
    expect(pids.every(alive)).to.equal(true);
    await viewWhere(client, r!, (a) => a.taskStates?.web?.state === 'running'); // reattached
    const stats = await r!.stats();
    expect(stats.tasks.web!.resourceUsage.memoryStats.measured).to.include('RSS');

    client.updateAlloc({ ...r!.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
    await viewWhere(client, r!, (a) => a.taskStates?.web?.state === 'dead');
    await r!.destroy();
    for (const pid of pids) expect(alive(pid), `pid ${pid} left`).to.equal(false);
    expect(anyDirLeft([...Object.values(cg.paths), ...allocDirsOf(cg)])).to.deep.equal([]);
  });
});
