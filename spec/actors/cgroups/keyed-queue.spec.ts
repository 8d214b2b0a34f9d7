import { expect } from 'chai';
import { KeyedQueue } from '../../../actors/cgroups/keyed-queue.ts';

/** A promise with its resolve and reject outside. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}
const turn = () => new Promise<void>((r) => setImmediate(r));

describe('KeyedQueue: one job at a time per key (the cgroup manager per alloc)', () => {
  it('runs the jobs of one key in call order, one at a time, and those of another key beside them', async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const a1 = deferred();
    const b1 = deferred();
    const job = (name: string, gate?: Promise<void>) => async () => {
      log.push(`${name} start`);
      await gate;
      log.push(`${name} end`);
      return name;
    };
    const runs = [q.run('a', job('a1', a1.promise)), q.run('a', job('a2')), q.run('b', job('b1', b1.promise))];
    await turn();
    expect(log).to.deep.equal(['a1 start', 'b1 start']);
    b1.resolve();
    await turn();
    expect(log).to.deep.equal(['a1 start', 'b1 start', 'b1 end'], 'b does not wait for a');
    a1.resolve();
    expect(await Promise.all(runs)).to.deep.equal(['a1', 'a2', 'b1']);
    expect(log.slice(3)).to.deep.equal(['a1 end', 'a2 start', 'a2 end']);
  });

  it("a job that fails rejects its own caller only; the key's next job still runs, and a settled key holds nothing", async () => {
    const q = new KeyedQueue();
    const failed = q.run('a', async () => {
      throw new Error('mkdir failed');
    });
    const next = q.run('a', async () => 'ran');
    const err = await failed.catch((e: Error) => e.message);
    expect(err).to.equal('mkdir failed');
    expect(await next).to.equal('ran');
    await turn();
    expect(q.size).to.equal(0);
  });
});
