/**
 * The simulated machine's process table: the truth the invariant checker trusts. A process
 * exists from the moment a simulated driver creates it (before `start` returns, as a real one
 * does) until it exits; processes outlive the host that started them.
 * @module
 */
import type { ExitResult } from '../actors/drivers/driver.ts';
import type { Rng } from './random.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

/** Signal numbers the simulated processes know. */
export const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGUSR1: 10, SIGTERM: 15 };

/** One simulated process. */
export interface SimProcess {
  pid: number;
  allocId: string;
  task: string;
  /** The driver's start id (`TaskConfig.id`). */
  startId: string;
  alive: boolean;
  /** Ignores every signal but SIGKILL. */
  traps: boolean;
  startedAt: number;
  exit?: ExitResult;
  /** Exited by itself (not by a signal). */
  selfExit?: boolean;
}

/** Called whenever a process is created or exits. */
export interface ProcessObserver {
  /** A host's start launched an executor (the decision to run the task). */
  launched?(allocId: string, task: string, startId: string): void;
  spawned?(p: SimProcess): void;
  signaled?(p: SimProcess, sig: string): void;
  exited?(p: SimProcess): void;
}

/**
 * An executor: launched by a host's start, it spawns the task on its own a moment later, whether
 * or not the host that launched it still lives.
 */
export interface SimExecutor {
  startId: string;
  pid?: number;
  cancelled: boolean;
  onSpawn: Set<(p: SimProcess) => void>;
}

/** The process table. */
export class ProcessTable {
  readonly procs = new Map<number, SimProcess>();
  /** Executors by start id (`TaskConfig.id`). */
  readonly executors = new Map<string, SimExecutor>();
  #nextPid = 1000;
  #waiters = new Map<number, Set<() => void>>();
  readonly observers: ProcessObserver[] = [];

  constructor(
    private readonly sched: Scheduler,
    private readonly rng: Rng,
    private readonly trace: Trace,
    /** Chance a process exits by itself, and with which code, per job type. */
    private readonly behaviour: (allocId: string, task: string, rng: Rng) => { lifetimeMs?: number; exitCode: number },
  ) {}

  /** Creates a live process. Its lifetime and its trap come from its own random stream. */
  spawn(allocId: string, task: string, startId: string): SimProcess {
    const pid = this.#nextPid++;
    const r = this.rng.fork(`proc:${startId}:${pid}`);
    const p: SimProcess = { pid, allocId, task, startId, alive: true, traps: r.chance(0.35), startedAt: this.sched.now() };
    this.procs.set(pid, p);
    this.trace.log(`proc ${pid} spawn ${startId}${p.traps ? ' (traps signals)' : ''}`);
    for (const o of this.observers) o.spawned?.(p);
    const b = this.behaviour(allocId, task, r);
    if (b.lifetimeMs !== undefined) {
      this.sched.at(b.lifetimeMs, () => this.exit(pid, { exitCode: b.exitCode, signal: 0 }, true), 'world');
    }
    return p;
  }

  /** Launches an executor that spawns the task after `delayMs` (world time: it outlives hosts). */
  launch(allocId: string, task: string, startId: string, delayMs: number): SimExecutor {
    const ex: SimExecutor = { startId, cancelled: false, onSpawn: new Set() };
    this.executors.set(startId, ex);
    this.trace.log(`executor ${startId} launched`);
    for (const o of this.observers) o.launched?.(allocId, task, startId);
    this.sched.at(
      delayMs,
      () => {
        if (ex.cancelled) return;
        const p = this.spawn(allocId, task, startId);
        ex.pid = p.pid;
        for (const fn of [...ex.onSpawn]) fn(p);
        ex.onSpawn.clear();
      },
      'world',
    );
    return ex;
  }

  /** Tells an executor that has not spawned yet to give up. */
  cancelLaunch(ex: SimExecutor): void {
    if (ex.pid !== undefined || ex.cancelled) return;
    ex.cancelled = true;
    this.executors.delete(ex.startId);
    this.trace.log(`executor ${ex.startId} cancelled before spawning`);
  }

  /** Delivers a signal: SIGKILL always kills; others kill unless the process traps them. */
  signal(pid: number, sig: string, delayMs: number): void {
    const p = this.procs.get(pid);
    if (!p?.alive) return;
    const num = SIGNALS[sig] ?? 15;
    this.trace.log(`proc ${pid} gets ${sig}${p.alive && p.traps && num !== 9 ? ' (ignored)' : ''}`);
    for (const o of this.observers) o.signaled?.(p, sig);
    if (num === 9) return this.exit(pid, { exitCode: 128 + 9, signal: 9 }, false);
    if (p.traps) return;
    this.sched.at(delayMs, () => this.exit(pid, { exitCode: 128 + num, signal: num }, false), 'world');
  }

  exit(pid: number, exit: ExitResult, self: boolean): void {
    const p = this.procs.get(pid);
    if (!p?.alive) return;
    p.alive = false;
    p.exit = exit;
    p.selfExit = self;
    this.trace.log(`proc ${pid} exit code=${exit.exitCode} sig=${exit.signal}${self ? ' (by itself)' : ''}`);
    for (const o of this.observers) o.exited?.(p);
    const ws = this.#waiters.get(pid);
    this.#waiters.delete(pid);
    for (const w of ws ?? []) w();
  }

  /** Calls `fn` once the process exits (at once if it already did). Returns an unsubscribe. */
  onExit(pid: number, fn: () => void): () => void {
    const p = this.procs.get(pid);
    if (!p || !p.alive) {
      fn();
      return () => {};
    }
    let ws = this.#waiters.get(pid);
    if (!ws) this.#waiters.set(pid, (ws = new Set()));
    ws.add(fn);
    return () => ws!.delete(fn);
  }

  /** Live processes of an alloc (and task). */
  live(allocId: string, task?: string): SimProcess[] {
    const out: SimProcess[] = [];
    for (const p of this.procs.values()) if (p.alive && p.allocId === allocId && (task === undefined || p.task === task)) out.push(p);
    return out;
  }

  allLive(): SimProcess[] {
    return [...this.procs.values()].filter((p) => p.alive);
  }
}
