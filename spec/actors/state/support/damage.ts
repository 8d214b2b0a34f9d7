/**
 * Shared by the state-store damage spec and property. A damaged state store never orphans or duplicates a task. A host running two allocations is
 * killed with SIGKILL, its `state.db` is damaged in one of the ways below, and a new client on
 * the same data dir restores (first as is, then, when the store is refused with a typed
 * `StateStoreError`, with `repairStateStore`). Checked against /proc: every live task has an
 * owner, none runs twice, no error is untyped, a second restore behaves like the first, and
 * destroying every alloc leaves nothing running.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '../../../../actors/client/client.ts';
import type { Client } from '../../../../actors/client/types.ts';
import { StateStoreError } from '../../../../actors/state/state-store.ts';
import { BerthError } from '../../../../model/errors.ts';
import { until } from '../../../support/migrate-helpers.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..', '..', '..', '..');

/** Live, topmost processes whose command line contains `needle` (from /proc). */
export function procsWith(needle: string): number[] {
  const out: number[] = [];
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] !== 'Z' && f[0] !== 'X') {
        out.push(Number(name));
        parent.set(Number(name), Number(f[1]));
      }
    } catch {}
  }
  return out.filter((pid) => !out.includes(parent.get(pid)!));
}

const runs = (dataDir: string, label: string) => {
  try {
    return readFileSync(join(dataDir, `runs-${label}`), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** Runs the damage host and kills it with SIGKILL once its allocs run; resolves with their ids. */
export async function crashedHost(dataDir: string): Promise<Record<string, string>> {
  const host = spawn(process.execPath, ['--import', 'tsx', join(here, 'damage-host.ts'), dataDir], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ids: Record<string, string> = {};
  const exited = new Promise<void>((resolve) => host.once('exit', () => resolve()));
  let buf = '';
  host.stdout!.setEncoding('utf8');
  host.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl)) as { alloc?: string; id?: string; ready?: boolean };
      buf = buf.slice(nl + 1);
      if (msg.alloc) ids[msg.alloc] = msg.id!;
      if (msg.ready) host.kill('SIGKILL');
    }
  });
  const timer = setTimeout(() => host.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
  host.stdout!.destroy();
  return ids;
}

/** Edits the store with SQL (opening it replays and checkpoints the WAL). */
const sql = (db: string, text: string) => {
  const d = new Database(db);
  try {
    d.exec(text);
  } finally {
    d.close();
  }
};
const scribble = (file: string, at: number, n: number) => {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, randomBytes(n), 0, n, at);
  } finally {
    closeSync(fd);
  }
};
const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);

/** The ways a store is damaged: each gets the crashed host's data dir and `state.db` path. */
export const DAMAGE: Record<string, (db: string, ids: Record<string, string>, rand: () => number) => void> = {
  'kill -9 only (no damage)': () => {},
  'random header, WAL not checkpointed (page 1 is still in the WAL)': (db) => scribble(db, 0, 100),
  'random header (first 100 bytes)': (db) => {
    sql(db, 'SELECT 1');
    scribble(db, 0, 100);
  },
  'truncated to half': (db) => {
    sql(db, 'SELECT 1');
    truncateSync(db, Math.floor(size(db) / 2));
  },
  'truncated to 0 bytes': (db) => {
    rmSync(db + '-wal', { force: true });
    truncateSync(db, 0);
  },
  'truncated to one page': (db) => {
    sql(db, 'SELECT 1');
    truncateSync(db, Math.min(size(db), 4096));
  },
  'random WAL (same size)': (db) => {
    const wal = db + '-wal';
    if (size(wal) > 0) writeFileSync(wal, randomBytes(size(wal)));
    else writeFileSync(wal, randomBytes(8192));
  },
  'WAL deleted': (db) => rmSync(db + '-wal', { force: true }),
  'WAL truncated to half': (db) => {
    if (existsSync(db + '-wal')) truncateSync(db + '-wal', Math.floor(size(db + '-wal') / 2));
  },
  'store deleted while running': (db) => {
    for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  },
  'a handle row is {}': (db) => sql(db, `UPDATE task_handles SET handle = '{}'`),
  'a handle row is torn JSON': (db) => sql(db, `UPDATE task_handles SET handle = substr(handle, 1, 40)`),
  "a handle row holds another alloc's handle": (db, ids) =>
    sql(db, `UPDATE task_handles SET handle = (SELECT handle FROM task_handles WHERE alloc_id = '${ids.a}') WHERE alloc_id = '${ids.b}'`),
  'task_handles dropped': (db) => sql(db, 'DROP TABLE task_handles'),
  'allocs dropped': (db) => sql(db, 'DROP TABLE allocs'),
  'destroying dropped': (db) => sql(db, 'DROP TABLE destroying'),
  'every handle row deleted': (db) => sql(db, 'DELETE FROM task_handles'),
  'every alloc row deleted': (db) => sql(db, 'DELETE FROM allocs'),
  'an alloc row is torn JSON': (db, ids) => sql(db, `UPDATE allocs SET alloc = substr(alloc, 1, 30) WHERE id = '${ids.a}'`),
  'an alloc row is {}': (db, ids) => sql(db, `UPDATE allocs SET alloc = '{}' WHERE id = '${ids.a}'`),
  'task_handles without its handle column': (db) =>
    sql(db, 'DROP TABLE task_handles; CREATE TABLE task_handles (alloc_id TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (alloc_id, task));'),
  'random bytes inside page 2': (db, _ids, rand) => {
    sql(db, 'SELECT 1');
    scribble(db, 4096 + Math.floor(rand() * 3000), 64);
  },
  'state.db replaced by a directory': (db) => {
    for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
    mkdirSync(db);
  },
};

