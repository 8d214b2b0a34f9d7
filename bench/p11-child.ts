/**
 * P11's agent, in its own process so the parent can kill -9 it: a non-dev agent on `dataDir`
 * (port 0) with room for any number of small allocs. Its first message says when the agent
 * served and, on a restart, how long until every restored task's machine was `running` again
 * (reattached). IPC: `register` (a count = N raw_exec job, until every task runs), `destroy`
 * (every alloc destroyed, its time as `stopMs`, then exit). P13 runs its agent here too.
 */
import type { AnyActorRef } from 'xstate';
import { startAgent, type Agent } from '../agent/agent.ts';
import { resolveAgentConfig } from '../agent/config/config.ts';
import { childPayload } from './lib/proc.ts';
import { now, sleep } from './lib/stats.ts';

interface Payload {
  dataDir: string;
  /** Allocs to expect back on start (0 for the first start). */
  expect: number;
}
type Msg = { cmd: 'register'; hcl: string; n: number } | { cmd: 'destroy' };

const { dataDir, expect } = childPayload<Payload>();
const send = (m: unknown) => process.send!(m);

/** Whether every task of every runner is in its machine's `running` state (started or reattached). */
function allTasksRunning(agent: Agent, n: number): boolean {
  const runners = agent.client.runners();
  if (runners.length < n) return false;
  let tasks = 0;
  for (const r of runners) {
    const actor = (r as unknown as { actor: AnyActorRef }).actor;
    for (const [id, child] of Object.entries(actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)) {
      if (!id.startsWith('task-') || !child) continue;
      if (!child.getSnapshot().matches('running')) return false;
      tasks++;
    }
  }
  return tasks >= n;
}

/** Polls (every 5 ms) until every task runs; ms from `t0`. */
async function untilRunning(agent: Agent, n: number, t0: number, limitMs: number): Promise<number> {
  while (!allTasksRunning(agent, n)) {
    if (now() - t0 > limitMs) throw new Error(`not every task of ${n} allocs running after ${limitMs / 1000} s`);
    await sleep(5);
  }
  return now() - t0;
}

const cfg = resolveAgentConfig([{ client: { cpuTotalCompute: 10_000_000, memoryTotalMB: 10_000_000 } }], { dataDir, port: 0 });
const t0 = now();
const agent = await startAgent(cfg, { log: () => {} });
const servedMs = now() - t0;
const reattachMs = expect > 0 ? await untilRunning(agent, expect, t0, 60_000 + expect * 300) : 0;
process.on('message', (m: Msg) => {
  void (async () => {
    try {
      if (m.cmd === 'register') {
        const post = async (path: string, body: unknown) => {
          const r = await fetch(agent.url + path, { method: 'POST', body: JSON.stringify(body) });
          if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
          return r.json();
        };
        const job = await post('/v1/jobs/parse', { JobHCL: m.hcl });
        const t = now();
        await post('/v1/jobs', { Job: job });
        send({ freshMs: await untilRunning(agent, m.n, t, 60_000 + m.n * 300) });
      } else if (m.cmd === 'destroy') {
        const t = now();
        await Promise.allSettled(agent.client.runners().map((r) => r.destroy()));
        const stopMs = now() - t;
        await agent.close();
        // An explicit exit once the answer is out: `--cpu-prof` (BENCH_CPU_PROF) writes on exit.
        process.send!({ closed: true, stopMs }, () => process.exit(0));
      }
    } catch (e) {
      send({ error: String((e as Error).stack ?? e) });
    }
  })();
});
send({ url: agent.url, servedMs, reattachMs });
