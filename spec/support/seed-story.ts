/** The seed #10200 story as `berth job run hi` prints it, checked the same way for every driver. */
import { expect } from 'chai';

/**
 * From `job run hi`'s output: two allocs preempted by hi, one watcher per evicted alloc watching
 * its own id, and hi running only after both victims were let go. Returns hi's short id.
 */
export function expectSeedStory(stdout: string): { hiId: string; evicted: string[] } {
  const hiId = /Allocation "(\w+)" created/.exec(stdout)![1]!;
  const evicted = [...stdout.matchAll(/Allocation "(\w+)" preempted by allocation "(\w+)"/g)];
  expect(evicted, stdout).to.have.length(2);
  for (const [, , by] of evicted) expect(by).to.equal(hiId);
  // One watcher per evicted alloc, each watching its own id.
  const waits = [...stdout.matchAll(/Allocation "(\w+)" waiting for preempted allocation "(\w+)" to stop \(watcher (\w+)/g)];
  expect(waits.map((m) => m[2]).sort()).to.deep.equal(evicted.map((m) => m[1]).sort());
  for (const [, waiter, watched, watcher] of waits) {
    expect(waiter).to.equal(hiId);
    expect(watcher).to.equal(watched);
  }
  // hi runs only after both victims stopped.
  const runningAt = stdout.indexOf(`Allocation "${hiId}" status "pending" -> "running"`);
  expect(runningAt).to.be.greaterThan(-1);
  for (const [, , watched] of waits) expect(stdout.indexOf(`done waiting for allocation "${watched}"`)).to.be.within(0, runningAt);
  return { hiId, evicted: evicted.map((m) => m[1]!) };
}
