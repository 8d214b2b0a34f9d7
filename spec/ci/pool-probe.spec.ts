/**
 * The leak check's thread-pool guard (`probePool` in `spec/support/leak-check.ts`, run after each
 * test): one fs call on libuv's pool, bounded, so a test that strands the pool's threads fails by
 * name instead of every later fs call of the run waiting without a word.
 */
import { expect } from 'chai';
import { PoolHeldError, probePool } from '../support/leak-check.ts';
import { holdThreadpool, threadsWaitingForWriter } from '../support/pool-hold.ts';

describe('leak check: the thread-pool probe after each test', () => {
  it('answers at once when the pool is free, and fails with PoolHeldError within its bound when every pool thread is blocked', async () => {
    await probePool(1000);
    const pool = await holdThreadpool();
    try {
      const start = Date.now();
      const err = await probePool(100).catch((e: Error) => e);
      expect(err).to.be.instanceOf(PoolHeldError);
      expect((err as Error).message).to.equal("libuv's threadpool did not answer within 100 ms after this test: it left the pool's threads blocked");
      expect(Date.now() - start).to.be.within(100, 2000);
    } finally {
      await pool.release();
    }
    await probePool(1000); // released whole: the pool answers again
    expect(threadsWaitingForWriter()).to.equal(0);
  });
});
