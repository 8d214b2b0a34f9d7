/**
 * The allocation runner: owns one alloc machine actor and its handles (alloc dir, broadcaster,
 * update queue), turns the machine's snapshots into the client's view (broadcast, bus, state
 * store), and offers the `AllocRunner` operations (docs/embedding.md).
 * @module
 */
import { createActor, type Actor, type AnyActorLogic, type AnyActorRef, type SnapshotFrom } from 'xstate';
import { AllocBroadcaster, type AllocListener } from '../../bus/broadcaster.ts';
import type { AllocState } from '../../model/alloc-state.ts';
import { ALLOC_STATES, allocMachineInput, taskActorId, type allocMachine, type AllocContext } from '../../machines/alloc/index.ts';
import { reportedClientStatus } from '../../machines/policy/client-status.ts';
import { stageOf, type TaskStage } from '../../machines/policy/task-roles.ts';
import type { TaskContext } from '../../machines/task/index.ts';
import { AllocNotRunningError, BerthError, MultiError, TaskNotFoundError, TaskNotRunningError } from '../../model/errors.ts';
import type { AllocDeploymentStatus, Allocation } from '../../model/types.ts';
import { errorText } from '../../model/error-text.ts';
import { addUsage, emptyUsage, type AllocResourceUsage, type TaskResourceUsage } from '../../model/usage.ts';
import type { AllocDirHandle } from '../allocdir/handle.ts';
import { createAllocFS, type AllocFS } from '../allocfs/index.ts';
import { readTaskLogs } from '../drivers/logs/reader.ts';
import type { PrevAllocSource } from '../watchers/index.ts';
import type { ExecOptions, TaskHandle } from '../drivers/driver.ts';
import { ExecError } from '../drivers/exec-process.ts';
import type { AllocRunner, InspectionObserver, LogStream } from './api.ts';
import { allocResult, type AllocResult } from '../../model/alloc-result.ts';
import type { RunnerHook } from './hooks.ts';
import { runHooks } from './hooks.ts';
import { AllocStreams } from './alloc-streams.ts';

/** Stages whose tasks run for the alloc's whole life (what `waitForTasks('running')` waits for). */
const LASTING_STAGES = new Set<TaskStage>(['main', 'prestart-sidecar', 'poststart-sidecar']);
import type { Runtime, RunnerInternals } from './runtime.ts';

type AllocLogic = typeof allocMachine;
type AllocSnapshot = SnapshotFrom<AllocLogic>;

/** The top-level state of a snapshot. */
export function topState(s: AllocSnapshot): AllocState {
  const v = s.value as string | Record<string, unknown>;
  return (typeof v === 'string' ? v : Object.keys(v)[0]) as AllocState;
}

/** Resolves when a promise actor is done, rejects with its error. */
function settled(child: AnyActorRef): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = child.getSnapshot() as { status: string; error?: unknown };
    if (s.status === 'done') return resolve();
    if (s.status === 'error') return reject(s.error);
    const sub = child.subscribe({
      complete: () => {
        sub.unsubscribe();
        resolve();
      },
      error: (err) => {
        sub.unsubscribe();
        reject(err);
      },
    });
  });
}

/** Options for {@link AllocRunnerImpl}. */
export interface AllocRunnerOptions {
  rt: Runtime;
  logic: AllocLogic;
  alloc: Allocation;
  hooks: readonly RunnerHook[];
  previousRunner?: PrevAllocSource;
  preemptedRunners?: Record<string, PrevAllocSource | null>;
  inspect?: InspectionObserver;
  prevAllocWaitTimeoutMs?: number;
  /** Called once the runner reached `destroyed`. */
  onDestroyed(runner: AllocRunnerImpl): void;
  /** Restoring a saved alloc: its saved task handles (its task states come with `alloc`). */
  restoredHandles?: Record<string, TaskHandle>;
  /** Restoring an alloc whose destroy had begun: the chart finishes it. */
  destroyRequested?: boolean;
  /** Restoring: tasks whose live process had no usable handle and was stopped. */
  lostRuns?: string[];
}

