/**
 * Nomad's blocking queries for every list and read: `?index=N` waits until a table the answer
 * reads has changed past N, or `?wait=` (default 5m, at most 10m, plus up to 1/16 of jitter as
 * Nomad adds) has passed; the answer carries `X-Nomad-Index`.
 * @module
 */
import { parseGoDuration } from '../../index.ts';
import { ApiError } from './errors.ts';
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

/** `?index=`: 0 when absent, the index otherwise (Nomad's 400 for one that is not). */
export function minIndexOf(q: URLSearchParams): number {
  const raw = q.get('index');
  const min = raw === null ? 0 : Number(raw);
  if (!Number.isFinite(min) || min < 0) throw new ApiError(400, `Invalid index: ${raw}`);
  return min;
}

/** How many distinct reads keep their last answer (for the waiters that wake together). */
export const ANSWER_CACHE = 256;

/**
 * A read that honours `?index=&wait=` on `tables`, answering `read(req)` with the tables' index.
 * Waiters woken by one change all ask the same question at the same index: the answer is built
 * and serialised once per (path, query, index) and shared. `share = false` for a read that
 * depends on more than its tables (the client's service catalog).
 */
export function blocking(state: AgentState, tables: readonly Table[], read: (req: Req) => unknown, share = true): Handler {
  const answers = new Map<string, { index: number; json: string }>();
  return async (req) => {
    const min = minIndexOf(req.query);
    if (min > 0) {
      const wait = waitMs(req.query);
      await state.waiters.wait(tables, min, Date.now() + wait + Math.random() * (wait / 16), req.onClose);
    }
    const index = state.waiters.indexOf(tables);
    const q = [...req.query].filter(([k]) => k !== 'index' && k !== 'wait' && k !== 'stale').sort();
    const key = `${req.path}?${new URLSearchParams(q)}`;
    const hit = answers.get(key);
    if (share && hit && hit.index === index) return { body: undefined, json: hit.json, index };
    const json = JSON.stringify(read(req) ?? null);
    answers.delete(key);
    answers.set(key, { index, json });
    if (answers.size > ANSWER_CACHE) answers.delete(answers.keys().next().value!);
    return { body: undefined, json, index };
  };
}
