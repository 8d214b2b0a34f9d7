/**
 * The client's garbage collector (Nomad's `AllocGarbageCollector`): destroys terminal
 * allocations so a host that runs for months does not fill its disk. The decisions (which allocs,
 * in what order, why) are the pure policy in `machines/policy/gc.ts`; this file holds the
 * effects: the periodic timer on the client's clock, the filesystem reads, and the destroys,
 * at most `parallelDestroys` at a time.
 *
 * It learns which allocs may become collectable from the bus (`alloc.state`), so it never scans
 * every runner on an `addAlloc`: only the allocs that reached `stopping` are candidates.
 * @module
 */
import type { Subscription } from 'rxjs';
import type { Bus } from '../../bus/bus.ts';
import type { AllocState } from '../../model/alloc-state.ts';
import {
  gcReason,
  isGcTerminal,
  pickVictims,
  refuseForced,
  roundSize,
  terminalTime,
  type GcCandidate,
  type GcReason,
  type GcThresholds,
} from '../../machines/policy/gc.ts';
import type { Clock } from '../../model/clock.ts';
import { AllocNotEligibleForGcError, AllocNotFoundError } from '../../model/errors.ts';
import type { AllocRunner } from '../runner/api.ts';
import type { FsUsageReader } from './fs-usage.ts';
import { Limiter } from './limiter.ts';
import { isSettled, onSettled } from './runner-facts.ts';
import { errorText } from '../../model/error-text.ts';

/** What the collector needs from the client it serves. */
export interface GcHost {
  /** The live runner of an alloc, if the client has one. */
  runner(allocId: string): AllocRunner | undefined;
  /** Allocations on the client not destroyed yet (terminal and being collected included), as Nomad's `NumAllocs`. */
  count(): number;
  /** Its data is being copied out right now (a local move or a snapshot being served). */
  isCopyingOut(allocId: string): boolean;
  /** Makes the state store's pending deletes durable. */
  flush(): void;
}

/** Options for {@link AllocGarbageCollector}. */
export interface GarbageCollectorOptions {
  bus: Bus;
  clock: Clock;
  /** The client's alloc dir: its filesystem's usage is what the thresholds measure. */
  allocDir: string;
  thresholds: GcThresholds;
  /** Period of the threshold check; 0 turns it off. */
  intervalMs: number;
  parallelDestroys: number;
  readUsage: FsUsageReader;
  host: GcHost;
}

const WAITING: ReadonlySet<AllocState> = new Set(['pending', 'waiting-prev']);

/**
 * Collects terminal allocations while the alloc dir's filesystem is over a threshold or the
 * client holds more than `maxAllocs`: in a round every `intervalMs`, and in one triggered
 * whenever an alloc comes to rest terminal (Nomad's `Trigger` from `AllocStateUpdated`); and on
 * demand. There is no `MakeRoomFor` on `addAlloc` (Nomad removed it): the next round makes room.
 * @example
 * const gc = new AllocGarbageCollector({ bus, clock, allocDir, thresholds, intervalMs: 60_000, parallelDestroys: 2, readUsage: statfsUsage, host });
 * await gc.collectAll();
 * gc.stop();
 */
export class AllocGarbageCollector {
  readonly #o: GarbageCollectorOptions;
  readonly #limiter: Limiter;
  /** Allocs seen reaching `stopping` -> when first seen there. */
  readonly #candidates = new Map<string, number>();
  /** Watched alloc id -> the allocs still waiting on it (previous or preempted). */
  readonly #heldBy = new Map<string, Set<string>>();
  /** Waiting alloc id -> the alloc ids it waits on. */
  readonly #holding = new Map<string, string[]>();
  /** Collections under way: alloc id -> resolves true once destroyed by us. */
  readonly #collecting = new Map<string, Promise<boolean>>();
  readonly #sub: Subscription;
  #timer: unknown;
  #round: Promise<void> | undefined;
  /** A trigger came while a round ran: run one more (Nomad's one-slot trigger channel). */
  #again = false;
  /** Cancels of the settle watches, by alloc id. */
  readonly #watches = new Map<string, () => void>();
  #stopped = false;

  constructor(opts: GarbageCollectorOptions) {
    this.#o = opts;
    this.#limiter = new Limiter(opts.parallelDestroys);
    this.#sub = opts.bus.of('alloc.state').subscribe((m) => this.#onState(m.allocId, m.to, m.time));
    this.#schedule();
  }

  /** Allocs being destroyed by the collector right now. */
  get collecting(): number {
    return this.#collecting.size;
  }

