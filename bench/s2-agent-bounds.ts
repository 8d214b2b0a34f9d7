/**
 * S2, the agent's bounds against hostile input, each beside a baseline measured in the same run,
 * in one process with a real `-dev` agent on loopback:
 * - parse linearity: a job file of 4N groups against four files of N groups (ratio ~1 when linear;
 *   a label sort that rescanned the text made it ~1.5x per doubling);
 * - the event loop while `POST /v1/jobs/parse` takes a 1 MiB file: the longest stall of a 1 ms
 *   ticker per MiB of request and answer (the parse runs in a worker thread; what is left on the
 *   loop is reading the body and encoding the ~10x larger canonical job), against the whole parse
 *   (bound: 100 ms per MiB);
 * - `count = 1e9`, and `count = 10000` on a node where a handful fit: time and heap growth of the
 *   register against a `count = 1` register;
 * - variable amplification: a 1 MiB `variable` default used 1,000 times: time and heap growth
 *   to its 400 against a plain 1 MiB body.
 * - a 16 MiB request body (refused at 4 MiB): heap growth against a small body;
 * - exec of `yes` to a client that completes the WebSocket handshake and never reads: the RSS
 *   growth over 2 s against an exec of `sleep` (`spec/agent/exec-backpressure.spec.ts` pins the
 *   mechanism without a clock).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { startAgent, type Agent } from '../agent/agent.ts';
import { resolveAgentConfig } from '../agent/config/config.ts';
import { parseJobspec } from '../agent/jobspec/index.ts';
import { absoluteResult, ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now } from './lib/stats.ts';

function manyGroups(id: string, groups: number): string {
  const out = [`job "${id}" {`];
  for (let g = 0; g < groups; g++)
    out.push(`  group "g${g}" {`, `    task "t" {`, `      driver = "mock_driver"`, `      config { run_for = "1s" }`, `    }`, `  }`);
  out.push('}');
  return out.join('\n');
}

async function post(agent: Agent, path: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(agent.url + path, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
  return { status: r.status, text: await r.text() };
}

/** `fn`'s wall time, and the longest gap a 1 ms ticker saw while it ran. */
async function withStall<T>(fn: () => Promise<T>): Promise<{ ms: number; stallMs: number; value: T }> {
  let last = now();
  let stall = 0;
  const tick = setInterval(() => {
    const t = now();
    stall = Math.max(stall, t - last);
    last = t;
  }, 1);
  const t0 = now();
  try {
    const value = await fn();
    stall = Math.max(stall, now() - last);
    return { ms: now() - t0, stallMs: stall, value };
  } finally {
    clearInterval(tick);
  }
}

