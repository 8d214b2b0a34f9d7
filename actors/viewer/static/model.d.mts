/** Kinds of actor the tree distinguishes. */
export type ActorKind = 'client' | 'alloc' | 'task' | 'watchers' | 'watcher' | 'effect';

/** A record: one fact the viewer learnt, as stored in a recording (one JSON line each). */
export type ViewerRecord =
  | { k: 'actor'; t: number; id: string; name: string; parent?: string; kind: ActorKind }
  | { k: 'state'; t: number; id: string; state: string; status: 'active' | 'done' | 'error' | 'stopped'; ev?: string }
  | { k: 'event'; t: number; id: string; type: string; src?: string }
  | ({ k: 'alloc'; t: number; alloc: string } & AllocFacts)
  | ({ k: 'bus'; t: number; type: string; alloc?: string } & Record<string, unknown>);

/** What an alloc is, as its `alloc` record says and its view keeps. */
export interface AllocFacts {
  /** Nomad's alloc name ("web.app[0]"), when the alloc has one. */
  name?: string;
  job: string;
  group: string;
  tasks: string[];
  preempted: string[];
  previous?: string;
  priority?: number;
}

export interface ModelLimits {
  timeline: number;
  endedActors: number;
  destroyedAllocs: number;
}

export interface ActorView {
  id: string;
  name: string;
  parent?: string;
  kind: ActorKind;
  state: string;
  status: 'active' | 'done' | 'error' | 'stopped';
  born: number;
  since: number;
  ended?: number;
  /** The last event it received (while a page or a recorder listened) or that moved it. */
  lastEvent: string;
}

export interface WaitView {
  role: string;
  mode: string;
  since: number;
  released?: number;
  reason?: string;
}

export interface AllocView extends AllocFacts {
  id: string;
  state: string;
  added: number;
  timeline: ViewerRecord[];
  waits: Record<string, WaitView>;
  /** Keys of this alloc's actors (dropped with it). */
  actors: string[];
}

export interface ViewerModel {
  t0: number;
  t: number;
  seq: number;
  limits: ModelLimits;
  actors: Record<string, ActorView>;
  ended: string[];
  allocs: Record<string, AllocView>;
  allocOrder: string[];
  destroyed: string[];
}

export const DEFAULT_LIMITS: ModelLimits;
export function emptyModel(limits?: ModelLimits): ViewerModel;
export function allocOfKey(key: string): string | undefined;
export function applyRecord(m: ViewerModel, r: ViewerRecord): ViewerModel;
export function foldRecords(records: Iterable<ViewerRecord>, limits?: ModelLimits): ViewerModel;
export function recordText(r: ViewerRecord & Record<string, unknown>): string;
export function activeStates(state: string): Set<string>;
