/**
 * The server half's state: every job version, evaluation, deployment, allocation, the node and
 * the Nomad variables (their items sealed, never in clear),
 * in memory for reads and in SQLite (`<dataDir>/server/state.db`) for the next start. Every
 * change goes through {@link AgentState.commit}: one SQLite transaction, written with
 * `synchronous = FULL` before the change is visible, so what an API answer or a client action
 * was based on survives a kill -9 of the agent. Then the changed tables' index moves (waking
 * blocking queries) and one event per object goes to `events$` (the event stream).
 * @module
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import { IndexWaiters } from './blocking.ts';
import { varKey, type Deployment, type Evaluation, type JobRecord, type NodeRecord, type ServerAlloc, type Table, type VarRecord } from './types.ts';
import type { PreemptionConfig } from '../config/config.ts';

/** One change, as the event stream shows it. */
export interface StateEvent {
  topic: 'Job' | 'Evaluation' | 'Allocation' | 'Deployment' | 'Node';
  type: string;
  key: string;
  index: number;
  object: unknown;
}

/** What one row of the `objects` table holds. */
export type Kind = 'job' | 'jobVersion' | 'eval' | 'alloc' | 'deployment' | 'node' | 'var' | 'meta';

/** The kinds held in a map by id, each with the table its writes wake. */
const TABLE_OF = { job: 'jobs', eval: 'evals', alloc: 'allocs', deployment: 'deployments', var: 'vars' } as const satisfies Partial<Record<Kind, Table>>;
type MappedKind = keyof typeof TABLE_OF;

/** The scheduler configuration the operator endpoint reads and sets. */
export interface SchedulerConfig {
  preemption: PreemptionConfig;
  createIndex: number;
  modifyIndex: number;
}

/** Writes collected inside one {@link AgentState.commit}. */
export interface Txn {
  readonly index: number;
  /** Stores a job version; versions past the newest {@link JOB_TRACKED_VERSIONS} are dropped. */
  putJob(job: JobRecord): void;
  /** Forgets a job and every version of it. */
  deleteJob(id: string): void;
  putEval(ev: Evaluation): void;
  deleteEval(id: string): void;
  putAlloc(a: ServerAlloc): void;
  deleteAlloc(id: string): void;
  putDeployment(d: Deployment): void;
  deleteDeployment(id: string): void;
  putNode(n: NodeRecord): void;
  putSchedulerConfig(c: SchedulerConfig): void;
  /** Stores a variable (its items already sealed: the state never sees them in clear). */
  putVar(v: VarRecord): void;
  /** Forgets the variable at `path` in `namespace`. */
  deleteVar(namespace: string, path: string): void;
  putMeta(key: string, value: unknown): void;
  event(e: Omit<StateEvent, 'index'>): void;
}

/** How many versions of a job the state keeps (Nomad's `JobTrackedVersions`). */
export const JOB_TRACKED_VERSIONS = 6;

