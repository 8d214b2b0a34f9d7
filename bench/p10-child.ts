/**
 * P10's server side, in its own process (so its heap and timers are only the server's): either a
 * real `-dev` agent with one running mock alloc, or a bare `node:http` server whose long-polls
 * are all released by one event. Driven by the parent over IPC:
 * `heap` (heap after full GCs, Timeout handles, parked queries), `waiting`, `change` (one alloc
 * changes / the event fires), `exit`.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAgent } from '../agent/agent.ts';
import { resolveAgentConfig } from '../agent/config/config.ts';
import { childPayload } from './lib/proc.ts';
import { gcHeap } from './lib/stats.ts';

interface Payload {
  mode: 'agent' | 'bare';
  /** Bare mode: bytes of the body each released poll gets (the agent's answer's size). */
  bodyBytes?: number;
}
type Msg = { cmd: 'heap' | 'waiting' | 'change' | 'exit' };

const { mode, bodyBytes = 2 } = childPayload<Payload>();
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const send = (m: unknown) => process.send!(m);

const JOB_HCL = `job "p10" {
  group "g" {
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
    }
  }
}
`;

async function agentMode(): Promise<{ url: string; waiting: () => number; change: () => void; close: () => Promise<void> }> {
  const agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
  const post = async (path: string, body: unknown) => {
    const r = await fetch(agent.url + path, { method: 'POST', body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const job = await post('/v1/jobs/parse', { JobHCL: JOB_HCL });
  await post('/v1/jobs', { Job: job });
  const { state } = agent.core;
  // Wait (on the agent's own index) until the alloc runs: from then on the allocs table is quiet.
  for (;;) {
    const a = [...state.allocs.values()][0];
    if (a?.alloc.clientStatus === 'running') break;
    await state.waiters.wait(['allocs'], state.waiters.indexOf(['allocs']), Date.now() + 10_000);
  }
  return {
    url: agent.url,
    waiting: () => state.waiters.waiting,
    change: () => {
      const s = [...state.allocs.values()][0]!;
      state.commit((txn) => txn.putAlloc({ ...s, modifyIndex: txn.index }));
    },
    close: () => agent.close(),
  };
}

async function bareMode(): Promise<{ url: string; waiting: () => number; change: () => void; close: () => Promise<void> }> {
  const body = JSON.stringify([{ ID: 'x'.repeat(Math.max(0, bodyBytes - 12)) }]);
  let index = 1;
  let parked: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const min = Number(q.get('index') ?? 0);
    const answer = (r: ServerResponse) => {
      r.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Nomad-Index': index });
      r.end(body);
    };
    if (min < index) return answer(res);
    parked.push(res);
    res.on('close', () => {
      const i = parked.indexOf(res);
      if (i >= 0) parked.splice(i, 1);
    });
  });
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    waiting: () => parked.length,
    change: () => {
      index++;
      const all = parked;
      parked = [];
      for (const r of all) {
        r.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Nomad-Index': index });
        r.end(body);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const side = mode === 'agent' ? await agentMode() : await bareMode();
process.on('message', (m: Msg) => {
  void (async () => {
    if (m.cmd === 'waiting') send({ waiting: side.waiting() });
    else if (m.cmd === 'heap') {
      const heap = await gcHeap();
      send({ heap, timers: timeouts(), waiting: side.waiting() });
    } else if (m.cmd === 'change') {
      side.change();
      send({ changed: true });
    } else if (m.cmd === 'exit') {
      await side.close();
      send({ closed: true });
      process.disconnect();
    }
  })();
});
send({ url: side.url });
