import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Allocation, Task } from '../../../model/types.ts';
import type { Client } from '../../../actors/client/types.ts';
import type { Driver } from '../../../actors/drivers/driver.ts';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';

/** True while `pid` is a live, non-zombie process. */
export function procAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Resolves once `file` holds a line of pids (the task writes `$$ $PPID` first thing). */
async function pidsFrom(file: string, ctl: { done: boolean }): Promise<number[] | undefined> {
  while (!ctl.done) {
    try {
      const text = readFileSync(file, 'utf8');
      if (text.endsWith('\n')) return text.trim().split(' ').map(Number);
    } catch {}
    await new Promise((r) => setImmediate(r));
  }
  return undefined;
}

/**
 * raw_exec whose start returns 150 ms after the process exists, and does not look at the abort
 * signal meanwhile: a slow driver is allowed to do that, and berth must still wait for the start
 * and kill what it started.
 */
function slowStartDriver(): Driver {
  const inner = createRawExecDriver();
  return {
    ...inner,
    name: 'slow_exec',
    async start(config, signal) {
      const h = await inner.start(config, signal);
      await new Promise((r) => setTimeout(r, 150));
      return h;
    },
  };
}

/**
 * `inner` with every driver call that returns a promise kept in `calls` until it settles: after a
 * destroy, waiting for them all is waiting for the last thing that could still write the alloc dir.
 */
function tracked(inner: Driver, calls: Set<Promise<unknown>>): Driver {
  const out: Record<string, unknown> = { ...inner };
  for (const [k, v] of Object.entries(inner)) {
    if (typeof v !== 'function') continue;
    out[k] = (...args: unknown[]) => {
      const r: unknown = (v as (...a: unknown[]) => unknown).apply(inner, args);
      if (r instanceof Promise) {
        calls.add(r);
        const drop = () => void calls.delete(r);
        r.then(drop, drop);
      }
      return r;
    };
  }
  return out as unknown as Driver;
}

const writesPids = (file: string, driver = 'raw_exec'): Task => ({
  name: 'web',
  driver,
  config: { command: '/bin/sh', args: ['-c', `echo "$$ $PPID" > ${file}.tmp; mv ${file}.tmp ${file}; while :; do sleep 0.05; done`] },
  killTimeoutMs: 2000,
});

/**
 * Records every broadcast that claims the task is gone (`dead`, or a terminal client status)
 * while the task's or its executor's process is still alive: a violation of "terminal truth".
 */
function watchTerminalTruth(client: Client, allocId: string, pids: () => number[]) {
  const lies: string[] = [];
  const sub = client.updates$.subscribe((a: Allocation) => {
    if (a.id !== allocId) return;
    const terminal = a.taskStates?.web?.state === 'dead' || ['complete', 'failed', 'lost'].includes(a.clientStatus);
    if (!terminal) return;
    const live = pids().filter(procAlive);
    if (live.length) lies.push(`${a.clientStatus}/${a.taskStates?.web?.state} while ${live.join(',')} alive`);
  });
  return { lies, stop: () => sub.unsubscribe() };
}

describe('client: stop or destroy while a task is starting (raw_exec)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();

  it('a stop as soon as the process exists: dead/complete only once the process is gone, one "Building Task Directory"', async () => {
    const client = newClient({ drivers: { slow_exec: slowStartDriver() } });
    const file = join(client.dataDir, 'pids');
    const alloc = makeAlloc([writesPids(file, 'slow_exec')]);
    let pids: number[] = [];
    const truth = watchTerminalTruth(client, alloc.id, () => pids);
    const building: string[] = [];
    const sub = client.bus.of('task.event').subscribe((m) => {
      if (m.allocId === alloc.id && m.event.displayMessage === 'Building Task Directory') building.push(m.task);
    });
    const r = client.addAlloc(alloc);
    const ctl = { done: false };
    pids = (await pidsFrom(file, ctl))!;
    const complete = new Promise<void>((resolve) => {
      const s = client.updates$.subscribe((a) => {
        if (a.id === alloc.id && a.clientStatus === 'complete') {
          s.unsubscribe();
          resolve();
        }
      });
    });
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await complete;
    for (const pid of pids) expect(procAlive(pid), `pid ${pid} alive at complete`).to.equal(false);
    expect(truth.lies).to.deep.equal([]);
    expect(building).to.deep.equal(['web']);
    const types = r.alloc().taskStates!.web!.events.map((e) => e.type);
    expect(types.indexOf('Killing')).to.be.lessThan(types.indexOf('Killed'));
    truth.stop();
    sub.unsubscribe();
    await r.destroy();
  });

  for (const [driver, delayMs] of [
    ['raw_exec', 0],
    ['raw_exec', 5],
    ['raw_exec', 30],
    ['raw_exec', 80],
    ['raw_exec', 150],
    ['slow_exec', 100],
  ] as const) {
    it(`${driver}: destroy ${delayMs} ms after addAlloc resolves with nothing left: no process, no dir, no late logs`, async () => {
      const calls = new Set<Promise<unknown>>();
      const client = newClient({ drivers: { raw_exec: tracked(createRawExecDriver(), calls), slow_exec: tracked(slowStartDriver(), calls) } });
      const file = join(client.dataDir, 'pids');
      const alloc = makeAlloc([writesPids(file, driver)]);
      let pids: number[] = [];
      const truth = watchTerminalTruth(client, alloc.id, () => pids);
      const r = client.addAlloc(alloc);
      const ctl = { done: false };
      const found = pidsFrom(file, ctl).then((p) => (pids = p ?? []));
      await new Promise((res) => setTimeout(res, delayMs));
      await r.destroy();
      ctl.done = true;
      await found;
      // Whatever got started is gone by now, and stays gone.
      for (const pid of pids) expect(procAlive(pid), `pid ${pid} alive after destroy`).to.equal(false);
      expect(existsSync(r.allocDir.dir)).to.equal(false);
      // Whatever could still write the dir is a driver call in flight: wait for every one to settle.
      while (calls.size) await Promise.allSettled([...calls]);
      expect(existsSync(r.allocDir.dir), 'alloc dir re-created after destroy').to.equal(false);
      const stateDir = join(client.dataDir, 'client', 'tasks', alloc.id, 'web');
      expect(existsSync(stateDir) ? readdirSync(stateDir) : [], 'executor state left behind').to.deep.equal([]);
      expect(truth.lies).to.deep.equal([]);
      truth.stop();
    });
  }
});
