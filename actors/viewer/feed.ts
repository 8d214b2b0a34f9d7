/**
 * The viewer feed: one client's inspection events and bus messages as viewer records, folded into
 * a bounded model and handed to whoever listens (pages, a recorder). It hooks each root actor's
 * system with `system.inspect`, the observer set the `inspect` option fills (the Stately path),
 * so a client that never starts a viewer or a recording pays nothing, and one can start later:
 * actors that already exist are described from their snapshots when they are attached.
 * @module
 */
import type { Subscription } from 'rxjs';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { Bus } from '../../bus/bus.ts';
import type { BusMessage } from '../../bus/messages.ts';
import { displayName, parentOf } from './adapter.ts';
import { actorKind, allocMeta, busRecord, stateString, type ViewerRecord } from './records.ts';
import { applyRecord, DEFAULT_LIMITS, emptyModel, type ModelLimits, type ViewerModel } from './static/model.mjs';

/** Options for {@link ViewerFeed}. */
export interface ViewerFeedOptions {
  bus: Bus;
  /** Timestamps of inspection records (the client's clock). */
  now: () => number;
  /** Bounds of the model kept for pages that connect later. */
  limits?: ModelLimits;
}

/** Receives every record, in order. */
export type RecordSink = (r: ViewerRecord) => void;

interface RootEntry {
  sub?: { unsubscribe(): void };
  /** Last state string + status per actor key, to send changes only. */
  last: Map<string, string>;
  meta: boolean;
}

type Snap = { status?: string; value?: unknown; context?: unknown; children?: Record<string, AnyActorRef | undefined> };

/** Records of one client; see the module doc. */
export class ViewerFeed {
  /** The current picture, bounded by `limits`. */
  readonly model: ViewerModel;
  readonly #now: () => number;
  readonly #sinks = new Set<RecordSink>();
  readonly #keys = new WeakMap<AnyActorRef, string>();
  readonly #roots = new Map<string, RootEntry>();
  readonly #bus: Subscription;
  #closed = false;
  #count = 0;

