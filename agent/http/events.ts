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
import { completeApiJob } from '../jobspec/complete.ts';
import { apiAlloc, apiDeployment, apiEval, apiNode } from './encode.ts';
import { writeWithBackpressure, STREAM_HEARTBEAT_MS } from './routes-client.ts';
import type { Router } from './router.ts';

/** Bus messages the `Client` topic carries. */
const CLIENT_TOPIC = /^(watcher|migration|chroot)\./;

/** Largest number of lines queued for one slow reader before it is cut off (never unbounded). */
export const EVENT_QUEUE_LIMIT = 10_000;

/**
 * An event's payload as Nomad's state store writes it: the whole object, not its list stub. An
 * allocation goes without its `Job` (Nomad drops it to keep alloc events small); the node is the
 * full `Node` (Nomad's is sanitized of its secret, which berth's never carries).
 */
function payload(e: StateEvent, core: AgentCore): Record<string, unknown> {
  const o = e.object as never;
  switch (e.topic) {
    case 'Allocation':
      return { Allocation: { ...apiAlloc(o, core.state), Job: null } };
    case 'Evaluation':
      return { Evaluation: apiEval(o) };
    case 'Job':
      return { Job: completeApiJob((o as { apiJob: Record<string, unknown> }).apiJob) };
    case 'Deployment':
      return { Deployment: apiDeployment(o) };
    case 'Node':
      return { Node: apiNode(o, (o as { drivers: string[] }).drivers) };
    default:
      return { [e.topic]: o };
  }
}

/** One event, ready to filter and write. */
export interface HubEvent {
  topic: string;
  key: string;
  filterKeys: string[];
  index: number;
  json: string;
  /** UTF-8 size of `json`. */
  size: number;
}

/** How many recent events a stream opened with `?index=N` can replay (Nomad keeps a buffer too). */
export const EVENT_BUFFER = 1000;

/**
 * How many bytes of encoded events the replay buffer holds at most: a job's events carry the
 * whole job, so 1,000 of a 1 MB job would be a gigabyte. Older events go first.
 */
export const EVENT_BUFFER_BYTES = 8 * 1024 * 1024;

/**
 * Every event the agent emits, the last {@link EVENT_BUFFER} kept for replay while they add up to
 * at most `maxBytes` (an event larger than that alone goes to live streams only).
 */
export class EventHub {
  readonly recent: HubEvent[] = [];
  /** Encoded size of {@link EventHub.recent}. */
  bytes = 0;
  readonly #listeners = new Set<(e: HubEvent) => void>();

  constructor(
    core: AgentCore,
    readonly maxBytes: number = EVENT_BUFFER_BYTES,
  ) {
    core.state.events$.subscribe((e) => {
      const extra = e.topic === 'Allocation' ? [String((e.object as { alloc?: { jobId?: string } }).alloc?.jobId ?? '')] : [];
      const ns = (e.object as { namespace?: string }).namespace ?? 'default';
      this.#emit({
        topic: e.topic,
        key: e.key,
        filterKeys: extra,
        index: e.index,
        json: JSON.stringify({ Topic: e.topic, Type: e.type, Key: e.key, Namespace: ns, FilterKeys: extra, Index: e.index, Payload: payload(e, core) }),
      });
    });
    core.client.bus.messages$.subscribe((m: BusMessage) => {
      if (!CLIENT_TOPIC.test(m.type)) return;
      const key = (m as { allocId?: string }).allocId ?? '';
      const watched = (m as { watchedAllocId?: string }).watchedAllocId;
      const index = core.state.waiters.index;
      const filterKeys = watched ? [watched] : [];
      this.#emit({
        topic: 'Client',
        key,
        filterKeys,
        index,
        json: JSON.stringify({ Topic: 'Client', Type: m.type, Key: key, Namespace: 'default', FilterKeys: filterKeys, Index: index, Payload: { Message: m } }),
      });
    });
  }

  /** Calls `fn` with every event from now on; returns the function that stops it. */
  listen(fn: (e: HubEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #emit(partial: Omit<HubEvent, 'size'>): void {
    const e: HubEvent = { ...partial, size: Buffer.byteLength(partial.json) };
    this.recent.push(e);
    this.bytes += e.size;
    while (this.recent.length > EVENT_BUFFER || this.bytes > this.maxBytes) this.bytes -= this.recent.shift()!.size;
    for (const l of this.#listeners) l(e);
  }
}

/** Adds `/v1/event/stream`; an idle stream gets `{}` every `heartbeatMs` (Nomad: 10 s). */
export function eventRoutes(r: Router, core: AgentCore, heartbeatMs: number = STREAM_HEARTBEAT_MS, hub: EventHub = new EventHub(core)): EventHub {
  r.on('GET', '/v1/event/stream', async (req) => {
    const wanted = new Map<string, Set<string>>();
    for (const t of req.query.getAll('topic')) {
      const [topic, key = '*'] = t.split(':');
      if (!wanted.has(topic!)) wanted.set(topic!, new Set());
      wanted.get(topic!)!.add(key);
    }
    const from = Number(req.query.get('index') ?? 0) || 0;
    const matches = (e: HubEvent) => {
      if (wanted.size === 0) return true;
      const keys = wanted.get(e.topic) ?? wanted.get('*');
      return !!keys && (keys.has('*') || keys.has(e.key) || e.filterKeys.some((k) => keys.has(k)));
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
    const line = (e: HubEvent) => `{"Index":${e.index},"Events":[${e.json}]}\n`;
    if (from > 0) for (const e of hub.recent) if (e.index > from && matches(e)) push(line(e));
    const stop = hub.listen((e) => {
      if (matches(e)) push(line(e));
    });
    const heartbeat = setInterval(() => push('{}\n'), heartbeatMs);
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
      stop();
      if (!res.destroyed) res.end();
    }
  });
  return hub;
}
