/**
 * P3's measured part: one preemptor waiting on K local victims; time from the last victim's
 * terminal broadcast to the preemptor entering `running`. Runs as its own process.
 */
import path from 'node:path';
import { BehaviorSubject, filter, firstValueFrom } from 'rxjs';
import { createClient } from '../actors/client/client.ts';
import { isTerminated } from '../model/status.ts';
import type { Allocation } from '../model/types.ts';
import { mockAlloc, waitStopped } from './lib/allocs.ts';
import { childDone, childLog, childPayload } from './lib/proc.ts';
import { now } from './lib/stats.ts';
import { NO_GC } from './lib/no-gc.ts';

interface Payload {
  k: number;
  rounds: number;
  mode: 'sequential' | 'same-tick';
  dir: string;
}
const { k, rounds, mode, dir } = childPayload<Payload>();

/** Records every timer scheduled from watcher code (stack under actors/watchers or the watcher machine). */
function spyTimers() {
  const hits: string[] = [];
  const g = globalThis as unknown as Record<string, (...a: unknown[]) => unknown>;
  const names = ['setTimeout', 'setInterval'] as const;
  const orig = names.map((n) => g[n]!);
  names.forEach((n, i) => {
    g[n] = function (this: unknown, ...a: unknown[]) {
      const stack = new Error().stack ?? '';
      if (/actors\/watchers\/|watcher\.machine/.test(stack)) hits.push(`${n}: ${stack.split('\n').slice(2, 5).join(' | ')}`);
      return orig[i]!.apply(this, a);
    };
  });
  return { hits, restore: () => names.forEach((n, i) => (g[n] = orig[i]!)) };
}

async function round(r: number): Promise<{ ms: number; watcherTimers: string[] }> {
  const client = createClient({ dataDir: path.join(dir, `r${r}`), ...NO_GC });
  client.bus.of('client.error').subscribe((m) => childLog(`client.error ${JSON.stringify(m)}`));
  const victims = Array.from({ length: k }, () => mockAlloc());
  const vr = victims.map((a) => client.addAlloc(a));
  await Promise.all(vr.map((x) => x.waitFor('running')));
  const ids = new Set(victims.map((v) => v.id));
  const pre = mockAlloc({ preemptedAllocations: [...ids] });
  let lastTerminal = 0;
  let running = 0;
  let waiting = 0;
  let allWaiting!: () => void;
  const waitingP = new Promise<void>((res) => (allWaiting = res));
  client.bus.of('alloc.updated').subscribe((m) => {
    if (ids.has(m.allocId) && isTerminated(m.alloc)) lastTerminal = now();
  });
  const runningP = new Promise<void>((res) =>
    client.bus.of('alloc.state').subscribe((m) => {
      if (m.allocId === pre.id && m.to === 'running') {
        running = now();
        res();
      }
    }),
  );
  client.bus.of('watcher.waiting').subscribe((m) => {
    if (m.allocId === pre.id && ++waiting === k) allWaiting();
  });
  const spy = spyTimers();
  try {
    const pr = client.addAlloc(pre);
    await waitingP;
    if (pr.state() !== 'waiting-prev') throw new Error(`preemptor in ${pr.state()}, expected waiting-prev`);
    if (mode === 'same-tick') {
      for (const v of victims) client.updateAlloc({ ...v, desiredStatus: 'evict', allocModifyIndex: 2 });
    } else {
      for (let i = 0; i < victims.length; i++) {
        client.updateAlloc({ ...victims[i]!, desiredStatus: 'evict', allocModifyIndex: 2 });
        await waitStopped(vr[i]!);
      }
    }
    await runningP;
  } finally {
    spy.restore();
  }
  const ms = running - lastTerminal;
  await client.shutdown();
  return { ms, watcherTimers: spy.hits };
}

/** The same hop through bare BehaviorSubjects: K waiters, the last `next` to the joined wake-up. */
async function floorRound(): Promise<number> {
  const subjects = Array.from({ length: k }, () => new BehaviorSubject<Allocation | undefined>(undefined));
  const all = Promise.all(subjects.map((s) => firstValueFrom(s.pipe(filter((a): a is Allocation => !!a && isTerminated(a))))));
  let end = 0;
  const done = all.then(() => (end = now()));
  const terminal = { ...mockAlloc(), clientStatus: 'complete' } as Allocation;
  let last = 0;
  for (const s of subjects) {
    last = now();
    s.next(terminal);
  }
  await done;
  return end - last;
}

const samples: number[] = [];
const floors: number[] = [];
const timers: string[] = [];
for (let r = 0; r < rounds; r++) {
  const { ms, watcherTimers } = await round(r);
  samples.push(ms);
  timers.push(...watcherTimers);
  floors.push(await floorRound());
}
childDone({ samples, floors, watcherTimers: timers.slice(0, 5), watcherTimerCount: timers.length });
