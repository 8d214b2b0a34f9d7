/**
 * Randomized schedules on real processes (`--real`): raw_exec tasks that are real shell
 * scripts, real alloc dirs, real executors. Each schedule stops or destroys at a random point of
 * a start or of a kill, traps SIGINT, bursts restarts, replaces an alloc, or kills a host
 * process with SIGKILL and restores in this one; I1-I3 and I5 are checked against /proc.
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '../../actors/client/client.ts';
import type { AllocRunner, Client } from '../../actors/client/types.ts';
import { isClientTerminalStatus } from '../../model/status.ts';
import type { Allocation, Task } from '../../model/types.ts';
import { Rng } from '../random.ts';
import { liveOfAlloc, liveTaskPid, recordedPids } from './proc.ts';

/** The kinds of schedule. */
export const REAL_KINDS = ['stop-in-start', 'destroy-in-start', 'destroy-in-kill', 'restart-burst', 'replace', 'crash'] as const;
export type RealKind = (typeof REAL_KINDS)[number];

/** One schedule's outcome. */
export interface RealResult {
  seed: number;
  kind: RealKind;
  violations: string[];
  ms: number;
}

/** What each task script does; the checks that need the moment of start run inside it. */
export interface TaskPlan {
  name: string;
  trapsInt: boolean;
  /** Exits 0 after this long (a batch task); absent: runs until killed. */
  lifetimeMs?: number;
  killTimeoutMs: number;
}

const uuid = (seed: number, n: number) => `${(seed >>> 0).toString(16).padStart(8, '0')}-0000-4000-9000-${n.toString(16).padStart(12, '0')}`;

/** The shell script of a task: records its pid, checks I2 and I5 at its start, then runs. */
export function taskScript(p: TaskPlan): string {
  const lines = [
    'echo $$ >> "$PIDS/$NOMAD_ALLOC_ID.$NOMAD_TASK_NAME"',
    // I2: no victim of this alloc may still run when it starts.
    'for v in $VICTIMS; do for f in "$PIDS/$v".*; do [ -f "$f" ] || continue; case "$f" in *.done) continue;; esac; for p in $(cat "$f"); do if [ -r /proc/$p/environ ] && grep -qz "^NOMAD_ALLOC_ID=$v$" /proc/$p/environ 2>/dev/null && ! grep -q "^State:.*Z" /proc/$p/status 2>/dev/null; then echo "I2 $NOMAD_ALLOC_ID/$NOMAD_TASK_NAME started beside $v pid $p" >> "$PIDS/violations"; fi; done; done; done',
    // I5: a finished task never runs again.
    '[ -f "$PIDS/$NOMAD_ALLOC_ID.$NOMAD_TASK_NAME.done" ] && echo "I5 $NOMAD_ALLOC_ID/$NOMAD_TASK_NAME ran again after it finished" >> "$PIDS/violations"',
  ];
  if (p.trapsInt) lines.push("trap '' INT");
  if (p.lifetimeMs !== undefined) lines.push(`sleep ${(p.lifetimeMs / 1000).toFixed(2)}`, 'touch "$PIDS/$NOMAD_ALLOC_ID.$NOMAD_TASK_NAME.done"', 'exit 0');
  else lines.push('while :; do sleep 0.1; done');
  return lines.join('\n');
}

