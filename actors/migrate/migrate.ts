/**
 * The migrate_disk step: after the wait, carry a sticky ephemeral disk's data from the previous
 * allocation. Local previous alloc: move by rename. Previous alloc on another node with
 * `migrate`: stream its snapshot over HTTP (see remote-stream.ts). A failed migration is soft, as
 * in Nomad: the alloc dir is destroyed and rebuilt clean, the bus says why, the alloc goes on.
 * Cancellable, and bounded by the client's migrateTimeoutMs.
 * @module
 */
import { BerthError, TimeoutError } from '../../model/errors.ts';
import type { MigrateEnv, MigrationTarget } from './env.ts';
import type { MigrationPlan } from '../../machines/policy/migration-plan.ts';
import { remoteMigrate } from './remote-stream.ts';
import { trackInFlight } from '../allocdir/in-flight.ts';
import { errorText } from '../../model/error-text.ts';

/** An AbortSignal that aborts after `ms` on the runtime's clock, or with `parent`. */
function deadline(rt: Pick<MigrateEnv, 'clock'>, parent: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const ctl = new AbortController();
  const t = rt.clock.setTimeout(() => ctl.abort(new TimeoutError(`migration timed out after ${ms}ms`)), ms);
  (t as { unref?: () => void })?.unref?.();
  const onAbort = () => ctl.abort(parent.reason);
  if (parent.aborted) ctl.abort(parent.reason);
  else parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: ctl.signal,
    clear() {
      rt.clock.clearTimeout(t);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Carries out the migrate_disk `plan` the chart decided for one runner. Rejects only when
 * cancelled by `signal` (or when the alloc dir cannot be rebuilt after a failed migration).
 *
 * The work is registered in the runner's `copiesOut` while it runs, so destroying this alloc
 * waits for a cancelled migration to finish cleaning up (temporary dir removed, no alloc dir
 * rebuilt after the runner removed it).
 */
export function migrateData(rt: MigrateEnv, r: MigrationTarget, plan: MigrationPlan, signal: AbortSignal): Promise<void> {
  return trackInFlight(r.copiesOut, runMigration(rt, r, plan, signal));
}

async function runMigration(rt: MigrateEnv, r: MigrationTarget, plan: MigrationPlan, signal: AbortSignal): Promise<void> {
  if (plan.kind === 'none') return;
  const prevId = plan.previousAllocId;
  if (plan.kind === 'skip') {
    rt.bus.publish('migration.skipped', { allocId: r.allocId, previousAllocId: prevId, reason: plan.reason });
    return;
  }
  const prev = plan.kind === 'local' ? r.previousRunner : undefined;
  if (plan.kind === 'local' && !prev) throw new BerthError(`alloc ${r.allocId}: no local runner for previous allocation ${prevId}`);
  const mode = plan.kind;
  const started = rt.clock.now();
  rt.bus.publish('migration.started', { allocId: r.allocId, previousAllocId: prevId, mode });
  const dl = deadline(rt, signal, rt.migrateTimeoutMs);
  try {
    let bytes: number | undefined;
    if (prev) {
      await trackInFlight(rt.registry.get(prev.allocId)?.copiesOut, r.allocDir.move(prev.allocDir, r.group.tasks));
    } else if (plan.kind === 'remote') {
      bytes = await remoteMigrate(rt, r, prevId, plan.nodeId, dl.signal);
    }
    rt.bus.publish('migration.done', {
      allocId: r.allocId,
      previousAllocId: prevId,
      mode,
      ms: rt.clock.now() - started,
      ...(bytes !== undefined ? { bytes } : {}),
    });
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    rt.bus.publish('migration.failed', { allocId: r.allocId, previousAllocId: prevId, error: errorText(e) });
    // Soft failure: start from a clean slate (unless the alloc is being destroyed meanwhile:
    // rebuilding then would leave a dir behind that nobody removes).
    try {
      await r.allocDir.destroy();
      if (signal.aborted) throw signal.reason;
      await r.allocDir.build();
    } catch (e2) {
      if (signal.aborted) throw signal.reason;
      throw new BerthError(`failed to clean task directories after failed migration: ${errorText(e2)}`);
    }
  } finally {
    dl.clear();
  }
}
