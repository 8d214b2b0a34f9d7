/**
 * P11, restore after kill -9: an agent (its own process, on a data dir) runs a count = N job of
 * raw_exec `sleep` tasks; it is killed with SIGKILL; a new agent starts on the same data dir.
 * The figure: from `startAgent` in the new process to every restored task's machine `running`
 * again, against the time the first agent took from the register request to every task running
 * (the same N allocs added fresh, in the same run). Checked in /proc: the same task processes
 * before and after, none started again. Target: ratio <= 0.5.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { ServerChild } from './lib/server-child.ts';
import { sleepersJobHcl } from './lib/sleepers.ts';

/** Pids of the tasks (`/bin/sh -c ...`) whose command line contains `marker`; with `all`, also
 * the supervisor's per-task shims, which carry the task's command line too. */
function pidsWith(marker: string, all = false): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(marker) && (all || cmd.startsWith('/bin/sh\0-c\0'))) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out.sort((a, b) => a - b);
}

const jobHcl = (n: number, marker: string) => sleepersJobHcl({ id: 'p11', count: n, command: '/bin/sh', args: ['-c', `sleep 100000; : ${marker}`] });

type Hello = { url: string; servedMs: number; reattachMs: number };

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p11-n', 50, 1000);
  const dir = tempDir('p11');
  const dataDir = path.join(dir, 'data');
  // The marker (in each task's `sh -c` line) finds this run's tasks in /proc.
  const marker = `p11-${process.pid}-${Date.now()}`;
  let agent: ServerChild<Hello> | undefined;
  try {
    agent = await ServerChild.start<Hello>('p11-child.ts', { dataDir, expect: 0 }, opts.log);
    opts.log(`P11 restore: registering ${n} raw_exec allocs`);
    const fresh = await agent.ask<{ freshMs?: number; error?: string }>({ cmd: 'register', hcl: jobHcl(n, marker), n });
    if (fresh.error) throw new Error(fresh.error);
    const before = pidsWith(marker);
    if (before.length !== n) throw new Error(`expected ${n} task processes, found ${before.length}`);
    agent.proc.kill('SIGKILL');
    await new Promise((r) => agent!.proc.once('exit', r));
    agent = undefined;
    const survived = pidsWith(marker);
    opts.log(`P11 restore: agent killed, ${survived.length} tasks alive; restarting`);
    agent = await ServerChild.start<Hello>('p11-child.ts', { dataDir, expect: n }, opts.log);
    const after = pidsWith(marker);
    const same = after.length === before.length && after.every((p, i) => p === before[i]);
    if (!same) throw new Error(`tasks not reattached as they were: ${before.length} pids before, ${after.length} after, same set: ${same}`);
    return [
      ratioResult({
        id: 'P11',
        name: `restore after kill -9, ${n} raw_exec allocs reattached vs started fresh`,
        unit: 'ms',
        value: agent.hello.reattachMs,
        floor: fresh.freshMs!,
        better: 'lower',
        limit: 0.5,
        extraTarget: 'same pids, nothing re-run',
        extraMet: same,
        details: { n, agentServedMs: agent.hello.servedMs, pids: before.length, samePids: same },
      }),
    ];
  } finally {
    if (agent) await agent.ask({ cmd: 'destroy' }).catch(() => {});
    await agent?.close();
    // Whatever a failed run left running: each task's process group (its `sleep` too), then the shims.
    for (const p of [...pidsWith(marker).map((p) => -p), ...pidsWith(marker, true)]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone, or not a group leader
      }
    }
    await safeRemove(dir);
  }
}
