/**
 * The command line's traps for a new user, each shown gone: a `logs -f` that never returned, an
 * empty `Created`, an alloc id silently run twice into the same logs, a previousAllocation refused
 * although it ran in the same data dir, a failing batch task waiting a minute in silence, a
 * 400-character EACCES list in every Driver event, and a `run --view` page gone before anyone
 * could open it.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { restartNote } from '../../bin/cli/run/restart.ts';
import { BERTH_TS, CliProcess, runCli, runMain, stopCliProcesses } from '../support/cli.ts';
import { makeAlloc } from '../support/fixtures.ts';
import { writeFifo } from '../support/fifo.ts';

/** A loopback port nothing listens on (at the time of asking). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A one-task batch allocation file running `script` under /bin/sh. */
function shAlloc(script: string, over: Record<string, unknown> = {}, group: Record<string, unknown> = {}): string {
  return JSON.stringify({
    job: {
      id: 'spec',
      type: 'batch',
      taskGroups: [{ name: 'g', tasks: [{ name: 'work', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] } }], ...group }],
    },
    taskGroup: 'g',
    ...over,
  });
}

describe('berth CLI: no traps for a new user', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-traps-'));
    chmodSync(dir, 0o755);
  });
  afterEach(async () => {
    await stopCliProcesses();
    // `run --data-dir` keeps state and logs (no mounts); remove them.
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs -f on a finished task prints its output and returns; on a live one it returns once the task is dead', async () => {
    const data = join(dir, 'data');
    const done = join(dir, 'done.json');
    writeFileSync(done, shAlloc('echo finished-line'));
    const first = await runCli(['run', '--data-dir', data, done]);
    expect(first.code, first.stderr).to.equal(0);
    const id = JSON.parse(await runMain(['status', '--data-dir', data, '--json']).then((r) => r.stdout))[0].id as string;
    const finished = await runMain(['logs', '--data-dir', data, id, 'work', '-f']);
    expect(finished.code).to.equal(0);
    expect(finished.stdout).to.equal('finished-line\n');

    // A live task: it prints, then waits on a fifo the test writes to, then prints again and exits.
    const fifo = join(dir, 'go');
    await promisify(execFile)('mkfifo', [fifo]);
    const live = join(dir, 'live.json');
    writeFileSync(live, shAlloc(`echo before; read x < ${fifo}; echo after-$x`));
    const run = new CliProcess(['run', '--data-dir', data, live]);
    await run.waitFor(/work \| before/);
    const liveId = (JSON.parse((await runMain(['status', '--data-dir', data, '--json'])).stdout) as Array<{ id: string }>).find((a) => a.id !== id)!.id;
    const follow = new CliProcess(['logs', '--data-dir', data, liveId, 'work', '-f']);
    await follow.waitFor(/^before$/m);
    await writeFifo(fifo, 'go\n');
    const followed = await follow.exited;
    expect(followed.code, followed.stderr).to.equal(0);
    expect(followed.stdout).to.equal('before\nafter-go\n');
    expect((await run.exited).code).to.equal(0);
    expect([...run.leftovers(), ...follow.leftovers()]).to.deep.equal([]);
  });

  it('status fills Created (the list and one alloc), from the time berth run took the file', async () => {
    const data = join(dir, 'data');
    const file = join(dir, 'a.json');
    writeFileSync(file, shAlloc('true'));
    const before = Date.now();
    expect((await runCli(['run', '--data-dir', data, file])).code).to.equal(0);
    const list = await runMain(['status', '--data-dir', data]);
    const [head, row] = list.stdout.trim().split('\n');
    const col = head!.indexOf('Created');
    expect(row!.slice(col, col + 19)).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const json = JSON.parse((await runMain(['status', '--data-dir', data, '--json'])).stdout) as Array<{ id: string; createTime: number }>;
    expect(json[0]!.createTime).to.be.within(before - 1000, Date.now());
    const one = await runMain(['status', '--data-dir', data, json[0]!.id.slice(0, 8)]);
    expect(one.stdout).to.match(/^Created\s+= \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/m);
  });

  it('refuses to run an alloc id again in the same data dir (exit 2, logs untouched); --force destroys the old one and runs it again', async () => {
    const data = join(dir, 'data');
    const id = '2c8f7d2e-3b0a-4c1e-9f55-0a1b2c3d4e5f';
    const file = join(dir, 'a.json');
    writeFileSync(file, shAlloc('echo run-$$', { id }));
    const first = await runCli(['run', '--data-dir', data, file]);
    expect(first.code, first.stderr).to.equal(0);
    const logs1 = (await runMain(['logs', '--data-dir', data, id, 'work'])).stdout;
    expect(logs1).to.match(/^run-\d+\n$/);

    const again = await runCli(['run', '--data-dir', data, file]);
    expect(again.code).to.equal(2);
    expect(again.stderr.trim()).to.equal(
      `berth: ${file}: allocation ${id} already ran in ${data} (complete); leave out its id for a new one, or add --force to destroy the old one (its dir and logs) and run it again`,
    );
    expect((await runMain(['logs', '--data-dir', data, id, 'work'])).stdout).to.equal(logs1);

    const forced = await runCli(['run', '--data-dir', data, '--force', file]);
    expect(forced.code, forced.stderr).to.equal(0);
    const logs2 = (await runMain(['logs', '--data-dir', data, id, 'work'])).stdout;
    expect(logs2).to.match(/^run-\d+\n$/); // one run's line: the old logs went with the old alloc
    expect(logs2).not.to.equal(logs1);
    const all = JSON.parse((await runMain(['status', '--data-dir', data, '--json'])).stdout) as unknown[];
    expect(all).to.have.length(1);
  });

  it('runs an alloc whose previousAllocation ran in the same data dir: it waits for it and takes over its sticky data; elsewhere it says why not', async () => {
    const data = join(dir, 'data');
    const prevId = '11111111-2222-4333-8444-555555555555';
    const disk = { ephemeralDisk: { sticky: true } };
    const v1 = join(dir, 'v1.json');
    writeFileSync(v1, shAlloc('echo kept-by-v1 > $NOMAD_ALLOC_DIR/data/note', { id: prevId }, disk));
    expect((await runCli(['run', '--data-dir', data, v1])).code).to.equal(0);
    const v2 = join(dir, 'v2.json');
    writeFileSync(v2, shAlloc('cat $NOMAD_ALLOC_DIR/data/note', { previousAllocation: prevId }, disk));
    const r = await runCli(['run', '--data-dir', data, v2]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^work \| kept-by-v1$/m);
    expect(r.stdout).to.match(/waits for previous alloc 11111111/);

    const elsewhere = await runMain(['run', v2]);
    expect(elsewhere.code).to.equal(2);
    expect(elsewhere.stderr).to.include('previousAllocation makes the allocation wait for others that are not in this data dir');
  });

  it('a failing batch task says why it waits, when it happens; --restart overrides the policy (attempts=0 fails at once)', async () => {
    const file = join(dir, 'fail.json');
    writeFileSync(file, shAlloc('echo failing; exit 3'));
    const once = await runCli(['run', '--restart', 'attempts=1,delay=5ms,interval=1h', file]);
    expect(once.code).to.equal(3);
    // 5 ms plus Nomad's jitter of up to a quarter of the delay
    expect(once.stderr).to.match(/berth: work: restarting in [56] ms: attempt 1 of 1 in 1h, set by --restart/);
    expect(once.stdout.match(/work \| failing/g)).to.have.length(2);

    const none = await runCli(['run', '--restart', 'attempts=0', file]);
    expect(none.code).to.equal(3);
    expect(none.stdout.match(/work \| failing/g)).to.have.length(1);
    expect(none.stdout).to.match(/Not Restarting/);
    expect(none.stderr).not.to.include('restarting in');

    for (const bad of ['attempts=-1', 'tries=2', 'delay=soon', 'mode=maybe', 'interval=0s']) {
      const r = await runMain(['run', '--restart', bad, file]);
      expect(r.code, bad).to.equal(2);
      expect(r.stderr.trim().split('\n'), bad).to.have.length(1);
    }
  });

  it("the restart note for Nomad's batch default names the attempt, the policy and how to change it", () => {
    const alloc = makeAlloc([{ name: 'work', driver: 'raw_exec', config: { command: '/bin/false' } }], { jobType: 'batch' });
    const event = { type: 'Restarting', time: 0, displayMessage: 'Task restarting in 17.5s', details: { start_delay: String(17_500 * 1e6) } };
    expect(restartNote(alloc, 'work', event, 1, false)).to.equal(
      'work: restarting in 17.5 s: attempt 1 of 3 in 24h, the batch default; set group.restart to change (berth run --restart attempts=0 to fail at once)',
    );
    const service = makeAlloc([{ name: 'web', driver: 'raw_exec', config: { command: '/bin/false' } }]);
    expect(restartNote(service, 'web', event, 2, false)).to.match(/attempt 2 of 2 in 30m, the service default/);
  });

  it('a run as a non-root user says "no cgroup: not root" in the Driver event; --verbose adds the full reasons', async function () {
    if (process.geteuid?.() !== 0) return this.skip(); // needs root to become nobody
    const NOBODY = 65534;
    const home = join(dir, 'nobody');
    mkdirSync(home);
    chownSync(home, NOBODY, NOBODY);
    const file = join(home, 'a.json');
    writeFileSync(file, shAlloc('true'));
    const tsx = import.meta.resolve('tsx');
    const asNobody = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', tsx, BERTH_TS, ...args], {
        cwd: home,
        uid: NOBODY,
        gid: NOBODY,
        env: { ...process.env, HOME: home, TMPDIR: home, NO_COLOR: '1' },
      }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string; message: string }) => ({ code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message }),
      );
    const plain = await asNobody(['run', file]);
    // A checkout under a private dir (0700) is unreadable to nobody: EACCES, or tsx's loader "not found".
    if (plain.code !== 0 && /EACCES|permission denied|ERR_MODULE_NOT_FOUND/i.test(plain.stderr) && !/cgroup/.test(plain.stderr)) {
      console.log(`      - skipped: user nobody cannot run the checkout (${plain.stderr.split('\n')[0]})`);
      return this.skip();
    }
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stdout).to.match(/work: Driver — resources: no cgroup: not root; no limits, kills by process group only/);
    expect(plain.stdout + plain.stderr).not.to.match(/EACCES/);
    const verbose = await asNobody(['run', '--verbose', file]);
    expect(verbose.code, verbose.stderr).to.equal(0);
    expect(verbose.stderr).to.match(/^berth: no cgroups: not root \(.*EACCES.*\)$/m);
  });

  it('run --view ends by itself once the page that was open is closed', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, shAlloc('echo viewed'));
    const port = await freePort();
    const p = new CliProcess(['run', '--view', '--view-port', String(port), file]);
    await p.waitFor(/viewer: open http/);
    // A page: the event stream a browser tab holds open.
    const page = await new Promise<ClientRequest>((resolve, reject) => {
      const req = request(`http://127.0.0.1:${port}/api/events`, { agent: false }, (res) => {
        expect(res.statusCode).to.equal(200);
        res.resume();
        resolve(req);
      });
      req.on('error', reject);
      req.end();
    });
    await p.waitFor(/the viewer stays open until its page is closed, or Ctrl-C/);
    expect(p.child.exitCode).to.equal(null);
    page.destroy(); // the tab is closed
    const r = await p.exited;
    expect(r.code).to.equal(0);
    expect(p.leftovers()).to.deep.equal([]);
  });

  it('run --view of a batch alloc keeps the page up after the alloc ended, until Ctrl-C', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, shAlloc('echo viewed'));
    const port = await freePort();
    const p = new CliProcess(['run', '--view', '--view-port', String(port), file]);
    await p.waitFor(/the viewer stays open until its page is closed, or Ctrl-C/);
    const url = /viewer: open (http:\/\/\S+)/.exec(p.stderr)![1]!;
    const page = await fetch(url);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.match(/<html/i);
    expect(p.child.exitCode).to.equal(null); // the batch alloc is done, the command is not
    p.child.kill('SIGINT');
    const r = await p.exited;
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^work \| viewed$/m);
    expect(p.leftovers()).to.deep.equal([]);
  });

  it('a file without an id runs as a new allocation each time in the same data dir', async () => {
    const data = join(dir, 'data');
    const file = join(dir, 'no-id.json');
    writeFileSync(file, shAlloc('echo once'));
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['run', '--data-dir', data, file]);
      expect(r.code, r.stderr).to.equal(0);
    }
    const all = JSON.parse((await runMain(['status', '--data-dir', data, '--json'])).stdout) as Array<{ id: string }>;
    expect(all).to.have.length(2);
    expect(all[0]!.id).to.not.equal(all[1]!.id);
  });
});
