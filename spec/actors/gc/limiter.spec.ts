import { expect } from 'chai';
import { Limiter } from '../../../actors/gc/limiter.ts';

/** A promise with its resolver. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('gc limiter', () => {
  it('runs at most n at once, in call order, and frees a slot on failure too', async () => {
    const limit = new Limiter(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    let peak = 0;
    const runs = gates.map((g, i) =>
      limit.run(async () => {
        started.push(i);
        peak = Math.max(peak, limit.active);
        await g.p;
        if (i === 0) throw new Error('boom');
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).to.deep.equal([0, 1]);
    gates[0]!.open();
    await runs[0]!.catch((e: Error) => expect(e.message).to.equal('boom'));
    await new Promise((r) => setImmediate(r));
    expect(started).to.deep.equal([0, 1, 2]);
    gates[1]!.open();
    gates[2]!.open();
    gates[3]!.open();
    expect(await Promise.all(runs.slice(1))).to.deep.equal([1, 2, 3]);
    expect(peak).to.equal(2);
    expect(limit.active).to.equal(0);
  });

  it('takes a bound below 1 as 1', async () => {
    const limit = new Limiter(0);
    const g = gate();
    const order: string[] = [];
    const a = limit.run(async () => {
      order.push('a');
      await g.p;
    });
    const b = limit.run(async () => void order.push('b'));
    await new Promise((r) => setImmediate(r));
    expect(order).to.deep.equal(['a']);
    g.open();
    await Promise.all([a, b]);
    expect(order).to.deep.equal(['a', 'b']);
  });
});
