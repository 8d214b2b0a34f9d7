/**
 * The traps a new user met in the first hour with `berth agent`, each through the binary: a
 * second agent on the same data dir is refused naming the first one's pid (and touches none of
 * its tasks), and a busy port says who holds it and how to pick another.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, lockDataDir } from '../../agent/state/data-dir-lock.ts';
import { AgentProcess } from '../support/agent.ts';
import { runCli, stopCliProcesses } from '../support/cli.ts';

describe('agent: one agent per data dir', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-lock-'));
  });
  afterEach(async () => {
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second agent on the same data dir exits 2 naming the first one, which keeps serving', async () => {
    const first = await new AgentProcess(['-data-dir', dir]).ready();
    try {
      const second = await runCli(['agent', '-port', '0', '-data-dir', dir]);
      expect(second.code, second.stderr).to.equal(2);
      expect(second.stderr).to.include(`data dir ${dir} is in use by another berth agent (pid ${first.proc.child.pid})`);
      expect(second.stdout).to.not.include('listening');
      // The first agent was not disturbed: it still answers.
      const leader = await first.req('GET', '/v1/status/leader');
      expect(leader.status).to.equal(200);
    } finally {
      await first.stop();
    }
    // Once the first has stopped, the dir is free again.
    const again = await new AgentProcess(['-data-dir', dir]).ready();
    await again.stop();
  });

  it('-dev with the same -data-dir is refused too', async () => {
    const first = await new AgentProcess(['-dev', '-data-dir', dir]).ready();
    try {
      const second = await runCli(['agent', '-dev', '-port', '0', '-data-dir', dir]);
      expect(second.code, second.stderr).to.equal(2);
      expect(second.stderr).to.include(`(pid ${first.proc.child.pid})`);
    } finally {
      await first.stop();
    }
  });

  it('a kill -9 of the holder frees the dir (the kernel drops the lock; nothing stale is left)', async () => {
    const first = await new AgentProcess(['-data-dir', dir]).ready();
    await first.crash();
    const next = await new AgentProcess(['-data-dir', dir]).ready();
    await next.stop();
  });

  it('in one process, a second lock on the dir is refused at once, and given back on release', () => {
    const held = lockDataDir(dir);
    try {
      expect(() => lockDataDir(dir))
        .to.throw(DataDirLockedError)
        .with.property('holderPid', process.pid);
    } finally {
      held.release();
    }
    lockDataDir(dir).release();
  });
});

describe('agent: a busy port', function () {
  this.timeout(60_000);
  let server: Server;
  let port: number;
  before(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await stopCliProcesses();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('names the process on the port and how to pick another, exit 2, no internal error', async () => {
    const r = await runCli(['agent', '-dev', '-port', String(port)]);
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.not.include('internal error');
    expect(r.stderr).to.include(`127.0.0.1:${port} is already in use by pid ${process.pid} (`);
    expect(r.stderr).to.include('-port N or ports { http = N }');
    expect(r.leftovers, 'the dev data dir is removed').to.deep.equal([]);
  });
});

describe('agent: a usage or config error', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-usage-'));
  });
  afterEach(async () => {
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 2 naming the unknown flag or the config key, before it opens any state', async () => {
    const flag = await runCli(['agent', '-dev', '-port', '0', '-no-such-flag']);
    expect(flag.code, flag.stderr).to.equal(2);
    expect(flag.stderr).to.include('no-such-flag');
    const config = join(dir, 'bad.hcl');
    writeFileSync(config, 'client {\n  cpu_total_compute = "lots"\n}\n');
    const bad = await runCli(['agent', '-port', '0', '-data-dir', join(dir, 'data'), '-config', config]);
    expect(bad.code, bad.stderr).to.equal(2);
    expect(bad.stderr).to.include('client.cpu_total_compute: must be a non-negative number, got "lots"');
    expect(existsSync(join(dir, 'data', 'server'))).to.equal(false);
  });
});
