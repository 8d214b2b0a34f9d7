import { AllocBroadcaster as O } from './bc-orig.ts';
import { AllocBroadcaster as V1 } from './bc-v1.ts';
import { AllocBroadcaster as V2 } from './bc-v2.ts';
const L = 100;
const tick = () => new Promise<void>((r) => setImmediate(r));
const mk = (n: number) => ({ id: 'x', allocModifyIndex: n }) as any;
async function rate(B: any, sends: number, batch: number) {
  const b = new B();
  let reads = 0;
  const readers = Array.from({ length: L }, async () => { const l = b.listen(); for (;;) { const a = await l.next(); if (!a) return; reads++; } });
  await tick();
  const t0 = performance.now();
  for (let s = 0; s < sends; s += batch) { for (let j = 0; j < batch; j++) b.send(mk(s + j + 1)); await tick(); }
  const ms = performance.now() - t0;
  b.close(); await Promise.all(readers);
  return (sends / ms) * 1000;
}
const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
for (const batch of [1, 10, 1000]) {
  const sends = batch === 1 ? 20000 : 200000;
  const r: Record<string, number[]> = { O: [], V1: [], V2: [] };
  for (let i = 0; i < 7; i++) { r.O!.push(await rate(O, sends, batch)); r.V1!.push(await rate(V1, sends, batch)); r.V2!.push(await rate(V2, sends, batch)); }
  console.log(`batch ${batch}: orig ${(med(r.O!) / 1000).toFixed(0)}k v1 ${(med(r.V1!) / 1000).toFixed(0)}k v2 ${(med(r.V2!) / 1000).toFixed(0)}k`);
}
