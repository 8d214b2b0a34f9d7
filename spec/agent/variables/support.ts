/**
 * The variable specs' agent: `startAgent` in this process on a data dir of its own (so a spec
 * can stop it and start another on the same dir), serving Nomad's API on loopback; and a request
 * helper with the agent's token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type Agent } from '../../../agent/agent.ts';
import { resolveAgentConfig, type AgentConfigPatch } from '../../../agent/config/config.ts';
import { http, type HttpResult } from '../../support/agent.ts';

/** An agent on `dir`, with its log lines kept. */
export interface VarAgent {
  agent: Agent;
  dir: string;
  log: string[];
  /** A request to the agent's API, with the management token when ACLs are on. */
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult>;
}

/** A fresh data dir, for {@link startVarAgent}; the caller removes it. */
export const varDataDir = (): string => mkdtempSync(join(tmpdir(), 'berth-vars-'));

/** Starts an agent on `dir` (`patch`: agent config, e.g. ACLs on). */
export async function startVarAgent(dir: string, patch: AgentConfigPatch = {}): Promise<VarAgent> {
  const log: string[] = [];
  const agent = await startAgent(resolveAgentConfig([patch], { dataDir: dir, port: 0 }), { log: (l) => log.push(l) });
  return {
    agent,
    dir,
    log,
    req: (method, path, body, headers = {}) =>
      http(method, agent.url + path, body, { headers: { ...(agent.token ? { 'X-Nomad-Token': agent.token } : {}), ...headers } }),
  };
}

/** Closes `a` (if started) and removes its data dir. */
export async function stopVarAgent(a: VarAgent | undefined, dir: string | undefined): Promise<void> {
  await a?.agent.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Resolves once the agent's waiter set holds `n` readers (looked at after each macrotask, never a sleep). */
export async function waitersAt(agent: Agent, n: number): Promise<void> {
  for (let i = 0; agent.core.state.waiters.waiting !== n; i++) {
    if (i > 100_000) throw new Error(`waiters: ${agent.core.state.waiters.waiting}, expected ${n}`);
    await new Promise((r) => setImmediate(r));
  }
}
