/**
 * The leak check's thread-pool guard (`probePool` in `spec/support/leak-check.ts`, run after each
 * test): one fs call on libuv's pool, bounded, so a test that strands the pool's threads fails by
 * name instead of every later fs call of the run waiting without a word.
 */
import { expect } from 'chai';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PoolHeldError, probePool } from '../support/leak-check.ts';
import { until } from '../support/until.ts';

/** Threads of this process blocked opening a FIFO for reading (waiting for a writer). */
function threadsWaitingForWriter(): number {
  let n = 0;
  for (const t of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${t}/wchan`, 'utf8') === 'wait_for_partner') n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

/**
 * Blocks every pool thread in a FIFO open for reading, as the stalled-lookup spec does; the
 * release opens each FIFO read-write, which never blocks and never fails, so no thread is stranded.
 */
async function holdPool() {
  const n = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const dir = mkdtempSync(join(tmpdir(), 'berth-probe-'));
  const fifos = Array.from({ length: n }, (_, i) => join(dir, `f${i}`));
  execFileSync('mkfifo', fifos);
  const opens: Promise<FileHandle>[] = fifos.map((f) => open(f, 'r'));
  const release = async () => {
    const writers = fifos.map((f) => openSync(f, constants.O_RDWR));
    try {
      for (const h of await Promise.all(opens)) await h.close();
    } finally {
      for (const fd of writers) closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  };
  await until(() => threadsWaitingForWriter() >= n, 10_000, `all ${n} threadpool threads held`).catch(async (e: Error) => {
    await release();
    throw e;
  });
  return { release };
}

describe('leak check: the thread-pool probe after each test', () => {
  it('answers at once when the pool is free, and fails with PoolHeldError within its bound when every pool thread is blocked', async () => {
    await probePool(1000);
    const pool = await holdPool();
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
