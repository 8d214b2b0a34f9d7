/**
 * A machine definition as a plain graph (states nested in their parents, transitions as edges),
 * ready for the layout engine. Built from the machine itself, so the drawn chart is the chart
 * that runs.
 * @module
 */
import type { AnyStateMachine } from 'xstate';
import { rootNode, type DefinitionNode, type DefinitionTransition } from './adapter.ts';

/** One state of a chart; `id` is its dotted path from the root ("stopping.destroying.killing"). */
export interface ChartState {
  id: string;
  label: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history' | 'any';
  initial: boolean;
  /** Actor ids invoked while in this state. */
  invokes: string[];
  children: ChartState[];
}

/** One transition; `source` "*" is the machine's root (taken from any state). */
export interface ChartTransition {
  id: string;
  source: string;
  target: string;
  label: string;
}

/** A machine's chart before layout. */
export interface ChartGraph {
  id: string;
  states: ChartState[];
  transitions: ChartTransition[];
}

/** The pseudo-state standing for "from any state" (transitions declared on the root). */
export const ANY_STATE = '*';

/** A short label for an event type: xstate's generated names made readable. */
export function eventLabel(eventType: string): string {
  let m: RegExpMatchArray | null;
  if ((m = eventType.match(/^xstate\.done\.actor\.(.+)$/))) return `done: ${m[1]}`;
  if ((m = eventType.match(/^xstate\.error\.actor\.(.+)$/))) return `error: ${m[1]}`;
  if ((m = eventType.match(/^xstate\.after\.([^.]+)/))) return `after ${m[1]}`;
  return eventType;
}

function guardLabel(guard: unknown): string {
  if (!guard) return '';
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard && 'type' in guard && typeof (guard as { type: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'guard';
}

function transitionLabel(eventType: string, t: DefinitionTransition, invokeNames: Map<string, string>): string {
  const g = guardLabel(t.guard);
  const m = eventType.match(/^xstate\.(done|error)\.actor\.(.+)$/);
  const ev = eventType === '' ? '' : m && invokeNames.has(m[2]!) ? `${m[1]}: ${invokeNames.get(m[2]!)}` : eventLabel(eventType);
  return [ev, g ? `[${g}]` : ''].filter(Boolean).join(' ') || 'always';
}

/** Builds the chart of a machine definition. */
export function chartOf(machine: AnyStateMachine, id = machine.id): ChartGraph {
  const root = rootNode(machine);
  // Unnamed invokes get generated ids ("0.task.starting"): show their logic's name instead.
  const invokeNames = new Map<string, string>();
  const named = (node: DefinitionNode) => {
    for (const i of node.invoke) invokeNames.set(i.id, i.id.includes('.') && typeof i.src === 'string' ? i.src : i.id);
    Object.values(node.states).forEach(named);
  };
  named(root);
  const transitions: ChartTransition[] = [];
  const seen = new Set<string>();
  const addEdges = (source: string, eventType: string, list: ReadonlyArray<DefinitionTransition>) => {
    for (const t of list) {
      for (const target of t.target ?? []) {
        const edge = { source, target: target.path.join('.'), label: transitionLabel(eventType, t, invokeNames) };
        const key = `${edge.source}>${edge.target}>${edge.label}`;
        if (seen.has(key)) continue;
        seen.add(key);
        transitions.push({ id: `e${transitions.length}`, ...edge });
      }
    }
  };
  const visit = (node: DefinitionNode, initialKey: string | undefined): ChartState => {
    const path = node.path.join('.');
    for (const [eventType, list] of node.transitions) addEdges(path, eventType, list);
    addEdges(path, '', node.always ?? []);
    const firstInitial = node.initial?.target[0]?.path;
    const childInitial = firstInitial ? firstInitial[firstInitial.length - 1] : undefined;
    return {
      id: path,
      label: node.key,
      type: node.type,
      initial: node.key === initialKey,
      invokes: node.invoke.map((i) => invokeNames.get(i.id) ?? i.id),
      children: Object.values(node.states).map((c) => visit(c, childInitial)),
    };
  };
  const rootInitial = root.initial?.target[0]?.path;
  const states = Object.values(root.states).map((c) => visit(c, rootInitial?.[0]));
  // Transitions declared on the root fire from any state.
  for (const [eventType, list] of root.transitions) addEdges(ANY_STATE, eventType, list);
  addEdges(ANY_STATE, '', root.always ?? []);
  if (transitions.some((t) => t.source === ANY_STATE))
    states.unshift({ id: ANY_STATE, label: 'any state', type: 'any', initial: false, invokes: [], children: [] });
  return { id, states, transitions };
}
