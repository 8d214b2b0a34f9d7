/**
 * A `-dev` agent that dies without its exit path (kill -9) leaves its tasks running and its
 * tmpfs mounts behind in a temp dir no one names again: the next agent to start on the machine
 * cleans it (tasks stopped, mounts gone, dir removed) and leaves a live dev agent's dir alone.
 * The exit paths the process can see (SIGHUP here) clean up as SIGTERM does.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, markerJobHcl, pidsWith, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const isRoot = process.geteuid?.() === 0;

/** Mount points at or under `dir`, from this process's mount table. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(dir + '/'));
}

describe('agent: what a dead -dev agent left', function () {
  this.timeout(120_000);
  let dir: string;
  let tmp: string;
  const agents: AgentProcess[] = [];
  const marker = `dev-sweep-spec-${process.pid}-${Date.now()}`;

  const start = async (argv: string[]) => {
    const a = await new AgentProcess(argv, { tmp }).ready();
    agents.push(a);
    return a;
  };
  const devDirs = () => readdirSync(tmp).filter((n) => n.startsWith('berth-dev-'));
  const runMarkerJob = async (a: AgentProcess, id: string) => {
    const file = join(dir, `${id}.nomad.hcl`);
    writeFileSync(file, markerJobHcl(id, `${marker}-${id}`));
    const run = await a.cli(['job', 'run', file]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    await waitFor(a, '/v1/allocations', (l: any[]) => l.length === 1 && l[0].ClientStatus === 'running', `${id} running`);
    const pids = pidsWith(`${marker}-${id}`);
    expect(pids.length).to.equal(1);
    return pids;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dev-sweep-spec-'));
    // The agents' shared TMPDIR, where a -dev agent makes its data dir.
    tmp = join(dir, 'tmp');
    mkdirSync(tmp);
  });

  afterEach(async () => {
    for (const a of agents.splice(0)) if (a.proc.child.exitCode === null && a.proc.child.signalCode === null) await a.stop();
    await stopCliProcesses();
    // Whatever a failed run left: a -dev agent on each leftover dir destroys its allocs.
    if (existsSync(tmp)) for (const n of devDirs()) await (await new AgentProcess(['-dev', '-data-dir', join(tmp, n), '-repair-state']).ready()).stop();
    for (const pid of pidsWith(marker)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the next agent stops its tasks, unmounts and removes its dir, and leaves a live dev agent alone', async () => {
    const dead = await start(['-dev']);
    const [deadDir] = devDirs();
    expect(deadDir).to.be.a('string');
    const deadPath = join(tmp, deadDir!);
    const deadPids = await runMarkerJob(dead, 'dead');
    if (isRoot) expect(mountsUnder(deadPath).length, 'a task dir mounts its secrets and private dirs').to.be.greaterThan(0);
    await dead.crash();
    // The crash left everything: the task, its mounts, the dir.
    expect(pidsWith(`${marker}-dead`)).to.deep.equal(deadPids);
    expect(existsSync(deadPath)).to.equal(true);

    // The next agent to start (a dev agent here) sweeps it.
    const live = await start(['-dev']);
    await live.proc.waitFor(/removed what a dead dev agent left in \S+/);
    expect(live.proc.stderr).to.include(`removed what a dead dev agent left in ${deadPath} (1 allocation destroyed)`);
    expect(pidsWith(`${marker}-dead`)).to.deep.equal([]);
    expect(mountsUnder(deadPath)).to.deep.equal([]);
    expect(existsSync(deadPath)).to.equal(false);

    // Another start while that dev agent lives leaves its dir, task and API alone (its stop
    // waits for its sweep to end).
    const livePath = join(
      tmp,
      devDirs().find((n) => n !== deadDir)!,
    );
    const livePids = await runMarkerJob(live, 'live');
    const next = await start(['-data-dir', join(dir, 'data')]);
    const stopped = await next.stop();
    expect(stopped.stderr).to.not.include('dead dev agent');
    expect(existsSync(livePath)).to.equal(true);
    expect(pidsWith(`${marker}-live`)).to.deep.equal(livePids);
    expect((await live.req('GET', '/v1/status/leader')).status).to.equal(200);
  });

  it('SIGHUP closes a -dev agent as SIGTERM does: its allocs destroyed, its dir removed', async () => {
    const a = await start(['-dev']);
    const [d] = devDirs();
    await runMarkerJob(a, 'hup');
    a.proc.child.kill('SIGHUP');
    const r = await a.proc.exited;
    expect(r.code).to.equal(0);
    expect(r.stderr).to.match(/caught SIGHUP, stopping/);
    expect(pidsWith(`${marker}-hup`)).to.deep.equal([]);
    expect(existsSync(join(tmp, d!))).to.equal(false);
  });
});
