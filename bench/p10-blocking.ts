/**
 * P10, blocking queries: N (1,000) HTTP clients parked on `/v1/allocations?index=I` of a real
 * `-dev` agent (its own process); one alloc changes; time from the change to the last of them
 * having its whole answer (p50, p99 over rounds). The floor: N bare `node:http` long-polls, in
 * their own process, released by one event with an answer of the same size. Also, with all N
 * parked and after full GCs: the server's heap per waiting query (against an idle server holding
 * the same N keep-alive sockets) and its Timeout handles (against the server before any client).
 */
import { Agent as HttpAgent, request } from 'node:http';
import { size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { ServerChild } from './lib/server-child.ts';
import { now, quantile, sleep } from './lib/stats.ts';

interface HeapInfo {
  heap: number;
  timers: number;
  waiting: number;
}

/** One GET read to the end: status, X-Nomad-Index, body bytes, time the last byte arrived. */
function get(agent: HttpAgent, url: string): Promise<{ status: number; index: number; bytes: number; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode!, index: Number(res.headers['x-nomad-index'] ?? 0), bytes, at: now() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface SideResult {
  lastMs: number[];
  medianEachMs: number[];
  heapPerQuery: number;
  timersParked: number;
  timersBefore: number;
  bodyBytes: number;
}

async function side(mode: 'agent' | 'bare', n: number, rounds: number, bodyBytes: number, opts: BenchOptions): Promise<SideResult> {
  const child = await ServerChild.start<{ url: string }>('p10-child.ts', { mode, bodyBytes }, opts.log);
  const http = new HttpAgent({ keepAlive: true, maxSockets: n + 8, maxFreeSockets: n + 8 });
  const url = `${child.hello.url}/v1/allocations`;
  try {
    const before = await child.ask<HeapInfo>({ cmd: 'heap' });
    const lastMs: number[] = [];
    const medianEachMs: number[] = [];
    let idleHeap = 0;
    let parked: HeapInfo | undefined;
    let bytes = 0;
    for (let r = -1; r < rounds; r++) {
      const first = await get(http, url);
      bytes = first.bytes;
      // Heap with the N sockets open and idle (after the warm-up round opened them).
      if (r === 0) idleHeap = (await child.ask<HeapInfo>({ cmd: 'heap' })).heap;
      const polls = Array.from({ length: n }, () => get(http, `${url}?index=${first.index}&wait=5m`));
      for (let i = 0; ; i++) {
        const w = (await child.ask<{ waiting: number }>({ cmd: 'waiting' })).waiting;
        if (w === n) break;
        if (i > 3000) throw new Error(`${mode}: only ${w} of ${n} queries parked`);
        await sleep(10);
      }
      if (r === 0) parked = await child.ask<HeapInfo>({ cmd: 'heap' });
      const t0 = now();
      void child.ask({ cmd: 'change' });
      const answers = await Promise.all(polls);
      const bad = answers.find((a) => a.status !== 200 || a.index <= first.index);
      if (bad) throw new Error(`${mode}: a parked query answered ${bad.status} at index ${bad.index} (parked at ${first.index})`);
      if (r >= 0) {
        lastMs.push(Math.max(...answers.map((a) => a.at)) - t0);
        medianEachMs.push(
          quantile(
            answers.map((a) => a.at - t0),
            0.5,
          ),
        );
      }
    }
    return {
      lastMs,
      medianEachMs,
      heapPerQuery: (parked!.heap - idleHeap) / n,
      timersParked: parked!.timers,
      timersBefore: before.timers,
      bodyBytes: bytes,
    };
  } finally {
    http.destroy();
    await child.close();
  }
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p10-n', 1000, 1000);
  const rounds = size(opts, 'p10-rounds', 2, 20);
  opts.log(`P10 blocking queries: agent, ${n} parked queries, ${rounds} rounds`);
  const agent = await side('agent', n, rounds, 0, opts);
  opts.log(`P10 blocking queries: bare node:http floor (${agent.bodyBytes} B answers)`);
  const bare = await side('bare', n, rounds, agent.bodyBytes, opts);
  const p50 = (xs: number[]) => quantile(xs, 0.5);
  const p99 = (xs: number[]) => quantile(xs, 0.99);
  const details = {
    n,
    rounds,
    agentLastMs: agent.lastMs,
    bareLastMs: bare.lastMs,
    agentMedianAnswerMs: agent.medianEachMs,
    bareMedianAnswerMs: bare.medianEachMs,
    answerBytes: agent.bodyBytes,
  };
  const heapExtra = agent.heapPerQuery - bare.heapPerQuery;
  const timerExtra = agent.timersParked - agent.timersBefore;
  const result = (r: Omit<BenchResult, 'ratio'>): BenchResult => ({ ...r, ratio: r.floor > 0 ? r.value / r.floor : NaN });
  return [
    result({
      id: 'P10',
      name: `blocking queries, last of ${n} answered, p99`,
      unit: 'ms',
      value: p99(agent.lastMs),
      floor: p99(bare.lastMs),
      target: 'value < 50 ms (lower is better)',
      met: p99(agent.lastMs) < 50,
      details: { ...details, p50: { agent: p50(agent.lastMs), bare: p50(bare.lastMs) } },
    }),
    result({
      id: 'P10',
      name: `blocking queries, last of ${n} answered, p50`,
      unit: 'ms',
      value: p50(agent.lastMs),
      floor: p50(bare.lastMs),
      target: 'value < 50 ms (lower is better)',
      met: p50(agent.lastMs) < 50,
    }),
    result({
      id: 'P10',
      name: 'blocking queries, server heap per waiting query',
      unit: 'B',
      value: agent.heapPerQuery,
      floor: bare.heapPerQuery,
      target: "value - floor <= 2048 B (the agent's share beyond node:http's own request objects)",
      met: heapExtra <= 2048,
      details: { agentExtraBytes: heapExtra },
    }),
    result({
      id: 'P10',
      name: `blocking queries, Timeout handles with ${n} parked`,
      unit: 'timers',
      value: timerExtra,
      floor: bare.timersParked - bare.timersBefore,
      target: 'value <= 1 (one wait deadline for all, 0 per query)',
      met: timerExtra <= 1,
      details: { agentBefore: agent.timersBefore, agentParked: agent.timersParked, bareBefore: bare.timersBefore, bareParked: bare.timersParked },
    }),
  ];
}
