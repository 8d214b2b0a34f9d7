/**
 * The migrate_disk decision (Nomad's `NewAllocWatcher` / `migrate_disk` hook), pure: whether the
 * new alloc carries its previous alloc's data, and how. The alloc chart reads it when it enters
 * `migrating`; the `migrateData` effect only carries it out.
 *
 * | previous alloc | restored | sticky/migrate      | local runner | previous node | plan                  |
 * |----------------|----------|---------------------|--------------|---------------|-----------------------|
 * | none           | any      | any                 | any          | any           | none                  |
 * | yes            | yes      | any                 | any          | any           | none (first life did) |
 * | yes            | no       | neither             | any          | any           | skip                  |
 * | yes            | no       | sticky, no migrate  | no           | any           | skip                  |
 * | yes            | no       | sticky or migrate   | yes          | any           | local move            |
 * | yes            | no       | migrate             | no           | unknown       | skip                  |
 * | yes            | no       | migrate             | no           | known         | remote stream         |
 * @module
 */
import type { TaskGroup } from '../../model/types.ts';

/** What the chart knows when the wait is over. */
export interface MigrationFacts {
  previousAllocId?: string;
  /** Restored with its tasks started: the migration happened in its first life. */
  restored: boolean;
  disk?: TaskGroup['ephemeralDisk'];
  /** The previous alloc has a runner on this client ("who is local"). */
  previousIsLocal: boolean;
  /** The node the previous alloc ran on, when a remote watcher learnt it. */
  previousNodeId?: string;
}

/** The migration to run. */
export type MigrationPlan =
  | { kind: 'none' }
  | { kind: 'skip'; previousAllocId: string; reason: string }
  | { kind: 'local'; previousAllocId: string }
  | { kind: 'remote'; previousAllocId: string; nodeId: string };

/** Decides the migration (see the table in the module doc). */
export function migrationPlan(f: MigrationFacts): MigrationPlan {
  const prev = f.previousAllocId;
  if (!prev || f.restored) return { kind: 'none' };
  const migrate = !!f.disk?.migrate;
  const sticky = !!f.disk?.sticky || migrate; // migrate implies sticky (Nomad #16826)
  if (!sticky) return { kind: 'skip', previousAllocId: prev, reason: 'ephemeral disk is neither sticky nor migrate' };
  if (f.previousIsLocal) return { kind: 'local', previousAllocId: prev };
  if (!migrate) return { kind: 'skip', previousAllocId: prev, reason: 'previous allocation is not on this node and migrate is not set' };
  if (!f.previousNodeId) return { kind: 'skip', previousAllocId: prev, reason: 'previous allocation node is unknown (garbage collected or refused)' };
  return { kind: 'remote', previousAllocId: prev, nodeId: f.previousNodeId };
}
