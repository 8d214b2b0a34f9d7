/**
 * What one group of the job needs, before anything is fitted on the node (Nomad's alloc
 * reconciler for one group): which allocs stay, which stop (count down, job stop), which are
 * replaced (destructive update, migrate, reschedule now), which are updated in place, which
 * failed allocs are rescheduled later, and which names to place.
 * @module
 */
import { isServerTerminal, isTerminal, isTerminated, type Allocation, type Job, type TaskGroup } from '../../index.ts';
import { allocIndexOf, NameIndex } from './names.ts';
import { nextRescheduleTime } from './reschedule.ts';
import type { CanaryState, DeploymentBatch, DesiredUpdates } from './types.ts';
import { destructiveChange, same } from './updates.ts';

/** Nomad's `desiredDescription` texts for a stop. */
export const STOP_NOT_NEEDED = 'alloc not needed due to job update';
/** A destructive update stops the old alloc with this. */
export const STOP_UPDATING = 'alloc is being updated due to job update';
/** A stopped-for-migration alloc (Nomad's `alloc stop`). */
export const STOP_MIGRATING = 'alloc is being migrated';
/** A failed alloc that was replaced. */
export const STOP_RESCHEDULED = 'alloc was rescheduled because it failed';

/** A failed alloc reschedules now if its time is this close (Nomad's window). */
const RESCHEDULE_NOW_WINDOW_MS = 1000;

/** One alloc to place. */
export interface PlaceRequest {
  name: string;
  group: TaskGroup;
  previous?: Allocation;
  /** The previous alloc failed and this replaces it (it gets a reschedule tracker). */
  reschedule?: boolean;
  /** The previous alloc is stopped with this description when (and only if) this one is placed. */
  stopPrevious?: string;
  /** A canary of the new version, placed beside the old allocs (Nomad's `DeploymentStatus.Canary`). */
  canary?: boolean;
}

/**
 * The allocs a group is missing, named only as they are placed: a count of a billion costs
 * nothing when none fits (the scheduler stops at the first that does not).
 */
export interface MissingPlacements {
  group: TaskGroup;
  count: number;
  /** The next free name (lowest index first). */
  nextName: () => string;
}

/** What the reconciler decided for one group. */
export interface GroupResult {
  stop: { alloc: Allocation; description: string }[];
  /** Reschedules (same name), then {@link GroupResult.missing}, then migrations: the order they are placed in. */
  place: PlaceRequest[];
  /** New allocs for missing names, placed after the reschedules and before the migrations. */
  missing?: MissingPlacements;
  /** Where in {@link GroupResult.place} the missing ones go. */
  missingAt: number;
  destructive: PlaceRequest[];
  /** Canaries of the new version to place beside the old allocs (after everything else). */
  canaries: PlaceRequest[];
  inPlace: Allocation[];
  rescheduleLater: { alloc: Allocation; time: number }[];
  desired: DesiredUpdates;
  deployment?: DeploymentBatch;
}

/** No changes. */
export function emptyDesired(): DesiredUpdates {
  return { ignore: 0, place: 0, migrate: 0, stop: 0, inPlaceUpdate: 0, destructiveUpdate: 0, preemptions: 0, rescheduleNow: 0, rescheduleLater: 0, canary: 0 };
}

/** How many allocs of the group the node should run: system jobs run one per node. */
export function desiredCount(job: Job, group: TaskGroup): number {
  return job.type === 'system' || job.type === 'sysbatch' ? 1 : (group.count ?? 1);
}

/** Stop every alloc of the job that is not already stopped (job stop, purge, group removed, count 0). */
export function stopAll(allocs: Allocation[]): GroupResult {
  const desired = emptyDesired();
  const stop = allocs.filter((a) => !isServerTerminal(a)).map((alloc) => ({ alloc, description: STOP_NOT_NEEDED }));
  desired.stop = stop.length;
  return { stop, place: [], missingAt: 0, destructive: [], canaries: [], inPlace: [], rescheduleLater: [], desired };
}

