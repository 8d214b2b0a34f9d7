import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '../../../actors/client/client.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { openStateStore } from '../../../actors/state/state-store.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';
import { wrappedRawExec } from './support/crash-support.ts';
import { until } from '../drivers/support/helpers.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..', '..', '..');

/**
 * Live (non-zombie) processes whose command line contains `needle`: the truth, from /proc. A
 * shell's fork that has not exec'd yet shows its parent's command line: only the topmost
 * process of each such family counts.
 */
function procsWith(needle: string): number[] {
  const out: number[] = [];
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state !== 'Z' && state !== 'X') {
        out.push(Number(name));
        parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      }
    } catch {}
  }
  return out.filter((pid) => !out.includes(parent.get(pid)!));
}

/** How often the task labelled `label` started (each start appends its pid). */
const runs = (dataDir: string, label: string) => {
  try {
    return readFileSync(join(dataDir, `runs-${label}`), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** The pid in the task actor's handle: the process this runner owns. */
const ownedPid = (r: AllocRunner) => {
  const child = (
    r as unknown as { actor: { getSnapshot(): { children: Record<string, { getSnapshot(): { context: { handle?: { pid?: number } } } } | undefined> } } }
  ).actor.getSnapshot().children[`task-${r.allocId}-web`];
  return child?.getSnapshot().context.handle?.pid;
};

/**
 * Runs a host (crash-client.ts) on `dataDir`. With `killOnReady`, kills it with SIGKILL once it
 * says ready; otherwise it kills itself. Resolves with the alloc ids it announced, once it is dead.
 */
async function crashHost(dataDir: string, scenario: string, killOnReady: boolean): Promise<Record<string, string>> {
  const host = spawn(process.execPath, ['--import', 'tsx', join(here, 'support', 'crash-client.ts'), dataDir, scenario], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ids: Record<string, string> = {};
  const exited = new Promise<number | null>((resolve) => host.once('exit', (_code, sig) => resolve(sig === 'SIGKILL' ? 9 : null)));
  let buf = '';
  host.stdout!.setEncoding('utf8');
  host.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl)) as { alloc?: string; id?: string; ready?: boolean };
      buf = buf.slice(nl + 1);
      if (msg.alloc) ids[msg.alloc] = msg.id!;
      if (msg.ready && killOnReady) host.kill('SIGKILL');
    }
  });
  const timer = setTimeout(() => host.kill('SIGKILL'), 15_000);
  const how = await exited;
  clearTimeout(timer);
  host.stdout!.destroy();
  expect(how, 'the host died of SIGKILL').to.equal(9);
  return ids;
}

/** A client on the crashed host's data dir with the same driver names (none of them crashes). */
function restoreClient(make: ReturnType<typeof useTempClients>, dataDir: string): Client {
  const c = createClient({
    dataDir,
    maxKillTimeoutMs: 300,
    drivers: { hang_exec: wrappedRawExec('hang_exec'), crash_exec: wrappedRawExec('crash_exec'), exit_crash_exec: wrappedRawExec('exit_crash_exec') },
  });
  void make;
  return c;
}

