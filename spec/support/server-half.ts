/**
 * The agent's server half without HTTP, on real parts: an {@link AgentState} on SQLite in a temp
 * dir, a real in-process client (its mock driver runs the tasks) on a data dir of its own, and a
 * registered node, wired as `startAgent` wires them. Torn down after each test.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { createClient } from '../../actors/client/client.ts';
import type { Client } from '../../actors/client/types.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { AgentCore } from '../../agent/core.ts';
import { AgentState } from '../../agent/state/store.ts';
import type { ApiJob, NodeRecord } from '../../agent/state/types.ts';

/** The options a half's core is made with (the host ports are none unless given). */
export type CoreOptions = NonNullable<ConstructorParameters<typeof AgentCore>[4]>;

/** One server half: its state (on `statePath`), client and core. */
export interface ServerHalf {
  dir: string;
  statePath: string;
  state: AgentState;
  client: Client;
  core: AgentCore;
  log: string[];
  /** Closes it as the agent does (the data dir stays until the test ends); again is a no-op. */
  close(): Promise<void>;
}

/** The node as `startAgent` registers it, small and fixed. */
export function nodeRecord(index: number): NodeRecord {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    secretId: '00000000-0000-4000-8000-000000000002',
    name: 'spec-node',
    datacenter: 'dc1',
    region: 'global',
    httpAddr: '127.0.0.1:4646',
    tlsEnabled: false,
    status: 'ready',
    cpuMHz: 4000,
    cores: 2,
    memoryMB: 4096,
    diskMB: 100 * 1024,
    reserved: { cpu: 0, memoryMB: 0, diskMB: 0 },
    drivers: ['mock_driver'],
    attributes: {},
    meta: {},
    createIndex: index,
    modifyIndex: index,
  };
}

/** Makes server halves for one test file and closes them (client, state, dirs) after each test. */
export function useServerHalves(): (opts?: CoreOptions) => ServerHalf {
  const made: ServerHalf[] = [];
  afterEach(async () => {
    for (const half of made.splice(0)) {
      await half.close();
      rmSync(half.dir, { recursive: true, force: true });
    }
  });
  return (opts = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-server-half-'));
    const statePath = join(dir, 'server', 'state.db');
    const state = new AgentState(statePath);
    const client = createClient({ dataDir: join(dir, 'client'), nodeId: nodeRecord(0).id });
    const config = resolveAgentConfig([], { dev: true, port: 0 });
    const log: string[] = [];
    state.commit((txn) => {
      if (!state.schedulerConfig) txn.putSchedulerConfig({ preemption: { ...config.preemption }, createIndex: txn.index, modifyIndex: txn.index });
      if (!state.node) txn.putNode(nodeRecord(txn.index));
    });
    const core = new AgentCore({ ...config, dataDir: dir }, state, client, (l) => log.push(l), { hostPorts: () => [], ...opts });
    const subs = [client.updates$.subscribe((a) => core.queueClientUpdate(a))];
    let closing: Promise<void> | undefined;
    const half: ServerHalf = { dir, statePath, state, client, core, log, close: () => (closing ??= closeHalf(half, subs)) };
    made.push(half);
    return half;
  };
}

/**
 * Closes `half` as the agent does: the core, then the client's reports are no longer taken (its
 * allocs are destroyed after: the state keeps what they last reported), the client, the state.
 */
async function closeHalf(half: ServerHalf, subs: Subscription[]): Promise<void> {
  await half.core.stop();
  for (const s of subs) s.unsubscribe();
  await Promise.allSettled(half.client.runners().map((r) => r.destroy()));
  await half.client.shutdown();
  half.state.close();
}

/**
 * A service job `id` of `count` mock tasks that run for `runFor` (an hour by default), with the
 * API job fields `job` over it, through the half's jobspec canonicalisation as a submitted file is.
 */
export async function mockServiceJob(
  half: ServerHalf,
  id: string,
  opts: { count?: number; runFor?: string; job?: Record<string, unknown> } = {},
): Promise<ApiJob> {
  const spec = {
    ID: id,
    Type: 'service',
    TaskGroups: [
      {
        Name: 'g',
        Count: opts.count ?? 1,
        Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: opts.runFor ?? '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }],
      },
    ],
    ...opts.job,
  };
  return half.core.jobspec.parse(JSON.stringify(spec), { filename: `job ${JSON.stringify(id)}` });
}
