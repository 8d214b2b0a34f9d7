/**
 * The one place the viewer touches xstate beyond its documented surface: an actor ref's parent
 * (`_parent`, declared on `ActorRef` but underscored) and a state node's transition tables. Keep
 * every such access here so an xstate upgrade has one file to check.
 * @module
 */
import type { AnyActorRef, AnyStateMachine } from 'xstate';

// An actor ref's parent (`_parent`): one definition, beside the detached children that need it.
export { parentOf } from '../watchers/detached-children.ts';

/** A state node as the chart walker needs it (a structural subset of xstate's StateNode). */
export interface DefinitionNode {
  key: string;
  path: string[];
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: { target: ReadonlyArray<{ path: string[] }> };
  states: Record<string, DefinitionNode>;
  transitions: Map<string, ReadonlyArray<DefinitionTransition>>;
  always?: ReadonlyArray<DefinitionTransition>;
  invoke: ReadonlyArray<{ id: string; src: unknown }>;
}

/** A transition as the chart walker needs it. */
export interface DefinitionTransition {
  target?: ReadonlyArray<{ path: string[] }>;
  guard?: unknown;
  eventType: string;
}

/** The root state node of a machine. */
export function rootNode(machine: AnyStateMachine): DefinitionNode {
  return machine.root as unknown as DefinitionNode;
}

/** A readable name for an actor: its id, or for an unnamed invoke ("0.task.starting") its logic's name. */
export function displayName(ref: AnyActorRef): string {
  const src = (ref as { src?: unknown }).src;
  return /^\d+\./.test(ref.id) && typeof src === 'string' ? src : ref.id;
}