describe('client: host kill -9, then restore on the same data dir (checked against /proc)', function () {
  this.timeout(30_000);
  const newClient = useTempClients();
  const opened: Client[] = [];
  const dataDirs: string[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) {
      await Promise.allSettled(c.runners().map((r) => r.destroy()));
      await c.shutdown();
    }
    // Safety net for a failed test: nothing started on its data dir outlives it.
    for (const dir of dataDirs.splice(0)) {
      for (const pid of procsWith(dir)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {}
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
  });

  /** After everything is destroyed, nothing of the data dir runs on (no orphan anywhere). */
  async function expectNothingLeft(client: Client, dataDir: string) {
    await Promise.all(client.runners().map((r) => r.destroy()));
    for (let i = 0; i < 100 && procsWith(dataDir).length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(procsWith(dataDir), 'processes left after destroying every alloc').to.deep.equal([]);
  }

  /** The whole-phases crash; with `killSupervisor`, the task supervisor dies with the host. */
  async function everyPhase(killSupervisor: boolean) {
    const dataDir = newClient().dataDir;
    dataDirs.push(dataDir);
    const ids = await crashHost(dataDir, 'phases', true);
    const before = Object.fromEntries(Object.keys(ids).map((l) => [l, procsWith(join(dataDir, `runs-${l}`))]));
    expect(before.running).to.have.length(1);
    expect(before.starting, 'the hung start had a process').to.have.length(1);
    if (killSupervisor) {
      const supervisors = procsWith(join(dataDir, 'client', 'supervisor'));
      expect(supervisors, 'one supervisor held the tasks').to.have.length(1);
      process.kill(supervisors[0]!, 'SIGKILL');
      await until(() => procsWith(join(dataDir, 'client', 'supervisor')).length === 0, 5000, 'the supervisor to die');
    }

    const client = restoreClient(newClient, dataDir);
    opened.push(client);
    const restored = await client.restore();
    const byId = new Map(restored.map((r) => [r.allocId, r]));

    // Resurrection: the destroy is finished by restore itself, and the record is gone.
    expect(byId.has(ids.destroying!)).to.equal(false);
    expect(procsWith(join(dataDir, 'runs-destroying'))).to.deep.equal([]);
    const ddir = join(dataDir, 'alloc', ids.destroying!);
    expect(existsSync(ddir) ? readdirSync(ddir, { recursive: true }) : [], 'left in the destroyed alloc dir').to.deep.equal([]);

    // Running and mid-start: reattached to the very process, never started twice.
    const running = byId.get(ids.running!)!;
    const starting = byId.get(ids.starting!)!;
    for (const [label, r] of [
      ['running', running],
      ['starting', starting],
    ] as const) {
      await viewWhere(client, r, (a) => a.taskStates?.web?.state === 'running');
      expect(ownedPid(r), `${label}: owns the process that outlived the host`).to.equal(before[label]![0]);
      expect(runs(dataDir, label), `${label}: runs`).to.equal(1);
      expect(procsWith(join(dataDir, `runs-${label}`))).to.deep.equal(before[label]);
    }

    // Stopping: the kill is finished, not undone.
    const stopping = byId.get(ids.stopping!)!;
    await viewWhere(client, stopping, (a) => a.clientStatus === 'complete');
    expect(procsWith(join(dataDir, 'runs-stopping'))).to.deep.equal([]);
    expect(runs(dataDir, 'stopping')).to.equal(1);

    // Finished batch and terminal-on-arrival: never run (again).
    const finished = byId.get(ids.finished!)!;
    await finished.waitFor('stopping');
    expect(finished.alloc().clientStatus).to.equal('complete');
    expect(runs(dataDir, 'finished')).to.equal(1);
    const terminal = byId.get(ids.terminal!)!;
    await terminal.waitFor('stopping');
    expect(runs(dataDir, 'terminal')).to.equal(0);
    expect(existsSync(terminal.allocDir.dir)).to.equal(false);

    await expectNothingLeft(client, dataDir);
    await client.shutdown();
    const store = openStateStore(join(dataDir, 'client', 'state.db'));
    expect(store.load().map((s) => Object.entries(ids).find(([, id]) => id === s.alloc.id)?.[0])).to.deep.equal([]);
    store.close();
  }

  it('at every phase at once (running, finished, stopping, destroying, starting, terminal): no duplicate, orphan, re-run or resurrection', () =>
    everyPhase(false));

  it('the same with the task supervisor killed (SIGKILL) beside the host: every task is adopted, none runs twice', () => everyPhase(true));

  it('between the spawn and the save of its handle: restore reattaches the process, never starts a second', async () => {
    const dataDir = newClient().dataDir;
    dataDirs.push(dataDir);
    const ids = await crashHost(dataDir, 'spawn-save', false);
    const before = procsWith(join(dataDir, 'runs-spawned'));
    expect(before, 'the task outlived its host').to.have.length(1);
    const client = restoreClient(newClient, dataDir);
    opened.push(client);
    const [r] = await client.restore();
    expect(r!.allocId).to.equal(ids.spawned);
    await viewWhere(client, r!, (a) => a.taskStates?.web?.state === 'running');
    expect(ownedPid(r!)).to.equal(before[0]);
    expect(runs(dataDir, 'spawned')).to.equal(1);
    await expectNothingLeft(client, dataDir);
  });

  it("between a batch task's exit and its record: restore reports the exit, never runs it again", async () => {
    const dataDir = newClient().dataDir;
    dataDirs.push(dataDir);
    const ids = await crashHost(dataDir, 'exit-record', false);
    const client = restoreClient(newClient, dataDir);
    opened.push(client);
    const [r] = await client.restore();
    expect(r!.allocId).to.equal(ids.exited);
    // complete is terminal: a second run would have come before it, not after.
    await viewWhere(client, r!, (a) => a.clientStatus === 'complete');
    expect(runs(dataDir, 'exited')).to.equal(1);
    expect(r!.alloc().taskStates!.web!.events.filter((e) => e.type === 'Terminated')).to.have.length(1);
    await expectNothingLeft(client, dataDir);
  });
});