/** Heap growth (MiB) across `fn`, after a full GC each side when the run exposes gc(). */
async function heapGrowth<T>(fn: () => Promise<T>): Promise<{ mib: number; ms: number; value: T }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const t0 = now();
  const value = await fn();
  const ms = now() - t0;
  // Peak is what matters: sampled right after, before a GC frees what the request made.
  const after = process.memoryUsage().heapUsed;
  return { mib: Math.max(0, after - before) / 2 ** 20, ms, value };
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 's2-groups', 500, 1000);
  const rounds = size(opts, 's2-rounds', 3, 5);
  const results: BenchResult[] = [];

  // Parse linearity, in-process (the parser itself, no HTTP).
  await parseJobspec(manyGroups('warm', 50));
  const oneN: number[] = [];
  const fourN: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t = now();
    for (let i = 0; i < 4; i++) await parseJobspec(manyGroups(`a${i}`, n));
    oneN.push(now() - t);
    t = now();
    await parseJobspec(manyGroups('b', 4 * n));
    fourN.push(now() - t);
  }
  opts.log(`S2 parse: ${4 * n} groups ${median(fourN).toFixed(0)} ms, 4 x ${n} groups ${median(oneN).toFixed(0)} ms`);
  results.push(
    ratioResult({
      id: 'S2',
      name: `parse: ${4 * n} groups vs 4 files of ${n}, median`,
      unit: 'ms',
      value: median(fourN),
      floor: median(oneN),
      better: 'lower',
      limit: 1.5,
    }),
  );

  const cfg = resolveAgentConfig([{ client: { cpuTotalCompute: 4000, memoryTotalMB: 4096 } }], { dev: true, port: 0 });
  const agent = await startAgent(cfg, { log: () => {} });
  try {
    // The event loop during a 1 MiB parse over HTTP.
    let groups = 1000;
    while (manyGroups('big', groups).length < 2 ** 20) groups += 1000;
    const big = JSON.stringify({ JobHCL: manyGroups('big', groups) });
    const mib = big.length / 2 ** 20;
    await post(agent, '/v1/jobs/parse', big); // the parser's worker started
    const parse = await withStall(() => post(agent, '/v1/jobs/parse', big));
    if (parse.value.status !== 200) throw new Error(`S2: parse of ${groups} groups answered ${parse.value.status}: ${parse.value.text.slice(0, 200)}`);
    const outMiB = parse.value.text.length / 2 ** 20;
    opts.log(
      `S2 parse over HTTP: ${mib.toFixed(2)} MiB in ${parse.ms.toFixed(0)} ms (answer ${outMiB.toFixed(1)} MiB), longest event-loop stall ${parse.stallMs.toFixed(0)} ms`,
    );
    results.push(
      absoluteResult({
        id: 'S2',
        name: `event-loop stall per MiB in and out, POST /v1/jobs/parse of ${mib.toFixed(2)} MiB (${groups} groups), vs the whole parse`,
        unit: 'ms per MiB',
        value: parse.stallMs / (mib + outMiB),
        floor: parse.ms / (mib + outMiB),
        details: { requestMiB: mib, answerMiB: outMiB, stallMs: parse.stallMs, parseMs: parse.ms },
        better: 'lower',
        limit: 100,
      }),
    );

    // count: one alloc, then a billion (refused), then 10,000 on a node where few fit.
    const countJob = (id: string, count: number) =>
      JSON.stringify({
        Job: {
          ID: id,
          Type: 'service',
          TaskGroups: [
            { Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 500, MemoryMB: 512 } }] },
          ],
        },
      });
    const one = await heapGrowth(() => post(agent, '/v1/jobs', countJob('c1', 1)));
    const billion = await heapGrowth(() => post(agent, '/v1/jobs', countJob('c2', 1e9)));
    if (billion.value.status !== 400) throw new Error(`S2: count = 1e9 answered ${billion.value.status}`);
    const tenK = await heapGrowth(() => post(agent, '/v1/jobs', countJob('c3', 10_000)));
    if (tenK.value.status !== 200) throw new Error(`S2: count = 10000 answered ${tenK.value.status}: ${tenK.value.text.slice(0, 200)}`);
    opts.log(
      `S2 count: 1 -> ${one.ms.toFixed(0)} ms; 1e9 -> 400 in ${billion.ms.toFixed(0)} ms; 10000 -> ${tenK.ms.toFixed(0)} ms, +${tenK.mib.toFixed(1)} MiB heap`,
    );
    results.push(
      ratioResult({ id: 'S2', name: 'register count = 1e9 (refused) vs count = 1', unit: 'ms', value: billion.ms, floor: one.ms, better: 'lower', limit: 5 }),
      ratioResult({
        id: 'S2',
        name: 'register count = 10000 on a node where 7 fit vs count = 1',
        unit: 'ms',
        value: tenK.ms,
        floor: one.ms,
        better: 'lower',
        limit: 20,
        extraTarget: 'heap growth <= 64 MiB',
        extraMet: tenK.mib <= 64,
        details: { heapGrowthMiB: tenK.mib },
      }),
    );

    // Variable amplification: 1 MiB default used 1,000 times, against a plain 1 MiB body.
    const blob = 'x'.repeat(2 ** 20);
    const uses = Array.from({ length: 1000 }, (_, i) => `      env { V${i} = var.big }`).join('\n');
    const amplified = JSON.stringify({
      JobHCL: `variable "big" {\n  default = "${blob}"\n}\njob "amp" {\n  group "g" {\n    task "t" {\n      driver = "mock_driver"\n      config { run_for = "1s" }\n${uses}\n    }\n  }\n}\n`,
    });
    const plain = JSON.stringify({
      JobHCL: `job "plain" {\n  meta { big = "${blob}" }\n  group "g" {\n    task "t" {\n      driver = "mock_driver"\n    }\n  }\n}\n`,
    });
    const base = await heapGrowth(() => post(agent, '/v1/jobs/parse', plain));
    const amp = await heapGrowth(() => post(agent, '/v1/jobs/parse', amplified));
    if (amp.value.status !== 400) throw new Error(`S2: the amplifying job answered ${amp.value.status}`);
    opts.log(`S2 variables: plain 1 MiB ${base.ms.toFixed(0)} ms; 1 MiB x 1000 -> 400 in ${amp.ms.toFixed(0)} ms, +${amp.mib.toFixed(1)} MiB heap`);
    results.push(
      ratioResult({
        id: 'S2',
        name: 'a 1 MiB variable used 1,000 times (refused) vs a plain 1 MiB job file',
        unit: 'ms',
        value: amp.ms,
        floor: base.ms,
        better: 'lower',
        limit: 10,
        extraTarget: 'heap growth <= 64 MiB',
        extraMet: amp.mib <= 64,
        details: { heapGrowthMiB: amp.mib },
      }),
    );

    // A request body over the bound: refused as it arrives, against a small body.
    const small = await heapGrowth(() => post(agent, '/v1/jobs/parse', JSON.stringify({ JobHCL: 'job "s" {}' })));
    const huge = await heapGrowth(() => post(agent, '/v1/jobs/parse', JSON.stringify({ JobHCL: 'x'.repeat(16 * 2 ** 20) })));
    if (huge.value.status !== 413 && huge.value.status !== 400) throw new Error(`S2: a 16 MiB body answered ${huge.value.status}`);
    opts.log(`S2 bodies: 16 MiB -> ${huge.value.status} in ${huge.ms.toFixed(0)} ms, +${huge.mib.toFixed(1)} MiB heap (small: ${small.ms.toFixed(0)} ms)`);
    results.push(
      absoluteResult({
        id: 'S2',
        name: 'heap a 16 MiB request body costs (refused at 4 MiB) vs a small body',
        unit: 'MiB',
        value: huge.mib,
        floor: small.mib,
        better: 'lower',
        limit: 64,
        details: { status: huge.value.status, ms: huge.ms },
      }),
    );

    // Exec output to a client that stops reading: the agent's memory while `yes` writes for 2 s
    // (the count jobs go first: they fill the node).
    for (const id of ['c1', 'c3']) await fetch(`${agent.url}/v1/job/${id}?purge=true`, { method: 'DELETE' });
    const exec = await execFlood(agent, opts);
    if (exec) results.push(exec);
  } finally {
    await agent.close();
  }
  return results;
}