/** A raw_exec alloc of the given tasks. */
export function realAlloc(id: string, plans: TaskPlan[], pidDir: string, over: Partial<Allocation> = {}, victims: string[] = []): Allocation {
  const batch = plans.every((p) => p.lifetimeMs !== undefined);
  const tasks: Task[] = plans.map((p) => ({
    name: p.name,
    driver: 'raw_exec',
    config: { command: '/bin/sh', args: ['-c', taskScript(p)] },
    env: { PIDS: pidDir, VICTIMS: victims.join(' ') },
    killTimeoutMs: p.killTimeoutMs,
    killSignal: 'SIGINT',
  }));
  return {
    id,
    nodeId: 'node-1',
    jobId: `job-${id.slice(-4)}`,
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
    job: {
      id: `job-${id.slice(-4)}`,
      type: batch ? 'batch' : 'service',
      taskGroups: [{ name: 'g', tasks, restartPolicy: { attempts: 1, intervalMs: 60_000, delayMs: 50, mode: 'fail' } }],
    },
    ...over,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or after `ms` whatever `p` does; the timer goes either way (no timer outlives a schedule). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Watches a client's broadcasts: I1 against /proc, and one live process per task (I5). */
function watchI1(client: Client, pidDir: string, violations: string[]) {
  return client.bus.of('alloc.updated').subscribe(({ alloc }) => {
    for (const [task, st] of Object.entries(alloc.taskStates ?? {})) {
      const live = recordedPids(pidDir, alloc.id, task).filter((p) => liveTaskPid(p, alloc.id));
      if (st.state === 'dead' && live.length) violations.push(`I1 ${alloc.id}/${task} broadcast dead while pid ${live.join(',')} lives`);
      if (live.length > 1) violations.push(`I5 ${alloc.id}/${task} runs twice: ${live.join(',')}`);
    }
    if (isClientTerminalStatus(alloc.clientStatus)) {
      for (const task of Object.keys(alloc.taskStates ?? {})) {
        const live = recordedPids(pidDir, alloc.id, task).filter((p) => liveTaskPid(p, alloc.id));
        if (live.length) violations.push(`I1 ${alloc.id} broadcast ${alloc.clientStatus} while ${task} pid ${live.join(',')} lives`);
      }
    }
  });
}

/** Destroys and checks I3 against /proc and the disk. */
async function destroyChecked(client: Client, r: AllocRunner, violations: string[]) {
  await r.destroy();
  const left = liveOfAlloc(r.allocId);
  if (left.length) violations.push(`I3 ${r.allocId}: destroy() resolved with live processes: ${left.join('; ')}`);
  if (existsSync(r.allocDir.dir)) violations.push(`I3 ${r.allocId}: destroy() resolved, alloc dir still there`);
  if (client.runner(r.allocId)) violations.push(`I3 ${r.allocId}: destroy() resolved, runner still registered`);
}

const untilState = (client: Client, r: AllocRunner, pred: (a: Allocation) => boolean, ms = 8000) =>
  new Promise<void>((resolve) => {
    if (pred(r.alloc())) return resolve();
    const t = setTimeout(() => (sub.unsubscribe(), resolve()), ms);
    const sub = client.bus.of('alloc.updated').subscribe((m) => {
      if (m.allocId === r.allocId && pred(m.alloc)) {
        clearTimeout(t);
        sub.unsubscribe();
        resolve();
      }
    });
  });
const running = (a: Allocation) => Object.values(a.taskStates ?? {}).some((s) => s.state === 'running');

const HOST = fileURLToPath(new URL('./host.ts', import.meta.url));

/** Runs one schedule. `root` is a temp dir this run may use. */
export async function runReal(seed: number, kind?: RealKind): Promise<RealResult> {
  const r = new Rng(seed).fork('real');
  const k: RealKind =
    kind ??
    r.pick([
      'stop-in-start',
      'stop-in-start',
      'destroy-in-start',
      'destroy-in-start',
      'destroy-in-kill',
      'destroy-in-kill',
      'restart-burst',
      'replace',
      'replace',
      'crash',
    ]);
  const t0 = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-real-'));
  const pidDir = join(dataDir, 'pids');
  mkdirSync(pidDir);
  const violations: string[] = [];
  const plan = (i: number, batch = false): TaskPlan => ({
    name: ['web', 'db'][i]!,
    trapsInt: r.chance(0.5),
    killTimeoutMs: r.pick([150, 400, 800]),
    ...(batch ? { lifetimeMs: r.int(50, 600) } : {}),
  });
  const plans = (n = r.int(1, 2), batch = false) => Array.from({ length: n }, (_, i) => plan(i, batch));
  let client: Client | undefined;
  let sub: { unsubscribe(): void } | undefined;
  const fresh = () => {
    client = createClient({ dataDir, maxKillTimeoutMs: 2000 });
    sub = watchI1(client, pidDir, violations);
    return client;
  };
  try {
    if (k === 'crash') {
      await crashAndRestore(seed, r, dataDir, pidDir, plans, violations, fresh);
    } else {
      const c = fresh();
      const a0 = c.addAlloc(realAlloc(uuid(seed, 0), plans(), pidDir));
      if (k === 'stop-in-start' || k === 'destroy-in-start') {
        await sleep(r.int(0, 350));
        if (k === 'stop-in-start') {
          c.updateAlloc({ ...a0.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
          await untilState(c, a0, (a) => isClientTerminalStatus(a.clientStatus));
        }
      } else if (k === 'destroy-in-kill') {
        await untilState(c, a0, running);
        c.updateAlloc({ ...a0.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
        await sleep(r.int(0, 900));
      } else if (k === 'restart-burst') {
        await untilState(c, a0, running);
        const n = r.int(2, 4);
        const bursts: Promise<unknown>[] = [];
        for (let i = 0; i < n; i++) {
          bursts.push(a0.restartTask('web', 'burst').catch(() => {}));
          await sleep(r.int(0, 120));
        }
        await within(Promise.all(bursts), 4000);
      } else if (k === 'replace') {
        await untilState(c, a0, running);
        const id1 = uuid(seed, 1);
        const a1 = c.addAlloc(
          realAlloc(id1, plans(), pidDir, r.chance(0.5) ? { previousAllocation: a0.allocId } : { preemptedAllocations: [a0.allocId] }, [a0.allocId]),
        );
        await sleep(r.int(0, 300));
        c.updateAlloc({ ...a0.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
        await untilState(c, a1, running, 6000);
        await destroyChecked(c, a1, violations);
      }
      for (const x of c.runners()) await destroyChecked(c, x, violations);
    }
  } catch (e) {
    violations.push(`CRASH schedule threw: ${(e as Error).stack ?? e}`);
  } finally {
    sub?.unsubscribe();
    if (client) {
      for (const x of client.runners()) await x.destroy().catch(() => {});
      await client.shutdown();
    }
    try {
      for (const line of readFileSync(join(pidDir, 'violations'), 'utf8').split('\n').filter(Boolean)) violations.push(line);
    } catch {
      // none written
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { seed, kind: k, violations: [...new Set(violations)], ms: performance.now() - t0 };
}

/** A host in a child process adds allocs and is killed with SIGKILL; this process restores. */
async function crashAndRestore(
  seed: number,
  r: Rng,
  dataDir: string,
  pidDir: string,
  plans: (n?: number, batch?: boolean) => TaskPlan[],
  violations: string[],
  fresh: () => Client,
) {
  const allocs = [realAlloc(uuid(seed, 0), plans(r.int(1, 2), r.chance(0.4)), pidDir), realAlloc(uuid(seed, 1), plans(1, r.chance(0.4)), pidDir)];
  const destroyFirst = r.chance(0.3);
  const host = spawn(process.execPath, ['--import', 'tsx', HOST, dataDir, JSON.stringify({ allocs, destroyFirst })], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  host.stdout!.setEncoding('utf8');
  host.stdout!.on('data', (c: string) => (out += c));
  const exited = new Promise<void>((res) => host.once('exit', () => res()));
  const added = new Promise<void>((res) => {
    const check = () => (out.includes('added\n') ? res() : void host.stdout!.once('data', check));
    check();
  });
  await within(Promise.race([added, exited]), 10_000);
  await sleep(r.int(0, 1500)); // dies anywhere in a start, a run, a kill, a destroy
  host.kill('SIGKILL');
  await exited;
  host.stdout!.destroy();
  const c = fresh();
  await c.restore();
  // Let restarts and reattached exits play out, then check nothing runs twice.
  await sleep(600);
  for (const a of allocs) {
    for (const t of a.job.taskGroups[0]!.tasks) {
      const live = recordedPids(pidDir, a.id, t.name).filter((p) => liveTaskPid(p, a.id));
      if (live.length > 1) violations.push(`I5 ${a.id}/${t.name} runs twice after restore: ${live.join(',')}`);
    }
  }
  for (const x of c.runners()) await destroyChecked(c, x, violations);
  // Nobody may be left: every alloc that was added is destroyed or was never restored.
  for (const a of allocs) {
    const left = liveOfAlloc(a.id);
    if (left.length) violations.push(`I5 ${a.id}: processes nobody owns after restore and destroy: ${left.join('; ')}`);
  }
}
