/**
 * Nomad's deployment actions: `POST /v1/deployment/pause/:id` (`{"Pause": true|false}`: pause
 * or resume), `/v1/deployment/fail/:id` and `/v1/deployment/promote/:id`, each answering
 * Nomad's `DeploymentUpdateResponse`.
 * @module
 */
import type { AgentCore } from '../core.ts';
import { ApiError } from './errors.ts';
import type { Router } from './router.ts';

/** Nomad's reply to a deployment update. */
function reply(r: { evalId?: string; evalCreateIndex?: number; deploymentModifyIndex: number; index: number; revertedJobVersion?: number }) {
  return {
    body: {
      EvalID: r.evalId ?? '',
      EvalCreateIndex: r.evalCreateIndex ?? 0,
      DeploymentModifyIndex: r.deploymentModifyIndex,
      // Set when a failed deployment rolled the job back (auto_revert); null otherwise, as Nomad.
      RevertedJobVersion: r.revertedJobVersion ?? null,
      // Nomad's WriteMeta: the index only.
      Index: r.index,
    },
  };
}

/** Adds the deployment action routes. */
export function deploymentActionRoutes(r: Router, core: AgentCore): void {
  r.on('POST', '/v1/deployment/pause/:id', async (req) => {
    const body = (await req.json()) as { Pause?: unknown } | null;
    if (typeof body?.Pause !== 'boolean') throw new ApiError(400, 'Pause must be true or false');
    return reply(core.deploymentAction(req.params.id!, body.Pause ? 'pause' : 'resume'));
  });
  r.on('POST', '/v1/deployment/fail/:id', (req) => reply(core.deploymentAction(req.params.id!, 'fail')));
  r.on('POST', '/v1/deployment/promote/:id', async (req) => {
    // Nomad's DeploymentPromoteRequest: All, or the Groups to promote.
    const body = ((await req.json()) ?? {}) as { All?: unknown; Groups?: unknown };
    if (body.All !== undefined && typeof body.All !== 'boolean') throw new ApiError(400, 'All must be true or false');
    const groups = body.Groups ?? [];
    if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string')) throw new ApiError(400, 'Groups must be a list of task group names');
    return reply(core.deploymentAction(req.params.id!, 'promote', { all: body.All === true, groups: groups as string[] }));
  });
}