/**
 * Reconcile one group. `allocs` are the job's allocs of this group (any state), sorted
 * deterministically; `all` every alloc of the job (to see which were already replaced).
 */
export function reconcileGroup(opts: {
  job: Job;
  group: TaskGroup;
  allocs: Allocation[];
  all: Allocation[];
  evalId: string;
  now: number;
  /** The node is in one of the job's datacenters (if not, a new version cannot update in place). */
  nodeEligible?: boolean;
  /** The operator paused or failed this job version's rollout: no replacement is placed. */
  held?: boolean;
  /** The group's canaries in this job version's deployment, if it has one. */
  canaries?: CanaryState;
}): GroupResult {
  const { job, group, now } = opts;
  const count = desiredCount(job, group);
  const isBatch = job.type === 'batch' || job.type === 'sysbatch';
  const desired = emptyDesired();
  if (count === 0) return stopAll(opts.allocs);
  const replaced = new Set(opts.all.map((a) => a.previousAllocation).filter((id): id is string => !!id));

  // Server-terminal allocs are done with, except batch ones (a completed batch alloc still counts).
  let allocs = opts.allocs.filter((a) => !isServerTerminal(a) || (isBatch && !a.desiredTransition?.reschedule));
  if (isBatch) {
    // A batch job's terminal allocs of an older version no longer count (the new version runs again).
    const older = allocs.filter((a) => isTerminal(a) && isOlder(a, job));
    desired.ignore += older.length;
    allocs = allocs.filter((a) => !older.includes(a));
  }

  // Nomad's `cancelUnneededCanaries`: canaries never promoted, of an older version or of a
  // failed deployment, stop (a newer version or a revert left them behind).
  const stop: GroupResult['stop'] = [];
  // A failed deployment holds its version as a paused or failed rollout does.
  const held = opts.held === true || opts.canaries?.failed === true;
  const staleCanary = (a: Allocation) => a.deploymentStatus?.canary === true && (!sameVersion(a, job) || opts.canaries?.failed === true);
  for (const a of allocs.filter((x) => staleCanary(x) && !isServerTerminal(x))) stop.push({ alloc: a, description: STOP_NOT_NEEDED });
  allocs = allocs.filter((a) => !staleCanary(a));

  // Classify: migrating (Nomad's `alloc stop`) and the rest; the rest by reschedulability.
  const migrate = allocs.filter((a) => !isTerminal(a) && a.desiredTransition?.migrate);
  const untainted: Allocation[] = [];
  const rescheduleNow: Allocation[] = [];
  const rescheduleLater: { alloc: Allocation; time: number }[] = [];
  for (const a of allocs) {
    if (migrate.includes(a)) continue;
    if (replaced.has(a.id) && isTerminal(a)) continue;
    const verdict = filterVerdict(a, isBatch);
    if (verdict === 'untainted') {
      untainted.push(a);
      continue;
    }
    if (verdict === 'ignore') {
      desired.ignore++;
      continue;
    }
    const { time, eligible } = nextRescheduleTime(a);
    // `nomad job eval -force-reschedule` replaces a failed alloc now, whatever its policy says.
    const forced = !!a.desiredTransition?.forceReschedule && isTerminated(a);
    if (forced || (eligible && (a.followupEvalId === opts.evalId || time - now <= RESCHEDULE_NOW_WINDOW_MS))) {
      rescheduleNow.push(a);
      continue;
    }
    untainted.push(a);
    if (eligible && !a.followupEvalId) rescheduleLater.push({ alloc: a, time });
  }
  desired.rescheduleLater = rescheduleLater.length;

  // Canaries (Nomad's `isCanarying`): until promoted they stand beside the old allocs and count
  // for nothing; once promoted, the old allocs they took the names of stop.
  const update = isBatch ? undefined : group.update;
  const cs = opts.canaries;
  const canaryIds = new Set(cs?.placedCanaries ?? []);
  const canaries = untainted.filter((a) => canaryIds.has(a.id) && sameVersion(a, job));
  const promoted = cs?.promoted === true;
  const replacing = (a: Allocation) => !sameVersion(a, job) && (destructiveChange(a.job, job, group.name) !== undefined || opts.nodeEligible === false);
  const canarying = !cs?.failed && !promoted && !!update && update.canary > 0 && (!!cs?.desiredCanaries || untainted.some(replacing));
  if (canarying) untainted.splice(0, untainted.length, ...untainted.filter((a) => !canaries.includes(a)));
  else if (canaries.length > 0) {
    const taken = new Set(canaries.map((a) => a.name));
    for (const a of untainted.filter((x) => !canaries.includes(x) && !sameVersion(x, job) && taken.has(x.name))) {
      stop.push({ alloc: a, description: STOP_NOT_NEEDED });
      untainted.splice(untainted.indexOf(a), 1);
    }
  }

  const names = new NameIndex(
    job.id,
    group.name,
    count,
    [...untainted, ...migrate, ...rescheduleNow].map((a) => a.name),
  );

  // Count down: stop the highest indexes (migrating allocs first).
  let remove = untainted.filter((a) => a.clientStatus !== 'unknown').length + migrate.length - count;
  if (remove > 0) {
    const removeMigrating = new NameIndex(
      job.id,
      group.name,
      count,
      migrate.map((a) => a.name),
    ).highest(remove);
    for (const a of [...migrate]) {
      if (remove === 0 || !removeMigrating.has(a.name ?? '')) continue;
      stop.push({ alloc: a, description: STOP_NOT_NEEDED });
      migrate.splice(migrate.indexOf(a), 1);
      names.unset(allocIndexOf(a.name) ?? 0);
      remove--;
    }
    const working = untainted.filter((a) => !isServerTerminal(a));
    const highest = names.highest(remove);
    for (const a of [...working]) {
      if (remove === 0) break;
      if (!highest.has(a.name ?? '')) continue;
      stop.push({ alloc: a, description: STOP_NOT_NEEDED });
      working.splice(working.indexOf(a), 1);
      remove--;
    }
    for (const a of working) {
      if (remove === 0) break;
      stop.push({ alloc: a, description: STOP_NOT_NEEDED });
      remove--;
    }
    for (const s of stop) if (untainted.includes(s.alloc)) untainted.splice(untainted.indexOf(s.alloc), 1);
  }
  desired.stop += stop.length;

  // Job version changes: ignore, destructive or in place.
  const inPlace: Allocation[] = [];
  const destructive: Allocation[] = [];
  for (const a of untainted) {
    if (sameVersion(a, job)) desired.ignore++;
    else if (replacing(a)) destructive.push(a);
    else if (isTerminal(a)) desired.ignore++;
    else inPlace.push(a);
  }
  desired.inPlaceUpdate = inPlace.length;

  // The rolling update's budget (Nomad's underprovisioning by `update.max_parallel`).
  let budget = count;
  let deployment: DeploymentBatch | undefined;
  const current = [...untainted, ...(canarying ? canaries : [])].filter((a) => versionOf(a) === job.version && !destructive.includes(a));
  const failed = current.some((a) => a.deploymentStatus?.healthy === false);
  const inFlight = current.filter((a) => a.deploymentStatus?.healthy !== true).length;
  if (update && update.maxParallel > 0 && destructive.length + migrate.length > 0)
    budget = failed || held || canarying ? 0 : Math.max(0, update.maxParallel - inFlight);
  // Nomad's reconciler tracks a version with a deployment when the group has an update strategy
  // and either no alloc of this version was ever placed (a first run included: version 0 too) or
  // the spec changes under running allocs; a migration or a reschedule alone makes none.
  const hadRunning = opts.all.some((a) => a.taskGroup === group.name && sameVersion(a, job));
  const updatingSpec = destructive.length > 0 || inPlace.length > 0 || canarying;
  if (update && update.maxParallel > 0 && !held && (!hadRunning || updatingSpec))
    deployment = {
      maxParallel: update.maxParallel,
      desiredTotal: count,
      replaced: 0,
      remaining: destructive.length,
      inFlight,
      failed,
      desiredCanaries: canarying || canaries.length > 0 ? update.canary : 0,
      promoted,
    };

  // Canaries still to place: the names of the allocs they will replace first (Nomad's `NextCanaries`).
  const canaryRequests: PlaceRequest[] = [];
  if (canarying && update && !held && !failed) {
    const taken = new Set(canaries.map((a) => a.name));
    const free = [...destructive]
      .sort((x, y) => (allocIndexOf(x.name) ?? 0) - (allocIndexOf(y.name) ?? 0))
      .map((a) => a.name ?? '')
      .filter((n) => !taken.has(n));
    for (let i = canaries.length; i < update.canary; i++) {
      const name = free.shift() ?? names.next(1)[0]!;
      canaryRequests.push({ name, group, canary: true });
    }
    desired.canary = canaryRequests.length;
  }

  // Placements: reschedules first (same name), then missing names.
  const place: PlaceRequest[] = rescheduleNow.map((a) => ({ name: a.name ?? '', group, previous: a, reschedule: true, stopPrevious: STOP_RESCHEDULED }));
  const existing = untainted.length + migrate.length + rescheduleNow.length;
  const missing: MissingPlacements = { group, count: Math.max(0, count - existing), nextName: () => names.next(1)[0]! };
  desired.place = place.length + missing.count;
  desired.rescheduleNow = rescheduleNow.length;
  budget -= Math.min(desired.place, budget);

  // Destructive updates within the budget, lowest index first.
  const byIndex = [...destructive].sort((x, y) => (allocIndexOf(x.name) ?? 0) - (allocIndexOf(y.name) ?? 0));
  const now_ = byIndex.slice(0, Math.min(byIndex.length, budget));
  desired.destructiveUpdate = now_.length;
  desired.ignore += byIndex.length - now_.length;
  const destructiveRequests = now_.map((a) => ({ name: a.name ?? '', group, previous: a, stopPrevious: STOP_UPDATING }));
  if (deployment) {
    deployment.replaced = now_.length;
    deployment.remaining = byIndex.length - now_.length;
  }

  // Migrations: stop and replace under the same name.
  for (const a of migrate) place.push({ name: a.name ?? '', group, previous: a, stopPrevious: STOP_MIGRATING });
  desired.migrate = migrate.length;

  // Never more than count in all (reschedules + missing + migrations).
  return {
    stop,
    place: place.slice(0, Math.max(0, count - missing.count)),
    missing,
    missingAt: rescheduleNow.length,
    destructive: destructiveRequests,
    canaries: canaryRequests,
    inPlace,
    rescheduleLater,
    desired,
    deployment,
  };
}

