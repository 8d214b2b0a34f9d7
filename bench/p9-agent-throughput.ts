/**
 * P9, the agent against the library it embeds, in one process each side:
 * - throughput: a `count = N` batch job of short mock tasks registered over HTTP to a real `-dev`
 *   agent (port 0), from the register request to every alloc `complete` in the agent's state;
 *   the floor adds the same N allocs straight to a client (`createClient`, default options as
 *   the agent's) and waits for every one `complete`. Target: ratio <= 1.3.
 * - latency: register of a one-alloc job -> its task `running` (median, p99 over R rounds),
 *   against `client.addAlloc` -> the task `running`, both seen on the client's updates (the task
 *   state, not the alloc machine's `running`, which comes before the task starts).
 */
import { randomUUID } from 'node:crypto';
import { filter, firstValueFrom } from 'rxjs';
import { startAgent, type Agent } from '../agent/agent.ts';
import { resolveAgentConfig } from '../agent/config/config.ts';
import { createClient } from '../actors/client/client.ts';
import type { Client } from '../actors/client/types.ts';
import type { Allocation } from '../model/types.ts';
import { mockAlloc } from './lib/allocs.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now, p99 } from './lib/stats.ts';

const RUN_FOR = '10ms';

const jobHcl = (id: string, type: 'batch' | 'service', count: number, runFor: string) => `job "${id}" {
  type = "${type}"
  group "g" {
    count = ${count}
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "${runFor}"
      }
      resources {
        cpu = 1
        memory = 10
      }
    }
  }
}
`;

async function post(agent: Agent, path: string, body: unknown): Promise<unknown> {
  const r = await fetch(agent.url + path, { method: 'POST', body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** A `-dev` agent on port 0 with room for any number of tiny allocs. */
function devAgent(): Promise<Agent> {
  const cfg = resolveAgentConfig([{ client: { cpuTotalCompute: 10_000_000, memoryTotalMB: 10_000_000 } }], { dev: true, port: 0 });
  return startAgent(cfg, { log: () => {} });
}

const taskRunning = (a: Allocation) => Object.values(a.taskStates ?? {}).some((t) => t.state === 'running');

/** `p`, or a rejection naming `what` after `ms` (a stuck run fails instead of hanging the suite). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`P9: ${what} not done after ${ms / 1000} s`)), ms)));
  return Promise.race([p, limit]).finally(() => clearTimeout(t));
}

/** Resolves once `n` distinct allocs of `client` reported `complete` (ids filtered by `mine`). */
function allComplete(client: Client, n: number, mine: (a: Allocation) => boolean): Promise<void> {
  const done = new Set<string>();
  return new Promise((resolve, reject) => {
    const sub = client.updates$.subscribe({
      next: (a) => {
        if (!mine(a)) return;
        if (a.clientStatus === 'complete') done.add(a.id);
        else if (a.clientStatus === 'failed' || a.clientStatus === 'lost') {
          sub.unsubscribe();
          reject(new Error(`alloc ${a.id} ${a.clientStatus}: ${JSON.stringify(a.taskStates).slice(0, 400)}`));
        }
        if (done.size === n) {
          sub.unsubscribe();
          resolve();
        }
      },
      error: reject,
    });
  });
}

async function agentThroughput(n: number): Promise<number> {
  const agent = await devAgent();
  try {
    const id = `p9-${randomUUID().slice(0, 8)}`;
    const job = await post(agent, '/v1/jobs/parse', { JobHCL: jobHcl(id, 'batch', n, RUN_FOR) });
    const done = allComplete(agent.client, n, (a) => a.jobId === id);
    const t0 = now();
    await post(agent, '/v1/jobs', { Job: job });
    await within(done, 300_000, `agent: ${n} allocs complete`);
    return now() - t0;
  } finally {
    await agent.close();
  }
}

async function clientThroughput(n: number): Promise<number> {
  const dir = tempDir('p9');
  const client = createClient({ dataDir: dir });
  try {
    const allocs = Array.from({ length: n }, () => batchAlloc());
    const ids = new Set(allocs.map((a) => a.id));
    const done = allComplete(client, n, (a) => ids.has(a.id));
    const t0 = now();
    for (const a of allocs) client.addAlloc(a);
    await within(done, 300_000, `client: ${n} allocs complete`);
    return now() - t0;
  } finally {
    await Promise.allSettled(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    await safeRemove(dir);
  }
}

/** A one-task batch alloc whose mock task exits after RUN_FOR. */
const batchAlloc = (): Allocation => {
  const a = mockAlloc({}, { run_for: RUN_FOR });
  return { ...a, job: { ...a.job!, type: 'batch' } };
};

async function agentLatency(rounds: number): Promise<number[]> {
  const agent = await devAgent();
  try {
    const out: number[] = [];
    for (let r = -1; r < rounds; r++) {
      const id = `p9-lat-${r + 1}`;
      const job = await post(agent, '/v1/jobs/parse', { JobHCL: jobHcl(id, 'service', 1, '1h') });
      const running = firstValueFrom(agent.client.updates$.pipe(filter((a) => a.jobId === id && taskRunning(a))));
      const t0 = now();
      await post(agent, '/v1/jobs', { Job: job });
      await within(running, 60_000, 'agent: task running');
      if (r >= 0) out.push(now() - t0);
    }
    return out;
  } finally {
    await agent.close();
  }
}

async function clientLatency(rounds: number): Promise<number[]> {
  const dir = tempDir('p9-lat');
  const client = createClient({ dataDir: dir });
  try {
    const out: number[] = [];
    for (let r = -1; r < rounds; r++) {
      const alloc = mockAlloc();
      const running = firstValueFrom(client.updates$.pipe(filter((a) => a.id === alloc.id && taskRunning(a))));
      const t0 = now();
      client.addAlloc(alloc);
      await within(running, 60_000, 'client: task running');
      if (r >= 0) out.push(now() - t0);
    }
    return out;
  } finally {
    await Promise.allSettled(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    await safeRemove(dir);
  }
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p9-n', 50, 1000);
  const rounds = size(opts, 'p9-lat-rounds', 10, 50);
  // Warm-up (JIT, first agent and client), discarded.
  await clientThroughput(10);
  await agentThroughput(10);
  opts.log(`P9 agent throughput: client floor, ${n} allocs`);
  const floorMs = await clientThroughput(n);
  opts.log(`P9 agent throughput: agent, count = ${n}`);
  const agentMs = await agentThroughput(n);
  opts.log(`P9 first task running: ${rounds} rounds each`);
  const clientLat = await clientLatency(rounds);
  const agentLat = await agentLatency(rounds);
  return [
    ratioResult({
      id: 'P9',
      name: `agent throughput, count = ${n} batch job over HTTP vs addAlloc`,
      unit: 'ms',
      value: agentMs,
      floor: floorMs,
      better: 'lower',
      limit: 1.3,
      details: { n, runFor: RUN_FOR, agentAllocsPerS: (n / agentMs) * 1000, clientAllocsPerS: (n / floorMs) * 1000 },
    }),
    ratioResult({
      id: 'P9',
      name: 'register -> first task running, median',
      unit: 'ms',
      value: median(agentLat),
      floor: median(clientLat),
      better: 'lower',
      limit: 1.3,
      details: { rounds, agentMs: agentLat, clientMs: clientLat },
    }),
    ratioResult({
      id: 'P9',
      name: 'register -> first task running, p99',
      unit: 'ms',
      value: p99(agentLat),
      floor: p99(clientLat),
      better: 'lower',
      limit: 1.3,
    }),
  ];
}
