/**
 * The server half's garbage collector, the effect around {@link serverGcPlan}: every
 * `job_gc_interval` on an injected clock, on `PUT /v1/system/gc` (forced), and right after the
 * rows of a purged job become terminal. One pass at a time.
 *
 * The server and the client agree as Nomad's do: a server row of an alloc goes only once the
 * client no longer holds the alloc. Before deleting, the pass asks the client to collect each
 * alloc it is about to remove (`client.gcAlloc`: Nomad's client destroys an alloc the servers
 * dropped); one the client keeps (still needed: a replacement waits on its data) keeps its row,
 * and so its eval and job, until a later pass. The client's own GC may remove an alloc's dir
 * earlier (disk, count); the server row then stays until its thresholds pass.
 * @module
 */
import { errorText, realClock, type Client, type Clock } from '../../index.ts';
import type { ServerGcConfig } from '../config/config.ts';
import type { AgentState, StateEvent } from '../state/store.ts';
import { allocTerminal, serverGcPlan, TERMINAL_EVAL, type GcPlan } from './policy.ts';

/** How many rows of each kind one pass removed. */
export interface GcCounts {
  jobs: number;
  evals: number;
  allocs: number;
  deployments: number;
}

/** Options of {@link ServerGc}. */
export interface ServerGcOptions {
  state: AgentState;
  client: Pick<Client, 'runner' | 'gcAlloc'>;
  config: ServerGcConfig;
  /** Time and the periodic timer (specs pass one they advance). */
  clock?: Clock;
  log: (line: string) => void;
}

/** The job an event is about, when it is terminal for that job. */
function terminalJobOf(e: StateEvent): string | undefined {
  const o = e.object as Record<string, unknown>;
  if (e.topic === 'Allocation') {
    const a = (o as { alloc: Parameters<typeof allocTerminal>[0] }).alloc;
    return allocTerminal(a) ? a.jobId : undefined;
  }
  if (e.topic === 'Evaluation') return TERMINAL_EVAL.has(o.status as string) ? (o.jobId as string) : undefined;
  if (e.topic === 'Job') return e.key;
  return undefined;
}

/** See the module comment. */
export class ServerGc {
  readonly #o: ServerGcOptions;
  readonly #clock: Clock;
  #timer: unknown;
  #pass: Promise<GcCounts> | undefined;
  #again: { force: boolean } | undefined;
  #stopped = false;
  readonly #unsubscribe: () => void;

  constructor(opts: ServerGcOptions) {
    this.#o = opts;
    this.#clock = opts.clock ?? realClock;
    const sub = opts.state.events$.subscribe((e) => {
      // A purged job's rows go as soon as they are over, not at the next interval.
      const jobId = terminalJobOf(e);
      if (jobId !== undefined && !opts.state.jobs.has(jobId)) void this.run().catch(() => undefined);
    });
    this.#unsubscribe = () => sub.unsubscribe();
  }

  /** Arms the periodic pass (none when `jobGcIntervalMs` is 0). */
  start(): void {
    if (this.#stopped || this.#o.config.jobGcIntervalMs <= 0) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      void this.run()
        .catch((e) => this.#o.log(`server gc: ${errorText(e)}`))
        .finally(() => this.start());
    }, this.#o.config.jobGcIntervalMs);
  }

  /**
   * One pass (`force`: Nomad's forced GC, every terminal object whatever its age). A call while
   * a pass runs waits for it and then runs once more (calls meanwhile share that one).
   */
  run(opts: { force?: boolean } = {}): Promise<GcCounts> {
    const force = !!opts.force;
    if (this.#pass) {
      const again = (this.#again ??= { force });
      again.force ||= force;
      return this.#pass.then(
        () => this.#next(),
        () => this.#next(),
      );
    }
    this.#pass = this.#once(force).finally(() => (this.#pass = undefined));
    return this.#pass;
  }

  #next(): Promise<GcCounts> {
    if (this.#pass) return this.#pass;
    const force = this.#again?.force ?? false;
    this.#again = undefined;
    return this.run({ force });
  }

  async #once(force: boolean): Promise<GcCounts> {
    // Never inside the commit whose event started this pass.
    await Promise.resolve();
    const none: GcCounts = { jobs: 0, evals: 0, allocs: 0, deployments: 0 };
    if (this.#stopped) return none;
    const { state, client, config, log } = this.#o;
    const input = (clientHolds: (id: string) => boolean) => ({ now: this.#clock.now(), thresholds: config, force, clientHolds });
    const first = serverGcPlan(
      state,
      input(() => false),
    );
    // The client lets go of each alloc first; one it keeps keeps its server row.
    const held = first.allocs.filter((id) => client.runner(id));
    const results = await Promise.allSettled(held.map((id) => client.gcAlloc(id)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') log(`server gc: the client keeps alloc ${held[i]!.slice(0, 8)}: ${errorText(r.reason)}`);
    });
    if (this.#stopped) return none;
    let plan: GcPlan = { jobs: [], evals: [], allocs: [], deployments: [] };
    state.commit((txn) => {
      plan = serverGcPlan(
        state,
        input((id) => client.runner(id) !== undefined),
      );
      for (const id of plan.allocs) txn.deleteAlloc(id);
      for (const id of plan.evals) txn.deleteEval(id);
      for (const id of plan.deployments) txn.deleteDeployment(id);
      for (const id of plan.jobs) txn.deleteJob(id);
    });
    const counts: GcCounts = { jobs: plan.jobs.length, evals: plan.evals.length, allocs: plan.allocs.length, deployments: plan.deployments.length };
    if (counts.jobs + counts.evals + counts.allocs + counts.deployments > 0) {
      state.compact();
      log(
        `server gc${force ? ' (forced)' : ''}: removed ${counts.jobs} jobs, ${counts.evals} evaluations, ${counts.allocs} allocations, ${counts.deployments} deployments`,
      );
    }
    return counts;
  }

  /** Stops the timer and waits for a pass in flight; later calls do nothing. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#pass?.catch(() => undefined);
  }
}
