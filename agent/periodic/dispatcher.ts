/**
 * Nomad's periodic dispatcher for one agent: each registered, enabled periodic job is launched at
 * the next time any of its cron expressions names (in its `time_zone`), as a child job
 * `<id>/periodic-<unix seconds>` registered with its own evaluation. `prohibit_overlap` skips a
 * launch while an earlier child still runs. One timer, on an injectable clock, for the earliest
 * launch of all. At start, a job whose last launch (its newest child) is older than a launch it
 * should have had runs once now, as Nomad's leader does after a failover; never once per missed
 * launch, and never twice for the same time (a child's id is its launch time).
 * @module
 */
import type { Clock } from '../../index.ts';
import type { AgentState } from '../state/store.ts';
import type { ApiJob, JobRecord } from '../state/types.ts';
import { nextOfAny } from './cron.ts';

/** Nomad's `PeriodicLaunchSuffix`. */
export const PERIODIC_LAUNCH_SUFFIX = '/periodic-';

/** Timers longer than this are re-armed (setTimeout's 32-bit bound). */
const MAX_TIMER_MS = 2 ** 31 - 1;

type PeriodicBlock = { Enabled?: boolean; Spec?: string; Specs?: string[] | null; ProhibitOverlap?: boolean; TimeZone?: string };

/** The expressions of a periodic block (`cron` and `crons`). */
export function specsOf(p: PeriodicBlock): string[] {
  return [...(p.Spec ? [p.Spec] : []), ...(p.Specs ?? [])];
}

/** The periodic block of a job that is launched on a schedule now (registered, enabled, a parent). */
function scheduleOf(rec: JobRecord): PeriodicBlock | undefined {
  const p = rec.apiJob.Periodic as PeriodicBlock | null | undefined;
  if (!p || rec.stop || rec.apiJob.ParentID || p.Enabled === false || specsOf(p).length === 0) return undefined;
  return p;
}

/** The child a launch at `atMs` registers. */
export function periodicChild(parent: ApiJob, atMs: number): ApiJob {
  const id = `${parent.ID}${PERIODIC_LAUNCH_SUFFIX}${Math.floor(atMs / 1000)}`;
  const child: ApiJob = { ...structuredClone(parent), ID: id, Name: id, ParentID: parent.ID };
  delete child.Periodic;
  for (const k of ['Version', 'Status', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stable', 'Stop'])
    delete (child as Record<string, unknown>)[k];
  return child;
}

/** What the dispatcher needs of the agent. */
export interface PeriodicDispatcherOptions {
  state: AgentState;
  clock: Clock;
  log: (line: string) => void;
  /** Registers a child job (and its evaluation). */
  register: (child: ApiJob) => void;
  /** Whether a job still runs (Nomad's job status is not dead). */
  live: (job: JobRecord) => boolean;
}

/** See the module comment. */
export class PeriodicDispatcher {
  #timer: unknown;
  #stopped = false;
  /** Launches skipped for overlap, by parent: they count as the last launch. */
  readonly #skipped = new Map<string, number>();
  /** Each job's next launch, as the last sync armed it. */
  readonly #next = new Map<string, number>();
  constructor(private readonly opts: PeriodicDispatcherOptions) {}

  /** The time of a parent's newest launch, ms: its newest child, or a launch skipped for overlap (undefined before the first). */
  lastLaunch(parentId: string): number | undefined {
    let last = this.#skipped.get(parentId);
    const prefix = `${parentId}${PERIODIC_LAUNCH_SUFFIX}`;
    for (const j of this.opts.state.jobs.values()) {
      if (j.apiJob.ParentID !== parentId || !j.id.startsWith(prefix)) continue;
      const s = Number(j.id.slice(prefix.length));
      if (Number.isFinite(s) && (last === undefined || s * 1000 > last)) last = s * 1000;
    }
    return last;
  }

  /** The next launch of a job (ms), or undefined when it has none. */
  nextLaunch(jobId: string): number | undefined {
    const rec = this.opts.state.jobs.get(jobId);
    const p = rec && scheduleOf(rec);
    if (!p) return undefined;
    return nextOfAny(specsOf(p), Math.max(this.opts.clock.now(), this.lastLaunch(jobId) ?? 0), p.TimeZone);
  }

  /** Catches up once on each job that missed a launch while no agent ran, then arms the timer. */
  start(): void {
    const now = this.opts.clock.now();
    for (const rec of this.opts.state.jobs.values()) {
      const p = scheduleOf(rec);
      const last = p && this.lastLaunch(rec.id);
      if (!p || last === undefined) continue;
      const due = nextOfAny(specsOf(p), last, p.TimeZone);
      if (due !== undefined && due <= now) {
        this.opts.log(`periodic job ${rec.id}: a launch was missed while the agent was down; launching once now`);
        this.#launch(rec, now);
      }
    }
    this.sync();
  }

  /** Launches a job now, whatever its schedule (`periodic force`); the child's id, or undefined when one of this second exists. */
  force(jobId: string): string | undefined {
    const rec = this.opts.state.jobs.get(jobId);
    if (!rec) return undefined;
    const id = this.#launch(rec, this.opts.clock.now(), true);
    this.sync();
    return id;
  }

  /** Re-arms the one timer for the earliest launch (after a register, a stop, a launch). */
  sync(): void {
    if (this.#stopped) return;
    if (this.#timer !== undefined) this.opts.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#next.clear();
    let earliest: number | undefined;
    for (const rec of this.opts.state.jobs.values()) {
      const next = scheduleOf(rec) && this.nextLaunch(rec.id);
      if (next === undefined) continue;
      this.#next.set(rec.id, next);
      if (earliest === undefined || next < earliest) earliest = next;
    }
    if (earliest === undefined) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, earliest - this.opts.clock.now()));
    this.#timer = this.opts.clock.setTimeout(() => this.#fire(), wait);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Stops launching. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.opts.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.opts.clock.now();
    for (const [id, due] of [...this.#next]) {
      const rec = this.opts.state.jobs.get(id);
      // Launched at the time it was due (the child's name), however late the timer fired.
      if (rec && scheduleOf(rec) && due <= now) this.#launch(rec, due);
    }
    this.sync();
  }

  #launch(rec: JobRecord, atMs: number, forced = false): string | undefined {
    const p = rec.apiJob.Periodic as PeriodicBlock | undefined;
    if (!forced && p?.ProhibitOverlap) {
      const running = [...this.opts.state.jobs.values()].find((j) => j.apiJob.ParentID === rec.id && this.opts.live(j));
      if (running) {
        this.opts.log(`periodic job ${rec.id}: skipping the launch of ${new Date(atMs).toISOString()}: prohibit_overlap and ${running.id} still runs`);
        // Recorded as done all the same: the next launch is the one after it.
        this.#skipped.set(rec.id, atMs);
        return undefined;
      }
    }
    const child = periodicChild(rec.apiJob, atMs);
    if (this.opts.state.jobs.has(child.ID)) return undefined;
    this.opts.register(child);
    this.opts.log(`periodic job ${rec.id}: launched ${child.ID}`);
    return child.ID;
  }
}
