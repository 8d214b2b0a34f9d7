import { expect } from 'chai';
import { runReal, type RealResult } from '../../sim/real/schedule.ts';

const SCHEDULES = 200;
const PARALLEL = 10;

describe('real-process schedules (raw_exec, real dirs, checked against /proc)', function () {
  // Each schedule is real processes and real executors; they run ten at a time.
  this.timeout(420_000);

  it(`hold I1-I3 and I5 on ${SCHEDULES} randomized schedules`, async () => {
    const t0 = performance.now();
    const results: RealResult[] = [];
    let next = 1;
    const worker = async () => {
      while (next <= SCHEDULES) results.push(await runReal(next++));
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const kinds = new Map<string, number>();
    for (const r of results) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
    console.log(
      `      ${results.length} schedules in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
    expect(results).to.have.length(SCHEDULES);
    for (const kind of ['stop-in-start', 'destroy-in-start', 'destroy-in-kill', 'restart-burst', 'replace', 'crash'])
      expect(kinds.get(kind), kind).to.be.greaterThan(0);
    const bad = results
      .filter((r) => r.violations.length)
      .map((r) => `seed ${r.seed} (${r.kind}): ${r.violations.join(' | ')}  (npm run sim -- --real --seed ${r.seed})`);
    expect(bad, bad.join('\n')).to.deep.equal([]);
  });
});