  constructor(opts: ViewerFeedOptions) {
    this.#now = opts.now;
    this.model = emptyModel(opts.limits ?? DEFAULT_LIMITS);
    this.#bus = opts.bus.messages$.subscribe((m) => {
      const r = busRecord(m);
      if (r) this.#emit(r);
    });
  }

  /** Records emitted so far. */
  get count(): number {
    return this.#count;
  }

  /** Root actors currently hooked. */
  get roots(): number {
    return this.#roots.size;
  }

  /** Adds a sink; returns its removal. */
  subscribe(sink: RecordSink): () => void {
    this.#sinks.add(sink);
    return () => void this.#sinks.delete(sink);
  }

  /**
   * Hooks a root actor (the client's, or an alloc's before it starts): describes it and its
   * current children, then follows its system's inspection events.
   */
  attach(root: AnyActorRef): void {
    if (this.#closed || this.#keys.has(root)) return;
    const entry: RootEntry = { last: new Map(), meta: false };
    this.#roots.set(root.id, entry);
    this.#describe(root, entry);
    if (this.#roots.get(root.id) === entry) entry.sub = root.system.inspect(this.#observer);
  }

  /**
   * Feeds messages that went by before this feed existed (see seed.ts): recorded and folded into
   * the model like any other, so pages and recordings started late still see them.
   */
  seed(messages: Iterable<BusMessage>): void {
    if (this.#closed) return;
    for (const m of messages) {
      const r = busRecord(m);
      if (r) this.#emit(r);
    }
  }

  /** Unhooks everything. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#bus.unsubscribe();
    for (const e of this.#roots.values()) e.sub?.unsubscribe();
    this.#roots.clear();
    this.#sinks.clear();
  }

  #emit(r: ViewerRecord) {
    this.#count++;
    applyRecord(this.model, r);
    for (const s of this.#sinks) s(r);
  }

  /** An actor that existed before it was attached: its actor record, state, then its children. */
  #describe(ref: AnyActorRef, entry: RootEntry) {
    const t = this.#now();
    const key = this.#onActor(ref, t);
    const snap = ref.getSnapshot() as Snap | undefined;
    if (!snap) return;
    this.#onSnapshot(key, snap, undefined, t, entry);
    for (const child of Object.values(snap.children ?? {})) if (child && !this.#keys.has(child)) this.#describe(child, entry);
  }

  #onActor(ref: AnyActorRef, t: number): string {
    const parent = parentOf(ref);
    const parentKey = parent ? this.#keys.get(parent) : undefined;
    const key = parentKey ? `${parentKey}/${ref.id}` : ref.id;
    this.#keys.set(ref, key);
    // Known alive until a snapshot says otherwise (or its parent forgets it, see below).
    this.#roots.get(parentKey ? key.slice(0, key.indexOf('/')) : key)?.last.set(key, '');
    this.#emit({ k: 'actor', t, id: key, name: displayName(ref), ...(parentKey ? { parent: parentKey } : {}), kind: actorKind(ref.id, parentKey) });
    return key;
  }

  #onSnapshot(key: string, snap: Snap, eventType: string | undefined, t: number, entry: RootEntry | undefined) {
    const slash = key.indexOf('/');
    const rootKey = slash < 0 ? key : key.slice(0, slash);
    entry ??= this.#roots.get(rootKey);
    if (!entry) return;
    const status = (snap.status ?? 'active') as 'active' | 'done' | 'error' | 'stopped';
    const state = snap.value !== undefined ? stateString(snap.value) : '';
    const sig = `${status}|${state}`;
    if (entry.last.get(key) === sig) return;
    if (status === 'active') entry.last.set(key, sig);
    else entry.last.delete(key);
    if (!entry.meta && key === rootKey && key.startsWith('alloc-')) {
      entry.meta = true;
      const meta = allocMeta(t, snap.context);
      if (meta) this.#emit(meta);
    }
    this.#emit({ k: 'state', t, id: key, state, status, ...(eventType ? { ev: eventType } : {}) });
    if (snap.value !== undefined) this.#forgotten(key, snap, t, entry);
    if (status !== 'active' && key === rootKey) {
      // A finished root says nothing more: unhook it.
      entry.sub?.unsubscribe();
      this.#roots.delete(rootKey);
    }
  }

  /**
   * Children a machine left before they ever started (an invoke on a state an eventless
   * transition leaves at once) report nothing: they are stopped once the parent's snapshot no
   * longer lists them. Watchers live outside the children map and report for themselves.
   */
  #forgotten(key: string, snap: Snap, t: number, entry: RootEntry) {
    if (key.endsWith('/await-previous')) return;
    const prefix = `${key}/`;
    const children = snap.children ?? {};
    for (const child of [...entry.last.keys()]) {
      if (!child.startsWith(prefix) || child.indexOf('/', prefix.length) >= 0) continue;
      const id = child.slice(prefix.length);
      if (children[id]) continue;
      entry.last.delete(child);
      this.#emit({ k: 'state', t, id: child, state: '', status: 'stopped' });
    }
  }

  readonly #observer = (ev: InspectionEvent): void => {
    if (this.#closed) return;
    const ref = ev.actorRef as AnyActorRef;
    switch (ev.type) {
      case '@xstate.actor':
        if (!this.#keys.has(ref)) this.#onActor(ref, this.#now());
        return;
      case '@xstate.snapshot': {
        const key = this.#keys.get(ref);
        if (key) this.#onSnapshot(key, ev.snapshot as Snap, ev.event.type, this.#now(), undefined);
        return;
      }
      case '@xstate.event': {
        // Events change nothing the model keeps: they flow only while someone listens.
        if (!this.#sinks.size) return;
        const key = this.#keys.get(ref);
        // init and stop say nothing the actor and state records do not.
        if (!key || ev.event.type === 'xstate.init' || ev.event.type === 'xstate.stop' || ev.event.type.startsWith('xstate.snapshot.')) return;
        const src = ev.sourceRef ? this.#keys.get(ev.sourceRef as AnyActorRef) : undefined;
        this.#emit({ k: 'event', t: this.#now(), id: key, type: ev.event.type, ...(src ? { src } : {}) });
        return;
      }
      default:
    }
  };
}
