/**
 * `GET /v1/client/allocation/:id/checks`: the latest result of each Nomad-provider check of an
 * alloc, keyed by check id, in Nomad's `CheckQueryResult` shape. Nomad's checks know `success`,
 * `failure` and `pending`: berth's `passing` is `success`, `warning` and `critical` are
 * `failure`, and a check that has not run yet is `pending`.
 * @module
 */
import { createHash } from 'node:crypto';
import type { CheckResult } from '../../index.ts';

/** A stable id for one check of one alloc (Nomad's is a hash of the same identity). */
export function checkId(r: CheckResult): string {
  return createHash('sha256')
    .update(JSON.stringify([r.allocId, r.group, r.task ?? '', r.service, r.check]))
    .digest('hex')
    .slice(0, 32);
}

/** The endpoint's body for `results`. */
export function apiChecks(results: CheckResult[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    results.map((r) => {
      const id = checkId(r);
      return [
        id,
        {
          ID: id,
          Mode: 'healthiness',
          Status: r.pending ? 'pending' : r.status === 'passing' ? 'success' : 'failure',
          ...(r.statusCode !== undefined ? { StatusCode: r.statusCode } : {}),
          Output: r.output,
          Timestamp: Math.floor(r.timestamp / 1000),
          Group: r.group,
          ...(r.task ? { Task: r.task } : {}),
          Service: r.service,
          Check: r.check,
        },
      ];
    }),
  );
}
