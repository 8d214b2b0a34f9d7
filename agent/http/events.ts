/**
 * `/v1/event/stream`: Nomad's event stream as NDJSON. Each line is `{Index, Events: [...]}` with
 * events of the topics asked for (`?topic=Allocation:*`, `?topic=Job:<id>`; all when none), and
 * `{}` every 10 s as a heartbeat. berth adds one topic, `Client`, carrying the client's bus
 * messages about waiting and migrating (`watcher.*`, `migration.*`), so a user can see who waits
 * for whom: Nomad has no event for it.
 * @module
 */
import type { BusMessage } from '../../index.ts';
import type { AgentCore } from '../core.ts';
import type { StateEvent } from '../state/store.ts';
import { apiAllocStub, apiEval } from './encode.ts';
import { writeWithBackpressure, STREAM_HEARTBEAT_MS } from './routes-client.ts';
import type { Router } from './router.ts';

/** Bus messages the `Client` topic carries. */
const CLIENT_TOPIC = /^(watcher|migration)\./;

/** Largest number of lines queued for one slow reader before it is cut off (never unbounded). */
export const EVENT_QUEUE_LIMIT = 10_000;

function payload(e: StateEvent, core: AgentCore): Record<string, unknown> {
  const o = e.object as never;
  switch (e.topic) {
    case 'Allocation':
      return { Allocation: apiAllocStub(o, core.state) };
    case 'Evaluation':
      return { Evaluation: apiEval(o) };
    case 'Job':
      return { Job: (o as { apiJob: unknown }).apiJob };
    default:
      return { [e.topic]: o };
  }
}

/** Adds `/v1/event/stream`. */
export function eventRoutes(r: Router, core: AgentCore): void {
  r.on('GET', '/v1/event/stream', async (req) => {
    const wanted = new Map<string, Set<string>>();
    for (const t of req.query.getAll('topic')) {
      const [topic, key = '*'] = t.split(':');
      if (!wanted.has(topic!)) wanted.set(topic!, new Set());
      wanted.get(topic!)!.add(key);
    }
    const matches = (topic: string, key: string, extra: string[] = []) => {
      if (wanted.size === 0) return true;
      const keys = wanted.get(topic) ?? wanted.get('*');
      return !!keys && (keys.has('*') || keys.has(key) || extra.some((k) => keys.has(k)));
    };
    const { res, signal } = req;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    const queue: string[] = [];
    let wake: (() => void) | undefined;
    const push = (line: string) => {
      if (queue.length >= EVENT_QUEUE_LIMIT) {
        res.destroy();
        return;
      }
      queue.push(line);
      wake?.();
    };
    const subState = core.state.events$.subscribe((e) => {
      const extra = e.topic === 'Allocation' ? [String((e.object as { alloc?: { jobId?: string } }).alloc?.jobId ?? '')] : [];
      if (!matches(e.topic, e.key, extra)) return;
      const ns = (e.object as { namespace?: string; alloc?: { namespace?: string } }).namespace ?? 'default';
      push(
        JSON.stringify({
          Index: e.index,
          Events: [{ Topic: e.topic, Type: e.type, Key: e.key, Namespace: ns, FilterKeys: extra, Index: e.index, Payload: payload(e, core) }],
        }) + '\n',
      );
    });
    const subBus = core.client.bus.messages$.subscribe((m: BusMessage) => {
      if (!CLIENT_TOPIC.test(m.type)) return;
      const key = (m as { allocId?: string }).allocId ?? '';
      const watched = (m as { watchedAllocId?: string }).watchedAllocId;
      if (!matches('Client', key, watched ? [watched] : [])) return;
      const index = core.state.waiters.index;
      push(
        JSON.stringify({
          Index: index,
          Events: [
            { Topic: 'Client', Type: m.type, Key: key, Namespace: 'default', FilterKeys: watched ? [watched] : [], Index: index, Payload: { Message: m } },
          ],
        }) + '\n',
      );
    });
    const heartbeat = setInterval(() => push('{}\n'), STREAM_HEARTBEAT_MS);
    signal.addEventListener('abort', () => wake?.(), { once: true });
    try {
      while (!signal.aborted && !res.destroyed) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (!(await writeWithBackpressure(res, queue.shift()!, signal))) break;
      }
    } finally {
      clearInterval(heartbeat);
      subState.unsubscribe();
      subBus.unsubscribe();
      if (!res.destroyed) res.end();
    }
  });
}