/**
 * `yes` exec'd into a raw_exec task by a client that completes the WebSocket handshake and then
 * never reads: the process's RSS growth over 2 s, against the same with `sleep` (no output).
 */
async function execFlood(agent: Agent, opts: BenchOptions): Promise<BenchResult | undefined> {
  const reg = await post(
    agent,
    '/v1/jobs',
    JSON.stringify({
      Job: {
        ID: 'flood',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Config: { command: '/bin/sh', args: ['-c', 'while :; do sleep 1; done'] },
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    }),
  );
  if (reg.status !== 200) throw new Error(`S2: the exec job answered ${reg.status}: ${reg.text}`);
  let allocId = '';
  for (let i = 0; i < 200 && !allocId; i++) {
    const allocs = (await (await fetch(`${agent.url}/v1/job/flood/allocations`)).json()) as Array<{ ID: string; ClientStatus: string }>;
    if (allocs[0]?.ClientStatus === 'running') allocId = allocs[0].ID;
    else await new Promise((r) => setTimeout(r, 50));
  }
  if (!allocId) throw new Error('S2: the exec job did not run');
  const u = new URL(agent.url);
  const flood = async (cmd: string[]): Promise<number> => {
    const sock = net.connect(Number(u.port), u.hostname);
    await once(sock, 'connect');
    const path = `/v1/client/allocation/${allocId}/exec?task=t&command=${encodeURIComponent(JSON.stringify(cmd))}`;
    sock.write(
      `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.from(randomBytes(16)).toString('base64')}\r\n\r\n`,
    );
    // The 101, then (for a command with output) its first MiB, so the flood is known to flow; then no more reading.
    const want = cmd[0] === '/usr/bin/yes' ? 2 ** 20 : 1;
    let got = 0;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`S2: exec ${cmd[0]}: ${got} bytes in 10 s`)), 10_000);
      const onData = (c: Buffer) => {
        got += c.length;
        if (got >= want) {
          clearTimeout(t);
          sock.off('data', onData);
          resolve();
        }
      };
      sock.on('data', onData);
    });
    sock.pause();
    const before = process.memoryUsage().rss;
    let peak = before;
    const t0 = now();
    while (now() - t0 < 2000) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    sock.destroy();
    return (peak - before) / 2 ** 20;
  };
  const quiet = await flood(['/bin/sleep', '5']);
  const loud = await flood(['/usr/bin/yes']);
  opts.log(`S2 exec flood: RSS +${loud.toFixed(1)} MiB over 2 s with yes to a client that does not read (sleep: +${quiet.toFixed(1)} MiB)`);
  return absoluteResult({
    id: 'S2',
    name: 'RSS growth while exec of yes writes to a client that does not read, 2 s, vs exec of sleep',
    unit: 'MiB',
    value: loud,
    floor: quiet,
    better: 'lower',
    limit: 64,
  });
}
