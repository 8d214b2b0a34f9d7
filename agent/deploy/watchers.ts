/**
 * The agent's deployment watchers: one `deployment-<id>` actor (watcher-machine.ts) per running
 * deployment, made when the deployment is committed (or found running at start), fed each later
 * commit of its record, shown in the client's viewer, gone once the deployment ends. Each running
 * one also has a timer at its progress deadline (Nomad's `RequireProgressBy`): when it fires, the
 * agent checks the deployment (`onDeadline`) and fails it if it made too little progress.
 * @module
 */
import type { Subscription } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import { realClock, type Clock, type Client } from '../../index.ts';
import type { AgentState } from '../state/store.ts';
import type { Deployment } from '../state/types.ts';
import { progressCutoff } from './deployments.ts';
import { deploymentMachine, type DeploymentCounts } from './watcher-machine.ts';

function countsOf(d: Deployment): DeploymentCounts {
  const out: DeploymentCounts = { desiredTotal: 0, placedAllocs: 0, healthyAllocs: 0, unhealthyAllocs: 0 };
  for (const g of Object.values(d.taskGroups)) {
    out.desiredTotal += g.desiredTotal;
    out.placedAllocs += g.placedAllocs;
    out.healthyAllocs += g.healthyAllocs;
    out.unhealthyAllocs += g.unhealthyAllocs;
  }
  return out;
}

/** See the module doc. */
export class DeploymentWatchers {
  readonly #client: Client;
  readonly #actors = new Map<string, { actor: Actor<typeof deploymentMachine>; detach: () => void; deadline?: unknown }>();
  readonly #sub: Subscription;
  readonly #onDeadline: ((deploymentId: string) => void) | undefined;
  readonly #clock: Clock;

  /** `clock` times the progress deadlines (a spec's manual clock; the real one otherwise). */
  constructor(state: AgentState, client: Client, onDeadline?: (deploymentId: string) => void, clock: Clock = realClock) {
    this.#client = client;
    this.#onDeadline = onDeadline;
    this.#clock = clock;
    for (const d of state.deployments.values()) if (d.status === 'running' || d.status === 'paused') this.#update(d);
    this.#sub = state.events$.subscribe((e) => {
      if (e.topic === 'Deployment') this.#update(e.object as Deployment);
    });
  }

  /** Ids of the deployments watched now. */
  get watching(): string[] {
    return [...this.#actors.keys()];
  }

  #update(d: Deployment): void {
    let w = this.#actors.get(d.id);
    if (!w) {
      if (d.status !== 'running' && d.status !== 'paused') return;
      const actor = createActor(deploymentMachine, {
        id: `deployment-${d.id}`,
        input: { deploymentId: d.id, jobId: d.jobId, jobVersion: d.jobVersion, ...countsOf(d) },
      });
      const detach = this.#client.attachActor(actor);
      w = { actor, detach };
      this.#actors.set(d.id, w);
      actor.start();
    }
    w.actor.send({ type: 'deployment.updated', status: d.status, statusDescription: d.statusDescription, ...countsOf(d) });
    if (w.actor.getSnapshot().status !== 'active') return this.#drop(d.id);
    this.#clock.clearTimeout(w.deadline);
    const cutoff = d.status === 'running' && this.#onDeadline ? progressCutoff(d) : undefined;
    w.deadline = cutoff === undefined ? undefined : this.#clock.setTimeout(() => this.#onDeadline?.(d.id), Math.max(0, cutoff - this.#clock.now()));
  }

  #drop(id: string): void {
    const w = this.#actors.get(id);
    if (!w) return;
    this.#actors.delete(id);
    this.#clock.clearTimeout(w.deadline);
    w.detach();
    w.actor.stop();
  }

  /** Stops every watcher (the agent is stopping; running deployments are picked up on the next start). */
  stop(): void {
    this.#sub.unsubscribe();
    for (const id of [...this.#actors.keys()]) this.#drop(id);
  }
}