/** One allocation's runner. Create through `client.addAlloc`. */
export class AllocRunnerImpl implements AllocRunner {
  readonly allocId: string;
  readonly allocDir: AllocDirHandle;
  readonly #rt: Runtime;
  readonly #actor: Actor<AllocLogic>;
  readonly #broadcaster = new AllocBroadcaster();
  readonly #destroyCtl = new AbortController();
  readonly #internals: RunnerInternals;
  readonly #onDestroyed: (r: AllocRunnerImpl) => void;
  #view: Allocation;
  #viewVersion = -1;
  #state: AllocState = 'pending';
  #lastSeq: Record<string, number> = {};
  #waiters = new Set<() => void>();
  #destroyed: Promise<void> | undefined;
  #signalSeq = 0;
  #stopped = false;
  #fs: AllocFS | undefined;
  /** Every log and fs stream of this alloc: ended when it is destroyed. */
  readonly #streams = new AllocStreams();
  /** Set once by the health tracker (Nomad's alloc health for deployments). */
  #deploymentStatus: AllocDeploymentStatus | undefined;
  /** The deployment the verdict was for: a later deployment's view does not carry it. */
  #deploymentStatusFor: string | undefined;

  constructor(opts: AllocRunnerOptions) {
    const { rt, alloc } = opts;
    this.#rt = rt;
    this.allocId = alloc.id;
    this.#onDestroyed = opts.onDestroyed;
    this.allocDir = rt.allocDirs(rt.clientAllocDir, alloc.id);
    const { input, group, pastWait } = allocMachineInput(
      alloc,
      opts.restoredHandles
        ? { restoredHandles: opts.restoredHandles, destroyRequested: opts.destroyRequested, ...(opts.lostRuns?.length ? { lostRuns: opts.lostRuns } : {}) }
        : opts.destroyRequested
          ? { destroyRequested: true }
          : undefined,
      {
        now: rt.clock.now(),
        previousRunner: !!opts.previousRunner,
        ...(opts.preemptedRunners ? { preemptedRunners: Object.fromEntries(Object.entries(opts.preemptedRunners).map(([id, r]) => [id, !!r])) } : {}),
        rpc: !!rt.rpc,
        prevAllocWaitTimeoutMs: opts.prevAllocWaitTimeoutMs,
        maxKillTimeoutMs: rt.maxKillTimeoutMs,
        hasUpdateHooks: opts.hooks.some((h) => !!h.update),
      },
    );
    const restoring = !!opts.restoredHandles;
    for (const t of group.tasks) this.allocDir.newTaskDir(t.name, { secretsMB: t.resources?.secretsMB });
    this.#internals = {
      allocId: alloc.id,
      allocDir: this.allocDir,
      broadcaster: this.#broadcaster,
      hooks: opts.hooks,
      group,
      serverAlloc: () => this.#actor.getSnapshot().context.alloc,
      clientAlloc: () => this.alloc(),
      destroySignal: this.#destroyCtl.signal,
      previousRunner: opts.previousRunner,
      preemptedRunners: opts.preemptedRunners,
      copiesOut: new Set(),
      setupNotes: new Map(),
      templates: new Map(),
      restored: pastWait,
      exec: (task, argv, o) => this.exec(task, argv, o),
      toTask: (taskName, event) => {
        if (!this.#stopped && this.#state !== 'destroyed') this.#actor.send({ type: 'toTask', taskName, event });
      },
      restartRunningFailed: (reason) => {
        if (!this.#stopped && this.#state === 'running') this.#actor.send({ type: 'restartRunning', time: this.#rt.clock.now(), reason, failure: true });
      },
      setDeploymentStatus: (status) => this.#setDeploymentStatus(status),
    };
    rt.registry.set(alloc.id, this.#internals);
    this.#actor = createActor(opts.logic, {
      id: `alloc-${alloc.id}`,
      input,
      ...(opts.inspect ? { inspect: opts.inspect } : {}),
      clock: rt.clock as never,
    });
    this.#view = this.#computeView(this.#actor.getSnapshot());
    // A restored alloc's past events were published in its first life: publish only new ones.
    if (restoring) this.#lastSeq = { ...this.#actor.getSnapshot().context.eventSeq };
    this.#actor.subscribe({
      next: (s) => this.#onSnapshot(s),
      error: (err) => {
        rt.bus.publish('client.error', { allocId: this.allocId, actorId: `alloc-${this.allocId}`, error: errorText(err) });
        this.#notify();
      },
    });
  }

  /** Starts the machine. */
  start(): this {
    this.#actor.start();
    return this;
  }

  #computeView(s: AllocSnapshot): Allocation {
    const view = this.#computeChartView(s);
    if (!this.#deploymentStatus || view.deploymentId !== this.#deploymentStatusFor) return view;
    return { ...view, deploymentStatus: { ...view.deploymentStatus, ...this.#deploymentStatus } };
  }

  #computeChartView(s: AllocSnapshot): Allocation {
    const ctx = s.context;
    // A terminal alloc keeps the status it came with (whatever later updates say): none of its
    // tasks ran in this life.
    if (ctx.arrivedStatus) {
      const { clientDescription: _d, ...alloc } = ctx.alloc;
      return { ...alloc, ...ctx.arrivedStatus, taskStates: ctx.taskStates };
    }
    // A status the chart decided (max_run_duration, a failed restore) is reported once every
    // task is dead; until then the task states speak (terminal truth).
    const { status, description } = reportedClientStatus(ctx.taskStates, ctx.statusOverride);
    return {
      ...ctx.alloc,
      clientStatus: status || 'pending',
      ...(description ? { clientDescription: description } : {}),
      taskStates: ctx.taskStates,
    };
  }

  /** The health tracker's verdict: part of every later view, reported at once. */
  #setDeploymentStatus(status: AllocDeploymentStatus): void {
    if (this.#stopped || this.#state === 'destroyed') return;
    this.#deploymentStatus = { ...status };
    this.#deploymentStatusFor = this.#actor.getSnapshot().context.alloc.deploymentId;
    this.#view = this.#computeView(this.#actor.getSnapshot());
    if (!this.#broadcaster.closed) this.#broadcaster.send(this.#view);
    this.#rt.bus.publish('alloc.updated', { allocId: this.allocId, alloc: this.#view });
    this.#rt.store.putAlloc(this.#view);
    this.#notify();
  }

  #onSnapshot(s: AllocSnapshot) {
    const ctx = s.context as AllocContext;
    if (ctx.version !== this.#viewVersion) {
      this.#viewVersion = ctx.version;
      this.#view = this.#computeView(s);
      this.#publishTaskChanges(ctx);
      if (!this.#broadcaster.closed) this.#broadcaster.send(this.#view);
      this.#rt.bus.publish('alloc.updated', { allocId: this.allocId, alloc: this.#view });
      if (topState(s) !== 'destroyed') this.#rt.store.putAlloc(this.#view);
    }
    const state = topState(s);
    if (state !== this.#state) {
      const from = this.#state;
      this.#state = state;
      this.#rt.bus.publish('alloc.state', { allocId: this.allocId, from, to: state });
      if (state === 'destroyed') this.#finish();
    }
    this.#notify();
  }

  #publishTaskChanges(ctx: AllocContext) {
    for (const [name, seq] of Object.entries(ctx.eventSeq)) {
      const last = this.#lastSeq[name] ?? 0;
      if (seq === last) continue;
      this.#lastSeq[name] = seq;
      const st = ctx.taskStates[name]!;
      this.#rt.bus.publish('task.state', { allocId: this.allocId, task: name, state: st });
      const fresh = st.events.slice(-Math.min(seq - last, st.events.length));
      for (const event of fresh) this.#rt.bus.publish('task.event', { allocId: this.allocId, task: name, event });
    }
  }

  #finish() {
    void this.#streams.endAll(); // destroyed by any path (destroy() also waits for it)
    this.#rt.store.deleteAlloc(this.allocId);
    this.#rt.registry.delete(this.allocId);
    this.#onDestroyed(this);
  }

  #notify() {
    for (const w of [...this.#waiters]) w();
  }

  /** The client's view: server fields plus clientStatus, clientDescription and taskStates. */
  alloc(): Allocation {
    // Effect actors may ask between a transition and our subscriber: read the live snapshot.
    const s = this.#actor.getSnapshot();
    if (s.context.version !== this.#viewVersion) return this.#computeView(s);
    return this.#view;
  }

  /** Read access to this alloc's directory, as `nomad alloc fs` has it. */
  get fs(): AllocFS {
    if (this.#fs) return this.#fs;
    const afs = createAllocFS({
      dir: this.allocDir.dir,
      tasks: () => this.#taskNames().flatMap((n) => this.allocDir.taskDir(n) ?? []),
    });
    return (this.#fs = { ...afs, stream: (p, o = {}) => this.#streams.track((signal) => afs.stream(p, { ...o, signal }), o.signal) });
  }

  /** Aborted when the alloc is destroyed: its streams end (the viewer's log tails watch it). */
  get streamsEnded(): AbortSignal {
    return this.#streams.signal;
  }

  /** A new listener on this runner's broadcaster. */
  listener(): AllocListener {
    return this.#broadcaster.listen();
  }

  state(): AllocState {
    return this.#state;
  }

  isWaiting(): boolean {
    return this.#actor.getSnapshot().matches({ 'waiting-prev': 'waiting' } as never);
  }

  isMigrating(): boolean {
    return this.#actor.getSnapshot().matches({ 'waiting-prev': 'migrating' } as never);
  }

  isDestroyed(): boolean {
    return this.#state === 'destroyed';
  }

  /** The machine actor (for hosts that want to inspect or subscribe directly). */
  get actor(): Actor<AnyActorLogic> {
    return this.#actor as unknown as Actor<AnyActorLogic>;
  }

  /** Hands the update to the chart, which queues it behind running update hooks and applies it. */
  update(alloc: Allocation): void {
    if (alloc.id !== this.allocId) throw new BerthError(`update for allocation ${alloc.id} sent to runner of ${this.allocId}`);
    if (this.#state === 'destroyed' || this.#stopped) return;
    this.#actor.send({ type: 'update', alloc, time: this.#rt.clock.now() });
  }

  /**
   * Destroys the alloc. Ordering: the request is durable in the state store before the chart
   * sends its first kill, so a host that dies mid-destroy leaves a record a restore finishes.
   */
  destroy(): Promise<void> {
    if (!this.#destroyed) {
      // Resolves once every stream of the alloc let go of its files, too.
      this.#destroyed = this.waitFor('destroyed').then(() => this.#streams.endAll());
      if (this.#state !== 'destroyed' && !this.#stopped) this.#rt.store.markDestroying(this.allocId);
      this.#destroyCtl.abort(new BerthError(`allocation ${this.allocId} destroyed`));
      this.#actor.send({ type: 'destroy', time: this.#rt.clock.now() });
    }
    return this.#destroyed;
  }

  waitFor(state: AllocState, signal?: AbortSignal): Promise<void> {
    const target = ALLOC_STATES.indexOf(state);
    if (target < 0) return Promise.reject(new BerthError(`unknown alloc state ${JSON.stringify(state)}`));
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (ALLOC_STATES.indexOf(this.#state) >= target) {
          done();
          resolve();
          return true;
        }
        if (this.#stopped || this.#actor.getSnapshot().status === 'error') {
          done();
          reject(new BerthError(`allocation ${this.allocId} stopped before reaching ${state}`));
          return true;
        }
        return false;
      };
      const onAbort = () => {
        done();
        reject(signal!.reason);
      };
      const done = () => {
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) return reject(signal.reason);
      if (check()) return;
      this.#waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  waitForTasks(state: 'running' | 'dead', signal?: AbortSignal): Promise<void> {
    // The tasks that run for the alloc's life; ephemeral lifecycle tasks and poststop ones come and go.
    const lasting = this.#internals.group.tasks.filter((t) => LASTING_STAGES.has(stageOf(t))).map((t) => t.name);
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        const states = this.alloc().taskStates ?? {};
        const reached =
          state === 'dead'
            ? this.#taskNames().every((n) => states[n]?.state === 'dead')
            : lasting.every((n) => states[n]?.state === 'running' || states[n]?.startedAt !== undefined);
        if (reached) return finish(resolve);
        if (this.#stopped || this.#state === 'destroyed' || this.#actor.getSnapshot().status === 'error' || (state === 'running' && allocResult(this.alloc())))
          return finish(() => reject(new BerthError(`allocation ${this.allocId} ended before its tasks were ${state}`)));
        return false;
      };
      const onAbort = () => finish(() => reject(signal!.reason));
      const finish = (settle: () => void) => {
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
        settle();
        return true;
      };
      if (signal?.aborted) return reject(signal.reason);
      if (check()) return;
      this.#waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #taskContext(name: string): TaskContext | undefined {
    const child = this.#actor.getSnapshot().children[taskActorId(this.allocId, name)] as { getSnapshot(): { context: TaskContext } } | undefined;
    return child?.getSnapshot().context;
  }

  #taskNames(): string[] {
    return this.#internals.group.tasks.map((t) => t.name);
  }

  /** The task actor's snapshot children (its in-flight signal requests among them). */
  #taskChild(name: string, childId: string): AnyActorRef | undefined {
    const task = this.#actor.getSnapshot().children[taskActorId(this.allocId, name)] as AnyActorRef | undefined;
    return (task?.getSnapshot() as { children?: Record<string, AnyActorRef> } | undefined)?.children?.[childId];
  }

  /** Asks the task chart to signal; its `signal.<n>` child's done or error is the answer. */
  async signal(task: string | undefined, sig: string): Promise<void> {
    const names = task === undefined ? this.#taskNames() : [task];
    if (task !== undefined && !this.#taskNames().includes(task)) throw new BerthError('Task not found');
    const errors: Error[] = [];
    for (const name of names) {
      const tc = this.#taskContext(name);
      const requestId = String(++this.#signalSeq);
      if (tc?.state.state === 'running') {
        this.#actor.send({ type: 'toTask', taskName: name, event: { type: 'signal', time: this.#rt.clock.now(), signal: sig, requestId } });
      }
      const child = this.#taskChild(name, `signal.${requestId}`);
      if (!child) {
        if (task !== undefined) throw new TaskNotRunningError();
        continue;
      }
      try {
        await settled(child);
      } catch (e) {
        if (task !== undefined) throw e;
        errors.push(new BerthError(`Failed to signal task: ${name}, err: ${errorText(e)}`));
      }
    }
    if (errors.length) throw new MultiError('signal', errors);
  }

  async restartTask(task: string, reason?: string): Promise<void> {
    if (!this.#taskNames().includes(task)) throw new TaskNotFoundError(task);
    if (this.#state !== 'running') throw new AllocNotRunningError();
    const tc = this.#taskContext(task);
    if (!tc || tc.state.state !== 'running') throw new TaskNotRunningError();
    const before = tc.state.restarts;
    this.#actor.send({ type: 'restartTask', taskName: task, time: this.#rt.clock.now(), ...(reason ? { reason } : {}) });
    await this.#until(() => {
      const s = this.#actor.getSnapshot().context.taskStates[task];
      return !s || s.state === 'dead' || (s.restarts > before && s.state === 'running');
    });
  }

  /** Re-runs every task, dead ones too; a task not running yet (a poststop task waiting its turn) is left alone. */
  async restartAll(reason?: string): Promise<void> {
    if (this.#state !== 'running') throw new AllocNotRunningError();
    this.#actor.send({ type: 'restartAll', time: this.#rt.clock.now(), ...(reason ? { reason } : {}) });
  }

  /**
   * Runs `argv` inside the running `task` through its driver (Nomad's `alloc exec`): output is
   * streamed to `onOutput` as it comes; the result keeps bounded copies. `signal` cancels it
   * (its process group is killed), `timeoutMs` bounds it (TimeoutError).
   */
  async exec(task: string, argv: string[], opts: ExecOptions = {}): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }> {
    if (!this.#taskNames().includes(task)) throw new TaskNotFoundError(task);
    const tc = this.#taskContext(task);
    if (!tc?.handle || tc.state.state !== 'running') throw new TaskNotRunningError();
    const driver = this.#rt.drivers[tc.handle.driver];
    if (!driver?.exec) throw new ExecError(`driver ${JSON.stringify(tc.handle.driver)} does not support exec`);
    const r = await driver.exec(tc.handle, argv, opts);
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  }

  /** Restarts the running tasks only (Nomad's RestartRunning). */
  async restartRunning(reason?: string): Promise<void> {
    if (this.#state !== 'running') throw new AllocNotRunningError();
    this.#actor.send({ type: 'restartRunning', time: this.#rt.clock.now(), ...(reason ? { reason } : {}) });
  }

  /**
   * A stop from the host, as the servers would send it: desired status `stop` at the next
   * `allocModifyIndex`, `noShutdownDelay` as Nomad's desired transition. Resolves once the chart
   * took it; {@link done} says when the alloc finished.
   */
  async stop(opts: { noShutdownDelay?: boolean } = {}): Promise<void> {
    if (this.#state === 'destroyed' || this.#stopped) return;
    const a = this.#actor.getSnapshot().context.alloc;
    this.update({
      ...a,
      desiredStatus: 'stop',
      allocModifyIndex: a.allocModifyIndex + 1,
      ...(opts.noShutdownDelay ? { desiredTransition: { ...a.desiredTransition, noShutdownDelay: true } } : {}),
    });
  }

  /**
   * Resolves once the alloc is client-terminal with every task dead, with its result (Nomad's
   * final client status and each task's exit). Rejects if the runner stops first (client shutdown).
   */
  done(): Promise<AllocResult> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const result = allocResult(this.alloc());
        if (result) {
          this.#waiters.delete(check);
          resolve(result);
          return true;
        }
        if (this.#stopped || this.#state === 'destroyed' || this.#actor.getSnapshot().status === 'error') {
          this.#waiters.delete(check);
          reject(new BerthError(`allocation ${this.allocId} stopped before it finished`));
          return true;
        }
        return false;
      };
      if (!check()) this.#waiters.add(check);
    });
  }

  async stats(): Promise<AllocResourceUsage> {
    const tasks: Record<string, TaskResourceUsage> = {};
    let sum = emptyUsage();
    for (const name of this.#taskNames()) {
      const tc = this.#taskContext(name);
      if (!tc?.handle || tc.state.state !== 'running') continue;
      const driver = this.#rt.drivers[tc.handle.driver];
      const u = (await driver?.stats?.(tc.handle)) ?? { resourceUsage: emptyUsage(), timestamp: this.#rt.clock.now() };
      tasks[name] = u;
      sum = addUsage(sum, u.resourceUsage);
    }
    return { resourceUsage: sum, tasks, timestamp: this.#rt.clock.now() };
  }

  logs(task: string, stream: LogStream, opts: { follow?: boolean; offset?: number; signal?: AbortSignal } = {}): AsyncIterable<Buffer> {
    if (!this.#taskNames().includes(task)) throw new TaskNotFoundError(task);
    return this.#streams.track((signal) => readTaskLogs(this.allocDir.logsDir, task, stream, { ...opts, signal }), opts.signal);
  }

  #until(pred: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (pred() || this.#state === 'destroyed' || this.#stopped) {
          this.#waiters.delete(check);
          resolve();
          return true;
        }
        return false;
      };
      if (!check()) this.#waiters.add(check);
    });
  }

  /**
   * Client shutdown: runs the shutdown hooks (Nomad's ShutdownHook), then stops the actor. The
   * tasks are left running.
   */
  async shutdown(): Promise<void> {
    if (this.#stopped) return;
    if (this.#state !== 'destroyed' && this.#internals.hooks.some((h) => h.shutdown)) {
      await runHooks(this.#internals.hooks, 'shutdown', { alloc: this.alloc(), allocDir: this.allocDir, signal: this.#destroyCtl.signal }, (hook, error) =>
        this.#rt.bus.publish('hook.error', { allocId: this.allocId, hook, kind: 'shutdown', error }),
      );
    }
    this.stopActor();
  }

  /** Stops the actor without touching tasks (client shutdown). */
  stopActor(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    void this.#streams.endAll(); // the client is going away: nothing serves these streams any more
    this.#actor.stop();
    this.#notify();
  }
}
