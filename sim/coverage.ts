/**
 * Transition coverage of the alloc chart (and its update queue), the task and watcher charts.
 * `@xstate/graph` enumerates each chart's transitions (plus the eventless `always` ones, which its
 * directed graph leaves out);
 * xstate's `@xstate.microstep` inspection events say which ones a run took.
 * @module
 */
import { getStateNodes, toDirectedGraph } from '@xstate/graph';
import type { AnyStateMachine, InspectionEvent } from 'xstate';
import { allocMachine, updateQueueMachine } from '../machines/alloc/index.ts';
import { taskMachine } from '../machines/task/index.ts';
import { watcherMachine } from '../machines/watcher.machine.ts';

interface TransitionLike {
  source: { id: string; always?: unknown[]; transitions: Map<string, unknown[]> };
  eventType: string;
  target?: Array<{ id: string }>;
  guard?: unknown;
}

/** The charts coverage is kept for. */
export const COVERED_MACHINES: readonly AnyStateMachine[] = [allocMachine, updateQueueMachine, taskMachine, watcherMachine];

const guardName = (g: unknown): string => {
  if (!g) return '';
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name || 'inline';
  if (typeof g === 'object' && g && 'type' in g) return String((g as { type: unknown }).type);
  return '?';
};

/** A stable key for a transition: its source, event and place among that event's candidates. */
export function transitionKey(t: TransitionLike): string {
  const list = t.eventType === '' ? (t.source.always ?? []) : (t.source.transitions.get(t.eventType) ?? []);
  return `${t.source.id} ${t.eventType || 'always'}#${list.indexOf(t)}`;
}

/** How a transition reads in the table. */
export function transitionLabel(t: TransitionLike): string {
  const g = guardName(t.guard);
  const targets = t.target?.map((x) => x.id).join(',') ?? '(self)';
  return `${t.source.id} --${t.eventType || 'always'}${g ? ` [${g}]` : ''}--> ${targets}`;
}

/** Every transition of a chart. */
export function enumerateTransitions(machine: AnyStateMachine): Array<{ key: string; label: string }> {
  const out = new Map<string, string>();
  const walk = (node: ReturnType<typeof toDirectedGraph>) => {
    for (const e of node.edges) {
      const t = e.transition as unknown as TransitionLike;
      out.set(transitionKey(t), transitionLabel(t));
    }
    node.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  for (const sn of getStateNodes(machine.root)) {
    for (const t of (sn.always ?? []) as unknown as TransitionLike[]) out.set(transitionKey(t), transitionLabel(t));
  }
  return [...out].map(([key, label]) => ({ key, label }));
}

/** Counts the transitions runs take. */
export class Coverage {
  readonly counts = new Map<string, number>();
  readonly all: Array<{ key: string; label: string }>;

  constructor(machines: readonly AnyStateMachine[] = COVERED_MACHINES) {
    this.all = machines.flatMap(enumerateTransitions);
    for (const { key } of this.all) this.counts.set(key, 0);
  }

  /** An xstate inspection observer. */
  readonly observe = (ev: InspectionEvent): void => {
    if (ev.type !== '@xstate.microstep') return;
    for (const t of (ev as unknown as { _transitions: TransitionLike[] })._transitions) {
      const k = transitionKey(t);
      if (this.counts.has(k)) this.counts.set(k, this.counts.get(k)! + 1);
    }
  };

  /** Adds another run's counts. */
  merge(other: Coverage): void {
    for (const [k, n] of other.counts) this.counts.set(k, (this.counts.get(k) ?? 0) + n);
  }

  missing(): Array<{ key: string; label: string }> {
    return this.all.filter(({ key }) => !this.counts.get(key));
  }

  /** The table: transition, times taken. */
  table(): string {
    const w = Math.max(...this.all.map((x) => x.label.length));
    const rows = this.all.map(({ key, label }) => `${label.padEnd(w)}  ${String(this.counts.get(key) ?? 0).padStart(8)}`);
    const taken = this.all.length - this.missing().length;
    return `${rows.join('\n')}\n${taken}/${this.all.length} transitions taken (${((taken / this.all.length) * 100).toFixed(1)} %)\n`;
  }
}