/** What one restore saw: restored alloc ids, live processes per label, errors. */
export interface Seen {
  restored: string[];
  live: Record<string, number>;
  starts: Record<string, number>;
  typedFailures: number;
  /** Labels whose alloc the client reported on its error topic (e.g. a live task it stopped). */
  reported: string[];
}

const errorsInto = (c: Client, into: Array<{ allocId?: string; error: string }>) =>
  c.bus.of('client.error').subscribe((m) => into.push({ ...(m.allocId ? { allocId: m.allocId } : {}), error: m.error }));

/** Opens a client and restores: as is, then with repair when the store is refused (typed). */
export async function restoreOnce(dataDir: string, ids: Record<string, string>, opened: Client[]): Promise<Seen> {
  let typedFailures = 0;
  let client: Client | undefined;
  let restored: string[] = [];
  const errors: Array<{ allocId?: string; error: string }> = [];
  for (const repair of [false, true]) {
    try {
      client = createClient({ dataDir, maxKillTimeoutMs: 300, repairStateStore: repair });
    } catch (e) {
      expect(e, `createClient threw ${String(e)}`).to.be.instanceOf(StateStoreError);
      expect((e as StateStoreError).file, 'the error names the file').to.equal(join(dataDir, 'client', 'state.db'));
      expect((e as Error).message).to.match(/repair/);
      typedFailures++;
      continue;
    }
    opened.push(client);
    errorsInto(client, errors);
    try {
      restored = (await client.restore()).map((r) => r.allocId);
      break;
    } catch (e) {
      expect(e, `restore threw ${String(e)}`).to.be.instanceOf(BerthError);
      typedFailures++;
      await client.shutdown();
      client = undefined;
    }
  }
  expect(client, 'a repairing client restores').to.not.equal(undefined);
  // Every restored alloc gets its task running (reattached, or started once if it was stopped).
  await Promise.all(client!.runners().map((r) => r.waitFor('running')));
  // The chart runs before its tasks do (a task started again because its handle was unusable
  // is pending until that start is done): wait, bounded, for every restored task to run.
  const settled = () =>
    Object.keys(ids).every(
      (label) =>
        !restored.includes(ids[label]!) ||
        (client!.runner(ids[label]!)?.alloc().taskStates?.web?.state === 'running' && procsWith(join(dataDir, `runs-${label}`)).length > 0),
    );
  await until(settled, 15_000, 'every restored task to run').catch(() => {});
  const live: Record<string, number> = {};
  const starts: Record<string, number> = {};
  for (const label of Object.keys(ids)) {
    live[label] = procsWith(join(dataDir, `runs-${label}`)).length;
    starts[label] = runs(dataDir, label);
    const owned = restored.includes(ids[label]!);
    const state = client!.runner(ids[label]!)?.alloc().taskStates?.web;
    if (process.env.DBG) console.log(label, owned, live[label], state?.state, state?.events.map((e) => e.type).join(','));
    // A restored alloc runs its task exactly once (reattached, or started again once with a
    // "Failed Restoring Task" event when its handle was unusable); an alloc the store lost
    // runs nothing (its task was stopped, and reported on the first restore).
    expect(live[label], `task ${label}: live copies`).to.equal(owned ? 1 : 0);
    if (owned) {
      expect(state?.state, `task ${label}: state of a restored task`).to.equal('running');
      // Each start is on record: the first, plus one per "Failed Restoring Task" (started again).
      const want = 1 + (state?.events ?? []).filter((e) => e.type === 'Failed Restoring Task').length;
      for (let i = 0; i < 100 && runs(dataDir, label) < want; i++) await new Promise((r) => setTimeout(r, 20));
      starts[label] = runs(dataDir, label);
      expect(starts[label], `task ${label}: starts`).to.equal(want);
    }
  }
  const reported = Object.keys(ids).filter((label) => errors.some((e) => e.allocId === ids[label]));
  return { restored: restored.sort(), live, starts, typedFailures, reported };
}