/** The agent's server-side state. */
export class AgentState {
  readonly jobs = new Map<string, JobRecord>();
  /** The last {@link JOB_TRACKED_VERSIONS} versions of every job, newest last. */
  readonly versions = new Map<string, JobRecord[]>();
  readonly evals = new Map<string, Evaluation>();
  readonly allocs = new Map<string, ServerAlloc>();
  readonly deployments = new Map<string, Deployment>();
  /** Every variable, sealed, by {@link varKey}. */
  readonly vars = new Map<string, VarRecord>();
  node: NodeRecord | undefined;
  schedulerConfig: SchedulerConfig | undefined;
  readonly meta = new Map<string, unknown>();
  readonly waiters: IndexWaiters;
  readonly events$ = new Subject<StateEvent>();
  readonly #db: Database.Database;
  readonly #put: Database.Statement;
  readonly #del: Database.Statement;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.#db = new Database(path);
    // Incremental auto-vacuum, so the server GC can give freed pages back to the file system;
    // a database made before that is rebuilt once to switch it on.
    if (this.#db.pragma('auto_vacuum', { simple: true }) !== 2) {
      this.#db.pragma('auto_vacuum = INCREMENTAL');
      this.#db.exec('VACUUM');
    }
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    // The WAL file is cut back to this after a checkpoint, instead of keeping its largest size.
    this.#db.pragma('journal_size_limit = 4194304');
    this.#db.exec('CREATE TABLE IF NOT EXISTS objects (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id))');
    this.#put = this.#db.prepare('INSERT INTO objects (kind, id, json) VALUES (?, ?, ?) ON CONFLICT(kind, id) DO UPDATE SET json = excluded.json');
    this.#del = this.#db.prepare('DELETE FROM objects WHERE kind = ? AND id = ?');
    let maxIndex = 1;
    const seeds: Array<[Table, number]> = [];
    for (const row of this.#db.prepare('SELECT kind, id, json FROM objects').all() as Array<{ kind: Kind; id: string; json: string }>) {
      const v = JSON.parse(row.json);
      const idx = (v?.modifyIndex as number | undefined) ?? 1;
      maxIndex = Math.max(maxIndex, idx);
      if (row.kind in TABLE_OF) {
        this.#mapOf(row.kind as MappedKind).set(row.id, v);
        seeds.push([TABLE_OF[row.kind as MappedKind], idx]);
        continue;
      }
      switch (row.kind) {
        case 'jobVersion': {
          const list = this.versions.get(v.id) ?? [];
          list.push(v);
          this.versions.set(v.id, list);
          break;
        }
        case 'node':
          this.node = v;
          seeds.push(['nodes', idx]);
          break;
        case 'meta':
          if (row.id === 'schedulerConfig') {
            this.schedulerConfig = v;
            seeds.push(['scheduler', idx]);
          } else this.meta.set(row.id, v);
          if (row.id === 'index') maxIndex = Math.max(maxIndex, v as number);
          break;
      }
    }
    // A state written before versions were bounded keeps only the newest ones from now on.
    const stale: string[] = [];
    for (const [id, list] of this.versions) {
      list.sort((a, b) => a.version - b.version);
      for (const v of list.splice(0, Math.max(0, list.length - JOB_TRACKED_VERSIONS))) stale.push(`${id}@${v.version}`);
    }
    if (stale.length) this.#db.transaction(() => stale.forEach((id) => this.#del.run('jobVersion', id)))();
    this.waiters = new IndexWaiters(maxIndex);
    for (const [t, i] of seeds) this.waiters.seed(t, i);
  }

  /** The map that holds the rows of `kind`, by id. */
  #mapOf(kind: MappedKind): Map<string, unknown> {
    return { job: this.jobs, eval: this.evals, alloc: this.allocs, deployment: this.deployments, var: this.vars }[kind];
  }

  /**
   * Runs `fn` with the next index; its writes land in one durable transaction, then become
   * visible, wake the blocking queries on the tables they touched and go out as events. A throw
   * in `fn` changes nothing.
   */
  commit<T>(fn: (txn: Txn) => T): T {
    const index = this.waiters.index + 1;
    const rows: Array<[Kind, string, unknown | undefined]> = [];
    const apply: Array<() => void> = [];
    const tables = new Set<Table>();
    const events: StateEvent[] = [];
    // Each job's versions as this commit leaves them (several writes of one job may share it).
    const versions = new Map<string, JobRecord[]>();
    const versionsOf = (id: string) => versions.get(id) ?? this.versions.get(id) ?? [];
    // One row of a kind kept in a map by id: written (or, undefined, deleted) with the commit, its table woken.
    const write = <T>(kind: MappedKind, id: string, v: T | undefined, map: Map<string, T>) => {
      rows.push([kind, id, v]);
      tables.add(TABLE_OF[kind]);
      apply.push(() => (v === undefined ? map.delete(id) : map.set(id, v)));
    };
    const txn: Txn = {
      index,
      putJob: (j) => {
        rows.push(['job', j.id, j], ['jobVersion', `${j.id}@${j.version}`, j]);
        const list = versionsOf(j.id).filter((v) => v.version !== j.version);
        list.push(j);
        list.sort((a, b) => a.version - b.version);
        const dropped = list.splice(0, Math.max(0, list.length - JOB_TRACKED_VERSIONS));
        for (const v of dropped) rows.push(['jobVersion', `${j.id}@${v.version}`, undefined]);
        versions.set(j.id, list);
        tables.add('jobs');
        apply.push(() => {
          this.jobs.set(j.id, j);
          this.versions.set(j.id, list);
        });
      },
      deleteJob: (id) => {
        rows.push(['job', id, undefined]);
        for (const v of versionsOf(id)) rows.push(['jobVersion', `${id}@${v.version}`, undefined]);
        versions.set(id, []);
        tables.add('jobs');
        apply.push(() => {
          this.jobs.delete(id);
          this.versions.delete(id);
        });
      },
      putEval: (e) => write('eval', e.id, e, this.evals),
      deleteEval: (id) => write('eval', id, undefined, this.evals),
      putAlloc: (a) => write('alloc', a.alloc.id, a, this.allocs),
      deleteAlloc: (id) => write('alloc', id, undefined, this.allocs),
      putDeployment: (d) => write('deployment', d.id, d, this.deployments),
      deleteDeployment: (id) => write('deployment', id, undefined, this.deployments),
      putNode: (n) => {
        rows.push(['node', n.id, n]);
        tables.add('nodes');
        apply.push(() => (this.node = n));
      },
      putSchedulerConfig: (c) => {
        rows.push(['meta', 'schedulerConfig', c]);
        tables.add('scheduler');
        apply.push(() => (this.schedulerConfig = c));
      },
      putVar: (v) => write('var', varKey(v.namespace, v.path), v, this.vars),
      deleteVar: (namespace, path) => write('var', varKey(namespace, path), undefined, this.vars),
      putMeta: (key, value) => {
        rows.push(['meta', key, value]);
        apply.push(() => this.meta.set(key, value));
      },
      event: (e) => events.push({ ...e, index }),
    };
    const result = fn(txn);
    if (rows.length === 0 && events.length === 0) return result;
    rows.push(['meta', 'index', index]);
    this.#db.transaction(() => {
      for (const [kind, id, v] of rows) {
        if (v === undefined) this.#del.run(kind, id);
        else this.#put.run(kind, id, JSON.stringify(v));
      }
    })();
    for (const a of apply) a();
    const idx = this.waiters.next();
    this.waiters.changed([...tables], idx);
    for (const e of events) this.events$.next(e);
    return result;
  }

  /**
   * Gives the pages freed by deletions back to the file system and cuts the WAL file back
   * (after a GC pass: SQLite keeps a file's size otherwise).
   */
  compact(): void {
    this.#db.pragma('wal_checkpoint(TRUNCATE)');
    this.#db.pragma('incremental_vacuum');
    this.#db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Every row id of `kind`, read from SQLite itself (for specs and checks). */
  storedIds(kind: Kind): string[] {
    return (this.#db.prepare('SELECT id FROM objects WHERE kind = ? ORDER BY id').all(kind) as Array<{ id: string }>).map((r) => r.id);
  }

  /** Whether {@link AgentState.close} has run (a reader that would wait must not park then). */
  get closed(): boolean {
    return !this.#db.open;
  }

  /** Wakes every blocking query and closes the database; idempotent. */
  close(): void {
    this.waiters.close();
    this.events$.complete();
    if (this.#db.open) this.#db.close();
  }
}