  #onState(allocId: string, to: AllocState, time: number): void {
    if (!WAITING.has(to)) this.#release(allocId);
    if (to === 'stopping' && !this.#candidates.has(allocId)) {
      this.#candidates.set(allocId, time);
      this.#watchSettle(allocId);
    } else if (to === 'destroyed') {
      this.#candidates.delete(allocId);
      this.#watches.get(allocId)?.();
      this.#watches.delete(allocId);
    }
  }

  /** Once the alloc rests terminal, a round runs (only when automatic collection is on). */
  #watchSettle(allocId: string): void {
    const r = this.#o.host.runner(allocId);
    if (!r || this.#o.intervalMs <= 0) return;
    const cancel = onSettled(r, () => {
      this.#watches.delete(allocId);
      this.trigger();
    });
    if (!this.#watches.has(allocId) && !isSettled(r)) this.#watches.set(allocId, cancel);
  }

  /** Runs a round now, or right after the one in flight (Nomad's `Trigger`). */
  trigger(): void {
    if (this.#stopped) return;
    if (this.#round) {
      this.#again = true;
      return;
    }
    this.#round = this.keepUsageBelowThreshold().finally(() => {
      this.#round = undefined;
      if (this.#again) {
        this.#again = false;
        this.trigger();
      }
    });
  }

  /** The waiting alloc `holder` stopped waiting: what it watched may be collected again. */
  #release(holder: string): void {
    const held = this.#holding.get(holder);
    if (!held) return;
    this.#holding.delete(holder);
    for (const id of held) {
      const set = this.#heldBy.get(id);
      set?.delete(holder);
      if (set?.size === 0) this.#heldBy.delete(id);
    }
  }

  /** A runner was just added: remember what it waits on (never collected while it waits). */
  added(runner: AllocRunner): void {
    if (this.#stopped) return;
    const alloc = runner.alloc();
    const watched = [alloc.previousAllocation, ...(alloc.preemptedAllocations ?? [])].filter((id): id is string => !!id);
    if (watched.length && WAITING.has(runner.state())) {
      this.#holding.set(runner.allocId, watched);
      for (const id of watched) {
        let set = this.#heldBy.get(id);
        if (!set) this.#heldBy.set(id, (set = new Set()));
        set.add(runner.allocId);
      }
    }
  }

  /** Collects every collectable alloc now (`nomad system gc` for this node); returns their ids. */
  async collectAll(): Promise<string[]> {
    const victims = pickVictims(this.#describeCandidates());
    const done = await Promise.all(victims.map((id) => this.#collect(id, 'forced')));
    this.#o.host.flush();
    return victims.filter((_, i) => done[i]);
  }

  /**
   * Collects one alloc now, whatever the thresholds say.
   * @throws AllocNotFoundError when the client has no such alloc
   * @throws AllocNotEligibleForGcError when it is not terminal or is still needed
   */
  async collect(allocId: string): Promise<void> {
    const runner = this.#o.host.runner(allocId);
    if (!runner || runner.isDestroyed()) throw new AllocNotFoundError(allocId);
    const pending = this.#collecting.get(allocId);
    if (pending) {
      await pending;
      return;
    }
    const why = refuseForced(this.#describe(runner, this.#o.clock.now()));
    if (why) throw new AllocNotEligibleForGcError(allocId, why);
    await this.#collect(allocId, 'forced');
    this.#o.host.flush();
  }

  /**
   * One periodic round (Nomad's `keepUsageBelowThreshold`): while the filesystem or the alloc
   * count is over its threshold, collect the oldest-terminal allocs, reading usage again after
   * each. Stops when under every threshold or when nothing is collectable.
   */
  async keepUsageBelowThreshold(): Promise<void> {
    const { thresholds: t, host } = this.#o;
    while (!this.#stopped) {
      let usage;
      try {
        usage = await this.#o.readUsage(this.#o.allocDir);
      } catch (e) {
        // Without usage only the count applies this round.
        this.#o.bus.publish('client.error', { actorId: 'gc', error: `gc: cannot read usage of ${this.#o.allocDir}: ${errorText(e)}` });
      }
      if (this.#stopped) return;
      const live = this.#live();
      const reason = gcReason(usage, live, t);
      if (!reason) return;
      const victims = pickVictims(this.#describeCandidates(), roundSize(reason, live, t));
      if (victims.length === 0) return;
      const done = await Promise.all(victims.map((id) => this.#collect(id, reason)));
      host.flush();
      if (!done.some(Boolean)) return;
    }
  }

  /** Stops the timer and the bus subscription; destroys under way finish or fail on their own. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sub.unsubscribe();
    for (const cancel of this.#watches.values()) cancel();
    this.#watches.clear();
  }

  #schedule(): void {
    if (this.#stopped || this.#o.intervalMs <= 0) return;
    const handle = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.trigger();
      void this.#round?.finally(() => this.#schedule());
    }, this.#o.intervalMs);
    // A background check must never keep the host process alive.
    (handle as { unref?: () => void } | null)?.unref?.();
    this.#timer = handle;
  }

  /** The periodic round in flight, if any (tests wait on it). */
  get round(): Promise<void> | undefined {
    return this.#round;
  }

  /**
   * Allocs that count against `maxAllocs`: every one not destroyed yet, those being collected
   * too (Nomad's `NumAllocs` counts runners until their destroy finished).
   */
  #live(): number {
    return this.#o.host.count();
  }

  #collect(allocId: string, reason: GcReason): Promise<boolean> {
    const existing = this.#collecting.get(allocId);
    if (existing) return existing;
    const p = this.#limiter
      .run(async () => {
        const r = this.#o.host.runner(allocId);
        if (this.#stopped || !r || r.isDestroyed()) return false;
        await r.destroy();
        return true;
      })
      .catch(() => false) // the client shut down under it: not collected
      .then((ok) => {
        this.#collecting.delete(allocId);
        if (ok) {
          this.#candidates.delete(allocId);
          this.#o.bus.publish('gc.collected', { allocId, reason });
        }
        return ok;
      });
    this.#collecting.set(allocId, p);
    return p;
  }

  #describeCandidates(): GcCandidate[] {
    const out: GcCandidate[] = [];
    for (const [id, seenAt] of this.#candidates) {
      const r = this.#o.host.runner(id);
      if (!r || r.isDestroyed()) {
        this.#candidates.delete(id);
        continue;
      }
      out.push(this.#describe(r, seenAt));
    }
    return out;
  }

  #describe(r: AllocRunner, seenAt: number): GcCandidate {
    const view = r.alloc();
    const id = r.allocId;
    return {
      allocId: id,
      terminal: isGcTerminal(view),
      settled: isSettled(r),
      terminalAt: terminalTime(view, seenAt),
      inUse: this.#heldBy.has(id) || this.#o.host.isCopyingOut(id),
      collecting: this.#collecting.has(id),
    };
  }
}
