/**
 * One agent per data dir. Two agents on one dir would share a node id, restore the same tasks
 * and kill each other's (a second `-dev` agent's exit destroyed the first one's allocs), so the
 * agent holds an exclusive lock on `<data_dir>/agent.lock` for as long as it runs.
 *
 * The lock is SQLite's own (`locking_mode = EXCLUSIVE` after a write): a POSIX lock the kernel
 * drops when the holder dies, so a `kill -9` leaves nothing stale to clean up, and SQLite tracks
 * it per file inside one process too, so a second agent in the same process is refused as well.
 * The holder's pid sits in `agent.pid` beside it, for the refusal's message only.
 * @module
 */
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BerthError } from '../../index.ts';

/** Another agent holds the data dir. */
export class DataDirLockedError extends BerthError {
  /** The data dir. */
  readonly dataDir: string;
  /** The holder's pid, when it could be read. */
  readonly holderPid: number | undefined;
  constructor(dataDir: string, holderPid: number | undefined) {
    super(`data dir ${dataDir} is in use by another berth agent${holderPid ? ` (pid ${holderPid})` : ''}: stop it first, or give this one another -data-dir`);
    this.dataDir = dataDir;
    this.holderPid = holderPid;
  }
}

/** A held data-dir lock. */
export interface DataDirLock {
  /** Gives the lock up (idempotent). */
  release(): void;
}

const LOCK_FILE = 'agent.lock';
const PID_FILE = 'agent.pid';

/**
 * Takes the data dir's exclusive lock, or throws {@link DataDirLockedError} at once (no waiting)
 * when another agent, in this process or another, holds it.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the EXCLUSIVE lock; in this mode SQLite keeps it until close.
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER); BEGIN EXCLUSIVE; DELETE FROM holder; COMMIT;');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirLockedError(dataDir, holderPid(dataDir));
    throw e;
  }
  const pidFile = join(dataDir, PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      rmSync(pidFile, { force: true });
      db.close();
    },
  };
}

function holderPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
