/**
 * Reading a data dir that a client (`berth run --data-dir`, or a host embedding berth) writes:
 * its state store, read-only so it works beside a live client, and an alloc's log dir.
 * @module
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AllocDir } from '../../actors/allocdir/alloc-dir.ts';
import { openStateStore, type StoredAlloc } from '../../actors/state/state-store.ts';
import { AllocNotFoundError } from '../../model/errors.ts';
import { InputError, UsageError } from './errors.ts';

/** The parseArgs option of `--data-dir DIR`, the data dir `run` writes and `status` and `logs` read. */
export const DATA_DIR_FLAG = { 'data-dir': { type: 'string' } } as const;

/** The state store's path inside a data dir (as createClient lays it out). */
export const stateDbPath = (dataDir: string) => join(dataDir, 'client', 'state.db');

/** Every allocation stored in `dataDir`, oldest first. */
export function readStoredAllocs(dataDir: string): StoredAlloc[] {
  const db = stateDbPath(resolve(dataDir));
  if (!existsSync(db)) throw new InputError(dataDir, `no berth state here (expected ${db}); give the --data-dir a client or berth run --data-dir used`);
  const store = openStateStore(db, { readonly: true });
  try {
    return store.load().sort((a, b) => (a.alloc.createTime ?? 0) - (b.alloc.createTime ?? 0));
  } finally {
    store.close();
  }
}

/** The one stored allocation whose id is `idOrPrefix` or starts with it. */
export function findAlloc(all: StoredAlloc[], idOrPrefix: string, command: string): StoredAlloc {
  const exact = all.find((s) => s.alloc.id === idOrPrefix);
  if (exact) return exact;
  const hits = all.filter((s) => s.alloc.id.startsWith(idOrPrefix));
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1)
    throw new UsageError(
      `alloc id prefix ${JSON.stringify(idOrPrefix)} matches ${hits.length} allocations: ${hits.map((h) => h.alloc.id.slice(0, 8)).join(', ')}`,
      command,
    );
  throw new AllocNotFoundError(idOrPrefix);
}

/** The log dir of an alloc under `dataDir` (createClient's default alloc dir). */
export function allocLogsDir(dataDir: string, allocId: string): string {
  return new AllocDir(join(resolve(dataDir), 'alloc'), allocId).logsDir;
}
