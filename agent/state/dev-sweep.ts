/**
 * What a dead `-dev` agent left. A dev agent's data dir is a fresh `berth-dev-*` under the temp
 * dir, removed with every alloc when the agent exits; a `kill -9`, an OOM kill or a power cut
 * skips that, leaving its tasks running and their tmpfs mounts behind, in a dir no one will
 * name again. So a dev agent marks its dir, and every agent start sweeps the marked dirs whose
 * lock no live agent holds: the client restores them, destroys every alloc (tasks, mounts,
 * cgroups), and the dir goes.
 *
 * The lock decides who is dead (a kernel lock, dropped when its holder dies), so a live dev
 * agent's dir is never touched; only dirs of this user are swept, so root never acts on a dir
 * another user planted in a shared /tmp.
 * @module
 */
import { lstatSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BerthError, createClient, errorText } from '../../index.ts';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.ts';

/** The temp dir name prefix of a `-dev` agent's data dir. */
export const DEV_DIR_PREFIX = 'berth-dev-';
/** The file that marks a data dir as a dev agent's, to be swept once its agent is gone. */
export const DEV_MARKER = 'dev-agent';

/** Marks `dataDir` (a dev agent's temp dir, its lock held) for the sweep. */
export function markDevDir(dataDir: string): void {
  writeFileSync(join(dataDir, DEV_MARKER), `${process.pid}\n`);
}

/** What one sweep did. */
export interface DevSweepResult {
  /** Dirs of dead dev agents cleaned and removed. */
  removed: string[];
  /** Dirs that could not be cleaned fully (kept, so the next sweep tries again), with why. */
  failed: Array<{ dir: string; error: string }>;
}

/**
 * Cleans every marked dev dir under `tmp` whose agent is gone (see the module doc). Never
 * throws: what fails is logged and kept for the next sweep.
 */
export async function sweepDeadDevAgents(tmp: string, log: (line: string) => void): Promise<DevSweepResult> {
  const out: DevSweepResult = { removed: [], failed: [] };
  let names: string[];
  try {
    names = readdirSync(tmp).filter((n) => n.startsWith(DEV_DIR_PREFIX));
  } catch {
    return out;
  }
  const uid = process.geteuid?.();
  for (const name of names) {
    const dir = join(tmp, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      lstatSync(join(dir, DEV_MARKER));
    } catch {
      continue; // not a dev agent's dir (or one still being made)
    }
    let lock;
    try {
      lock = lockDataDir(dir);
    } catch (e) {
      if (e instanceof DataDirLockedError) continue; // its agent is alive
      out.failed.push({ dir, error: errorText(e) });
      continue;
    }
    try {
      const left = await destroyEverything(dir);
      lock.release();
      lock = undefined;
      rmSync(dir, { recursive: true, force: true });
      out.removed.push(dir);
      log(`removed what a dead dev agent left in ${dir} (${left} allocation${left === 1 ? '' : 's'} destroyed)`);
    } catch (e) {
      out.failed.push({ dir, error: errorText(e) });
      log(`cannot clean up the dead dev agent's dir ${dir}: ${errorText(e)}`);
    } finally {
      lock?.release();
    }
  }
  return out;
}

/** Restores the dir's client (a damaged store repaired) and destroys every alloc in it. */
async function destroyEverything(dir: string): Promise<number> {
  const client = createClient({ dataDir: dir, repairStateStore: true });
  try {
    await client.restore();
    const runners = client.runners();
    const settled = await Promise.allSettled(runners.map((r) => r.destroy()));
    const failed = settled.filter((s) => s.status === 'rejected');
    if (failed.length) throw new BerthError(failed.map((s) => errorText((s as PromiseRejectedResult).reason)).join('; '));
    return runners.length;
  } finally {
    await client.shutdown();
  }
}