/** Nomad's `shouldFilter`: whether an alloc simply counts, is ignored, or is checked for a reschedule. */
function filterVerdict(a: Allocation, isBatch: boolean): 'untainted' | 'ignore' | 'check' {
  if (isBatch) {
    if (a.desiredTransition?.reschedule) return 'check';
    if (a.desiredStatus === 'stop') return ranSuccessfully(a) ? 'untainted' : 'ignore';
    if (a.desiredStatus === 'evict') return 'ignore';
    return a.clientStatus === 'failed' ? 'check' : 'untainted';
  }
  if (isServerTerminal(a)) return 'ignore';
  if (a.clientStatus === 'complete' || a.clientStatus === 'lost') return 'ignore';
  return 'check';
}

function ranSuccessfully(a: Allocation): boolean {
  if (a.clientStatus === 'complete') return true;
  const states = Object.values(a.taskStates ?? {});
  return states.length > 0 && states.every((s) => s.state === 'dead' && !s.failed);
}

function versionOf(a: Allocation): number | undefined {
  return a.jobVersion ?? a.job.version;
}

function isOlder(a: Allocation, job: Job): boolean {
  const v = versionOf(a);
  return v !== undefined && job.version !== undefined && v < job.version;
}

/** The alloc runs this very job version (nothing to update). */
function sameVersion(a: Allocation, job: Job): boolean {
  const v = versionOf(a);
  if (v !== undefined && job.version !== undefined) return v === job.version;
  return same(a.job, job);
}
