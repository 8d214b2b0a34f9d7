import { BehaviorSubject } from 'rxjs';
import { AllocBroadcaster } from '../bus/broadcaster.ts';
const L = 100;
const tick = () => new Promise<void>((r) => setImmediate(r));
const mk = (n: number) => ({ id: 'x', allocModifyIndex: n }) as any;
async function berth(sends: number, batch: number, mode: 'next' | 'updates') {
  const b = new AllocBroadcaster();
  let reads = 0;
  const subs: any[] = [];
  const readers = Array.from({ length: L }, async () => {
    const l = b.listen();
    if (mode === 'updates') { subs.push(l.updates$.subscribe(() => reads++)); return; }
    for (;;) { const a = await l.next(); if (!a) return; reads++; }
  });
  await tick();
  const t0 = performance.now();
  for (let s = 0; s < sends; s += batch) {
    for (let j = 0; j < batch; j++) b.send(mk(s + j + 1));
    await tick();
  }
  const ms = performance.now() - t0;
  b.close(); await Promise.all(readers); subs.forEach((x) => x.unsubscribe());
  return (sends / ms) * 1000;
}
async function floor(sends: number, batch: number) {
  const s = new BehaviorSubject<any>(undefined);
  let seen = 0;
  const subs = Array.from({ length: L }, () => s.subscribe((a) => a && seen++));
  await tick();
  const t0 = performance.now();
  for (let k = 0; k < sends; k += batch) { for (let j = 0; j < batch; j++) s.next(mk(k + j + 1)); await tick(); }
  const ms = performance.now() - t0;
  subs.forEach((x) => x.unsubscribe());
  return (sends / ms) * 1000;
}
const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
for (const [batch, mode] of [[1000, 'next'], [1, 'next'], [10, 'next'], [1000, 'updates'], [1, 'updates']] as const) {
  const sends = batch === 1 ? 20000 : 200000;
  const f: number[] = [], b: number[] = [];
  for (let i = 0; i < 5; i++) { f.push(await floor(sends, batch)); b.push(await berth(sends, batch, mode)); }
  console.log(`batch ${batch} ${mode}: berth ${(med(b) / 1000).toFixed(0)}k/s floor ${(med(f) / 1000).toFixed(0)}k/s ratio ${(med(b) / med(f)).toFixed(2)}`);
}
