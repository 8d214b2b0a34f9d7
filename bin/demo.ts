/**
 * `npm start`: the seed's preemption scenario, on real processes (raw_exec).
 *
 * 1. A low-priority service job of count 3 runs shell loops that log a tick every 200 ms.
 * 2. A high-priority alloc arrives that preempts two of them: it waits (one watcher actor per
 *    evicted alloc) until both have stopped, then starts.
 * 3. The remote path of Nomad #10200: the third low-priority alloc finishes and is destroyed, so
 *    when another preemptor evicts it there is no local runner; a remote watcher asks the servers
 *    for *that* id (never the empty previousAllocation) and the preemptor starts.
 * Prints a live timeline, each task's log lines and a summary; cleans up and exits 0.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v4 as uuid } from 'uuid';
import { createClient } from '../actors/client/client.ts';
import type { AllocRunner, Client, InspectionObserver } from '../actors/client/types.ts';
import type { BusMessage } from '../bus/messages.ts';
import type { Allocation, Task } from '../model/types.ts';
import { DemoServers } from './demo-servers.ts';

const t0 = Date.now();
const color = process.stdout.isTTY ? (c: number, s: string) => `\x1b[${c}m${s}\x1b[0m` : (_c: number, s: string) => s;
const stamp = () => color(90, `+${((Date.now() - t0) / 1000).toFixed(3)}s`.padStart(8));
const names = new Map<string, string>();
const who = (id: string) => names.get(id) ?? id.slice(0, 8);
const line = (s: string) => console.log(`${stamp()}  ${s}`);

function shellLoop(label: string): Task {
  const script = `trap 'echo "${label}: got SIGINT, exiting"; exit 0' INT; i=0; while true; do echo "${label} tick $i"; i=$((i+1)); sleep 0.2; done`;
  return { name: 'worker', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, killTimeoutMs: 2000 };
}

function alloc(job: string, index: number, priority: number, tasks: Task[], over: Partial<Allocation> = {}): Allocation {
  const a: Allocation = {
    id: uuid(),
    nodeId: 'demo-node',
    jobId: job,
    job: { id: job, name: job, type: 'service', priority, taskGroups: [{ name: 'app', count: 3, tasks }] },
    taskGroup: 'app',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 10,
    ...over,
  };
  names.set(a.id, `${job}[${index}]`);
  return a;
}

function printTimeline(client: Client): () => void {
  const subs = [
    client.bus.of('alloc.state').subscribe((m) => line(`${color(36, who(m.allocId).padEnd(8))} ${m.from ?? '∅'} → ${color(1, m.to)}`)),
    client.bus.of('task.event').subscribe((m: BusMessage<'task.event'>) => {
      if (m.event.type === 'Received') return;
      line(`${color(36, who(m.allocId).padEnd(8))}   ${m.task}: ${color(33, m.event.type)} — ${m.event.displayMessage}`);
    }),
    client.bus
      .of('watcher.waiting')
      .subscribe((m) => line(`${color(36, who(m.allocId).padEnd(8))}   waits for ${m.role} ${who(m.watchedAllocId)} (${m.mode} watcher)`)),
    client.bus
      .of('watcher.released')
      .subscribe((m) =>
        line(`${color(36, who(m.allocId).padEnd(8))}   released by ${who(m.watchedAllocId)}: ${m.reason}${m.clientStatus ? ` (${m.clientStatus})` : ''}`),
      ),
    client.bus
      .of('watcher.retry')
      .subscribe((m) => line(`${color(36, who(m.allocId).padEnd(8))}   retry ${who(m.watchedAllocId)} in ${m.delayMs} ms: ${m.error}`)),
  ];
  return () => subs.forEach((s) => s.unsubscribe());
}

/** Resolves once the runner's client status is terminal (its tasks are all dead). */
function settled(client: Client, r: AllocRunner): Promise<void> {
  const done = (a: Allocation) => a.clientStatus === 'complete' || a.clientStatus === 'failed';
  if (done(r.alloc())) return Promise.resolve();
  return new Promise((resolve) => {
    const sub = client.bus.of('alloc.updated').subscribe((m) => {
      if (m.allocId === r.allocId && done(m.alloc)) {
        sub.unsubscribe();
        resolve();
      }
    });
  });
}

async function firstLines(r: AllocRunner, n: number): Promise<string[]> {
  let text = '';
  for await (const chunk of r.logs('worker', 'stdout')) text += chunk.toString();
  return text.split('\n').filter(Boolean).slice(0, n);
}

