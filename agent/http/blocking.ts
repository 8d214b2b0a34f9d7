/**
 * Nomad's blocking queries for every list and read: `?index=N` waits until a table the answer
 * reads has changed past N, or `?wait=` (default 5m, at most 10m, plus up to 1/16 of jitter as
 * Nomad adds) has passed; the answer carries `X-Nomad-Index`.
 * @module
 */
import { parseGoDuration } from '../../index.ts';
import { ApiError } from '../core.ts';
import type { AgentState } from '../state/store.ts';
import type { Table } from '../state/types.ts';
import type { Handler, Req } from './router.ts';

const DEFAULT_WAIT_MS = 5 * 60_000;
const MAX_WAIT_MS = 10 * 60_000;

/** `?wait=` in ms (a Go duration, or a number of seconds as Nomad also takes). */
export function waitMs(q: URLSearchParams): number {
  const w = q.get('wait');
  if (!w) return DEFAULT_WAIT_MS;
  let ms: number;
  try {
    ms = /^\d+$/.test(w) ? Number(w) * 1000 : parseGoDuration(w);
  } catch {
    throw new ApiError(400, `Invalid wait time: ${w}`);
  }
  return Math.min(ms, MAX_WAIT_MS);
}

/** A read that honours `?index=&wait=` on `tables`, answering `read(req)` with the tables' index. */
export function blocking(state: AgentState, tables: readonly Table[], read: (req: Req) => unknown): Handler {
  return async (req) => {
    const raw = req.query.get('index');
    const min = raw === null ? 0 : Number(raw);
    if (!Number.isFinite(min) || min < 0) throw new ApiError(400, `Invalid index: ${raw}`);
    if (min > 0) {
      const wait = waitMs(req.query);
      await state.waiters.wait(tables, min, Date.now() + wait + Math.random() * (wait / 16), req.signal);
    }
    const index = state.waiters.indexOf(tables);
    return { body: read(req), index };
  };
}
