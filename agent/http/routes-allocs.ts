/**
 * `/v1/allocations`, `/v1/allocation/:id[/stop]`, `/v1/evaluations`, `/v1/evaluation/:id`,
 * `/v1/deployment/:id`, `/v1/nodes`, `/v1/node/:id[/allocations]`.
 * @module
 */
import type { AgentCore } from '../core.ts';
import { AllocationNotFoundError, DeploymentNotFoundError, NodeNotFoundError } from '../errors.ts';
import { blocking } from './blocking.ts';
import { apiAlloc, apiAllocStub, apiDeployment, apiEval, apiNode, apiNodeStub } from './encode.ts';
import type { Req, Router } from './router.ts';
import type { AgentState } from '../state/store.ts';
import type { Evaluation } from '../state/types.ts';

/**
 * The evaluations linked to `e` by `NextEval`, `PreviousEval` and `BlockedEval`, either way and
 * through each other (Nomad's related evals), oldest first; `e` itself is not among them.
 */
export function relatedEvals(state: AgentState, e: Evaluation): Evaluation[] {
  const links = new Map<string, Set<string>>();
  const link = (a: string, b: string | undefined) => {
    if (!b) return;
    (links.get(a) ?? links.set(a, new Set()).get(a)!).add(b);
    (links.get(b) ?? links.set(b, new Set()).get(b)!).add(a);
  };
  for (const x of state.evals.values()) if (x.jobId === e.jobId) for (const to of [x.nextEval, x.previousEval, x.blockedEval]) link(x.id, to);
  const seen = new Set([e.id]);
  const todo = [e.id];
  while (todo.length) for (const n of links.get(todo.pop()!) ?? []) if (!seen.has(n) && seen.add(n)) todo.push(n);
  seen.delete(e.id);
  return [...seen]
    .map((id) => state.evals.get(id))
    .filter((x): x is Evaluation => !!x)
    .sort((a, b) => a.createIndex - b.createIndex);
}

/** Adds the allocation, evaluation, deployment and node routes. */
export function allocRoutes(r: Router, core: AgentCore): void {
  const { state } = core;
  // A list route's rows: those whose id starts with `?prefix=`, by creation (Nomad lists evals newest first).
  const byPrefix = <T extends { createIndex: number }>(m: Map<string, T>, req: Req, newestFirst = false) =>
    [...m.entries()]
      .filter(([id]) => id.startsWith(req.query.get('prefix') ?? ''))
      .map(([, v]) => v)
      .sort((a, b) => (newestFirst ? b.createIndex - a.createIndex : a.createIndex - b.createIndex));

  r.on(
    'GET',
    '/v1/allocations',
    blocking(state, ['allocs'], (req) => byPrefix(state.allocs, req).map((s) => apiAllocStub(s, state))),
  );
  r.on(
    'GET',
    '/v1/allocation/:id',
    blocking(state, ['allocs', 'jobs'], (req) => {
      const s = state.allocs.get(req.params.id!);
      if (!s) throw new AllocationNotFoundError(req.params.id!);
      return apiAlloc(s, state);
    }),
  );
  r.on('POST', '/v1/allocation/:id/stop', (req) => {
    const out = core.stopAlloc(req.params.id!);
    return { body: { EvalID: out.evalId, Index: out.index }, index: out.index };
  });
  r.on(
    'GET',
    '/v1/evaluations',
    blocking(state, ['evals', 'allocs'], (req) => byPrefix(state.evals, req, true).map((e) => apiEval(e, state))),
  );
  r.on(
    'GET',
    '/v1/evaluation/:id',
    blocking(state, ['evals', 'allocs'], (req) => {
      const e = core.evaluation(req.params.id!);
      return apiEval(e, state, req.query.get('related') === 'true' ? relatedEvals(state, e) : undefined);
    }),
  );
  r.on(
    'GET',
    '/v1/evaluation/:id/allocations',
    blocking(state, ['allocs'], (req) => [...state.allocs.values()].filter((s) => s.alloc.evalId === req.params.id).map((s) => apiAllocStub(s, state))),
  );
  r.on(
    'GET',
    '/v1/deployments',
    blocking(state, ['deployments'], () => [...state.deployments.values()].map(apiDeployment)),
  );
  r.on(
    'GET',
    '/v1/deployment/:id',
    blocking(state, ['deployments'], (req) => {
      const d = state.deployments.get(req.params.id!);
      if (!d) throw new DeploymentNotFoundError(req.params.id!);
      return apiDeployment(d);
    }),
  );
  r.on(
    'GET',
    '/v1/nodes',
    blocking(state, ['nodes'], (req) =>
      state.node ? [apiNodeStub(state.node, state.node.drivers, { resources: req.query.get('resources') === 'true', os: req.query.get('os') === 'true' })] : [],
    ),
  );
  const node = (id: string) => {
    const n = state.node;
    if (!n || !(n.id === id || (id.length >= 1 && n.id.startsWith(id) && id.length < 36))) throw new NodeNotFoundError(id);
    return n;
  };
  r.on(
    'GET',
    '/v1/node/:id',
    blocking(state, ['nodes'], (req) => {
      const n = node(req.params.id!);
      return apiNode(n, n.drivers);
    }),
  );
  r.on(
    'GET',
    '/v1/node/:id/allocations',
    blocking(state, ['allocs', 'jobs', 'nodes'], (req) => {
      const n = node(req.params.id!);
      return [...state.allocs.values()].filter((s) => s.alloc.nodeId === n.id).map((s) => apiAlloc(s, state));
    }),
  );
}