/** Runs the demo. */
export async function runDemo(
  opts: {
    inspect?: InspectionObserver;
    /** Record the run for `berth view` (ClientOptions.record). */
    record?: string;
    /** Called with the client before anything runs (e.g. to open a viewer). */
    onClient?: (client: Client) => Promise<void>;
    /** Awaited once every step ran, before the allocations are stopped (time to look at them). */
    hold?: () => Promise<void>;
  } = {},
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-demo-'));
  const servers = new DemoServers();
  const client = createClient({
    dataDir,
    nodeId: 'demo-node',
    rpc: servers,
    retry: { baseMs: 200, staggerMs: 100 },
    ...(opts.inspect ? { inspect: opts.inspect } : {}),
    ...(opts.record ? { record: opts.record } : {}),
  });
  const stopTimeline = printTimeline(client);
  // The client reports its view to the servers, as a Nomad client does.
  const report = client.updates$.subscribe((a) => servers.put(a));
  try {
    await opts.onClient?.(client);
    console.log(color(1, '\n▶ 1. a low-priority service job, count 3, on raw_exec\n'));
    const lo = [0, 1, 2].map((i) => alloc('lo', i, 20, [shellLoop(`lo[${i}]`)]));
    const loRunners = lo.map((a) => client.addAlloc(a));
    await Promise.all(loRunners.map((r) => r.waitFor('running')));
    await new Promise((r) => setTimeout(r, 500));

    console.log(color(1, '\n▶ 2. a high-priority alloc preempts lo[0] and lo[1]: it waits for both\n'));
    const hi = alloc('hi', 0, 80, [shellLoop('hi[0]')], { preemptedAllocations: [lo[0]!.id, lo[1]!.id] });
    const hiRunner = client.addAlloc(hi);
    await hiRunner.waitFor('waiting-prev');
    await new Promise((r) => setTimeout(r, 300));
    line(`hi[0] isWaiting() = ${hiRunner.isWaiting()}; the servers now evict the victims`);
    let lastVictimDone = 0;
    const victimIds = new Set([lo[0]!.id, lo[1]!.id]);
    const terminal = client.bus.of('alloc.updated').subscribe((m) => {
      if (victimIds.has(m.allocId) && m.alloc.clientStatus === 'complete') lastVictimDone = performance.now();
    });
    for (const i of [0, 1]) client.updateAlloc({ ...lo[i]!, desiredStatus: 'evict', allocModifyIndex: 11 });
    await hiRunner.waitFor('running');
    const wokeAfter = performance.now() - lastVictimDone;
    terminal.unsubscribe();
    line(`hi[0] entered running ${wokeAfter.toFixed(2)} ms after its last victim's terminal broadcast`);
    await new Promise((r) => setTimeout(r, 500));

    console.log(color(1, '\n▶ 3. Nomad #10200: a preempted alloc with no local runner is watched remotely, by its own id\n'));
    client.updateAlloc({ ...lo[2]!, desiredStatus: 'stop', allocModifyIndex: 12 });
    await loRunners[2]!.waitFor('stopping');
    const lo2Logs = await firstLines(loRunners[2]!, 3);
    await client.destroyAlloc(lo[2]!.id); // gone from this client: only the servers know it now
    const hi2 = alloc('hi', 1, 80, [shellLoop('hi[1]')], { preemptedAllocations: [lo[2]!.id] });
    const hi2Runner = client.addAlloc(hi2);
    await hi2Runner.waitFor('running');
    line(`servers were asked for: ${servers.requests.map((id) => (id ? who(id) : '""')).join(', ')} (never "")`);
    await new Promise((r) => setTimeout(r, 400));

    console.log(color(1, "\n▶ logs (first lines of each task's stdout)\n"));
    const logs: Array<[string, string[]]> = [];
    for (const r of [...loRunners.slice(0, 2), hiRunner, hi2Runner]) logs.push([who(r.allocId), await firstLines(r, 3)]);
    logs.splice(2, 0, ['lo[2]', lo2Logs]);
    for (const [n, ls] of logs) for (const l of ls) console.log(`  ${color(36, n.padEnd(6))} │ ${l}`);

    await opts.hold?.();
    console.log(color(1, '\n▶ stopping everything\n'));
    for (const r of [hiRunner, hi2Runner]) client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: 20 });
    await Promise.all([hiRunner, hi2Runner].map((r) => settled(client, r)));

    console.log(color(1, '\n▶ summary\n'));
    console.log(`  ${'alloc'.padEnd(7)} ${'state'.padEnd(9)} ${'client'.padEnd(9)} ${'restarts'.padEnd(8)} last event`);
    for (const r of client.runners()) {
      const a = r.alloc();
      const ts = a.taskStates!.worker!;
      const last = ts.events[ts.events.length - 1]!;
      console.log(
        `  ${who(r.allocId).padEnd(7)} ${r.state().padEnd(9)} ${a.clientStatus.padEnd(9)} ${String(ts.restarts).padEnd(8)} ${last.type}: ${last.displayMessage}`,
      );
    }
    await Promise.all(client.runners().map((r) => r.destroy()));
    console.log(`\n${stamp()}  all allocations destroyed; ${client.runners().length} runners left`);
  } finally {
    report.unsubscribe();
    stopTimeline();
    await Promise.all(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
