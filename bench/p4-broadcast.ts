/**
 * P4, broadcaster fan-out: sends per second from one AllocBroadcaster to 100 listeners, each
 * reading with `await listener.next()`, beside a bare BehaviorSubject with 100 subscribers. The
 * sender yields to the event loop every `batch` sends so listeners do run. Then the same with one
 * slow listener (10 ms per read): the sender's rate must not change.
 */
import { BehaviorSubject } from 'rxjs';
import { AllocBroadcaster } from '../bus/broadcaster.ts';
import type { Allocation } from '../model/types.ts';
import { mockAlloc } from './lib/allocs.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now, sleep, tick } from './lib/stats.ts';

const LISTENERS = 100;
const BATCH = 1000;

const base = mockAlloc();
/** BATCH allocs with increasing allocModifyIndex from `from` (made the same way for both sides). */
function batchOf(from: number): Allocation[] {
  const out = new Array<Allocation>(BATCH);
  for (let j = 0; j < BATCH; j++) out[j] = { id: base.id, allocModifyIndex: from + j + 1 } as Allocation;
  return out;
}

async function berthRate(sends: number, slow: boolean): Promise<number> {
  const b = new AllocBroadcaster();
  let reads = 0;
  const readers = Array.from({ length: LISTENERS }, async (_, i) => {
    const l = b.listen();
    for (;;) {
      const a = await l.next();
      if (!a) return;
      reads++;
      if (slow && i === 0) await sleep(10);
    }
  });
  await tick();
  const t0 = now();
  for (let s = 0; s < sends; s += BATCH) {
    const allocs = batchOf(s);
    for (let j = 0; j < BATCH; j++) if (!b.send(allocs[j]!)) throw new Error('dropped as stale');
    await tick();
  }
  const ms = now() - t0;
  b.close();
  await Promise.all(readers);
  if (reads === 0) throw new Error('listeners read nothing');
  return (sends / ms) * 1000;
}

async function floorRate(sends: number): Promise<number> {
  const s = new BehaviorSubject<Allocation | undefined>(undefined);
  let seen = 0;
  const subs = Array.from({ length: LISTENERS }, () => s.subscribe((a) => a && seen++));
  await tick();
  const t0 = now();
  for (let k = 0; k < sends; k += BATCH) {
    const allocs = batchOf(k);
    for (let j = 0; j < BATCH; j++) s.next(allocs[j]!);
    await tick();
  }
  const ms = now() - t0;
  for (const x of subs) x.unsubscribe();
  if (seen === 0) throw new Error('nothing seen');
  return (sends / ms) * 1000;
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const sends = size(opts, 'p4-sends', 50_000, 1_000_000);
  const reps = opts.quick ? 3 : 5;
  const b: number[] = [];
  const f: number[] = [];
  const slow: number[] = [];
  for (let i = 0; i < reps; i++) {
    // Interleaved, so machine noise hits all three alike.
    f.push(await floorRate(sends));
    b.push(await berthRate(sends, false));
    slow.push(await berthRate(sends, true));
  }
  const bm = median(b);
  const fm = median(f);
  const sm = median(slow);
  return [
    ratioResult({
      id: 'P4',
      name: `broadcaster fan-out to ${LISTENERS} listeners`,
      unit: 'sends/s',
      value: bm,
      floor: fm,
      better: 'higher',
      limit: 0.5,
      details: { sends, reps, berth: b, floor: f },
    }),
    ratioResult({
      id: 'P4',
      name: `fan-out with one slow listener (vs all fast)`,
      unit: 'sends/s',
      value: sm,
      floor: bm,
      better: 'higher',
      limit: 0.9,
      details: { sends, reps, slow, note: 'floor here is the same broadcaster with all listeners fast; one listener sleeps 10 ms per read' },
    }),
  ];
}
