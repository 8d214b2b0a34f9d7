/**
 * The client garbage collector's policy (Nomad's `client/gc.go`), as pure functions: which
 * allocations may be collected, in what order, how many, and why. The effects (reading the
 * filesystem, the periodic timer, the destroys) live in `actors/gc/`.
 *
 * ```
 *  every interval:  usage over a threshold, or more live allocs than gcMaxAllocs?
 *                   └─ yes: collect the oldest-terminal eligible alloc, read again, repeat
 *  addAlloc:        live allocs over gcMaxAllocs? collect (live - max) oldest-terminal ones
 *  gc() / gcAlloc:  collect every eligible alloc now / that one ("forced")
 * ```
 * @module
 */
import { isServerTerminal, isTerminated } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';

/** Why an alloc was collected: a usage threshold, the alloc count, or a caller's request. */
export type GcReason = 'disk' | 'inodes' | 'count' | 'forced';

/** Usage of the filesystem holding the client's alloc dir, in percent (0-100). */
export interface FsUsage {
  diskUsedPercent: number;
  inodesUsedPercent: number;
}

/** The collector's settings (Nomad's `gc_*` client options). */
export interface GcThresholds {
  /** Percent of the alloc dir's filesystem in use above which allocs are collected. */
  diskUsageThreshold: number;
  /** Percent of its inodes in use above which allocs are collected. */
  inodeUsageThreshold: number;
  /** Allocations on the client (terminal ones included) above which terminal ones are collected. */
  maxAllocs: number;
}

/** Nomad's defaults: 80 % disk, 70 % inodes, 50 allocs. */
export const defaultGcThresholds: Readonly<GcThresholds> = { diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: 50 };

/** What the policy needs to know about one allocation on the client (plain data). */
export interface GcCandidate {
  allocId: string;
  /** The client view is terminal: {@link isGcTerminal}. */
  terminal: boolean;
  /** The runner has finished stopping (kills and postrun done), so a destroy cuts nothing short. */
  settled: boolean;
  /** When it became terminal (ms); older ones are collected first. */
  terminalAt: number;
  /** A replacement or preemptor still waits on it, or its data is being copied out. */
  inUse: boolean;
  /** A collection of it is already under way. */
  collecting: boolean;
}

/**
 * Terminal on the client: client status complete, failed or lost, or desired stop/evict with
 * every task dead. Only such allocations are ever collected.
 */
export function isGcTerminal(alloc: Pick<Allocation, 'clientStatus' | 'desiredStatus' | 'taskStates'>): boolean {
  if (isTerminated(alloc)) return true;
  if (!isServerTerminal(alloc)) return false;
  const states = Object.values(alloc.taskStates ?? {});
  return states.length > 0 && states.every((s) => s.state === 'dead');
}

/**
 * When the alloc became terminal: its last task's finish time, else `fallback` (the time it
 * was first seen stopping).
 */
export function terminalTime(alloc: Pick<Allocation, 'taskStates'>, fallback: number): number {
  let at = -Infinity;
  for (const s of Object.values(alloc.taskStates ?? {})) if (s.finishedAt !== undefined && s.finishedAt > at) at = s.finishedAt;
  return at === -Infinity ? fallback : at;
}

/** May the collector take it now? Terminal, settled, not in use, not already being collected. */
export function isCollectable(c: GcCandidate): boolean {
  return c.terminal && c.settled && !c.inUse && !c.collecting;
}

/**
 * Nomad's `keepUsageBelowThreshold` check, in its order: disk first, then inodes, then the
 * alloc count. `usage` is undefined when the filesystem could not be read (only the count then
 * applies). Undefined: nothing to do.
 */
export function gcReason(usage: FsUsage | undefined, liveAllocs: number, t: GcThresholds): Exclude<GcReason, 'forced'> | undefined {
  if (usage && usage.diskUsedPercent > t.diskUsageThreshold) return 'disk';
  if (usage && usage.inodesUsedPercent > t.inodeUsageThreshold) return 'inodes';
  if (liveAllocs > t.maxAllocs) return 'count';
  return undefined;
}

/**
 * How many allocations one collection round takes for `reason`: for the count, exactly as many
 * as bring the client down to `maxAllocs`; for disk or inodes one (the filesystem is read again
 * after each, since nobody knows beforehand what one collection frees).
 */
export function roundSize(reason: Exclude<GcReason, 'forced'>, liveAllocs: number, t: GcThresholds): number {
  return reason === 'count' ? Math.max(0, liveAllocs - t.maxAllocs) : 1;
}

/** Oldest-terminal first; ties by id, so the order is total and repeatable. */
export function byTerminalAge(a: GcCandidate, b: GcCandidate): number {
  return a.terminalAt - b.terminalAt || (a.allocId < b.allocId ? -1 : a.allocId > b.allocId ? 1 : 0);
}

/** The next `n` allocations to collect (all of them when `n` is omitted), oldest-terminal first. */
export function pickVictims(candidates: readonly GcCandidate[], n = Infinity): string[] {
  if (n <= 0) return [];
  return candidates
    .filter(isCollectable)
    .sort(byTerminalAge)
    .slice(0, n)
    .map((c) => c.allocId);
}

/** Why a forced collection of one alloc is refused, or undefined when it may go ahead. */
export function refuseForced(c: GcCandidate): 'not-terminal' | 'in-use' | undefined {
  if (!c.terminal) return 'not-terminal';
  if (c.inUse) return 'in-use';
  return undefined;
}
