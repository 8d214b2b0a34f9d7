/**
 * The client's state store at its edges, on real SQLite files: task states in rows of their own,
 * records JSON cannot hold, the destroy mark, a reporter that throws, damaged and old files (what
 * a restore then sees), repair, and the read-only view `berth status` opens beside a live client.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, writeSync, closeSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHandle } from '../../../actors/drivers/driver.ts';
import { REPAIR_ADVICE, StateStoreError, handleProblem, openStateStore, quarantineStateStore } from '../../../actors/state/state-store.ts';
import type { Allocation, TaskState } from '../../../model/types.ts';
import { BerthError } from '../../../model/errors.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/** A handle the store accepts for `task` of `alloc`. */
function handleOf(alloc: Allocation, task: string, pid = 7): TaskHandle {
  return {
    driver: 'raw_exec',
    id: `${alloc.id}/${task}/1`,
    startedAt: 1,
    pid,
    state: { pid },
    config: { allocId: alloc.id, taskName: task, stateDir: `/s/${task}`, task: mockTask(task) },
  } as unknown as TaskHandle;
}

/** A task state with the given state word. */
const st = (state: TaskState['state']): TaskState => ({ state, failed: false, restarts: 0, events: [] }) as unknown as TaskState;

/** Rows of one table of a store file, read with a connection of its own. */
function rows(path: string, sql: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

/** How many of this process's open files are `file` (a connection left open holds it). */
function openFds(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe('state store edges (real SQLite files)', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-state-edges-'));
    path = join(dir, 'client', 'state.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps each task's state in a row of its own: a change rewrites that row, a task gone drops it, a reopen joins them back", () => {
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web'), mockTask('log')]);
    const both = { web: st('pending'), log: st('pending') };
    s.putAlloc({ ...a, taskStates: both });
    s.flush();
    expect(rows(path, 'SELECT task, state FROM task_states ORDER BY task').map((r) => (r as { task: string }).task)).to.deep.equal(['log', 'web']);
    expect(JSON.parse((rows(path, 'SELECT alloc FROM allocs')[0] as { alloc: string }).alloc)).to.not.have.property('taskStates');
    // Only web changes: log's row keeps its bytes, web's row is the new state.
    s.putAlloc({ ...a, taskStates: { web: st('running'), log: both.log } });
    s.flush();
    const states = Object.fromEntries(
      rows(path, 'SELECT task, state FROM task_states').map((r) => [(r as { task: string }).task, JSON.parse((r as { state: string }).state).state]),
    );
    expect(states).to.deep.equal({ web: 'running', log: 'pending' });
    // log leaves the view: its row goes.
    s.putAlloc({ ...a, clientStatus: 'running', taskStates: { web: st('running') } });
    s.close();
    expect(rows(path, 'SELECT task FROM task_states')).to.deep.equal([{ task: 'web' }]);
    const again = openStateStore(path);
    const [loaded] = again.load();
    expect(loaded!.alloc.clientStatus).to.equal('running');
    expect(Object.keys(loaded!.alloc.taskStates ?? {})).to.deep.equal(['web']);
    expect(loaded!.alloc.taskStates!.web!.state).to.equal('running');
    again.close();
  });

  it('an unchanged view written again costs no write; a changed field of the view is written', () => {
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.flush();
    s.putAlloc({ ...a });
    s.flush();
    expect(s.load()[0]!.alloc.clientStatus).to.equal('pending');
    s.putAlloc({ ...a, clientStatus: 'failed' });
    s.flush();
    expect(JSON.parse((rows(path, 'SELECT alloc FROM allocs')[0] as { alloc: string }).alloc).clientStatus).to.equal('failed');
    // One field fewer is a change too.
    const { nodeId: _gone, ...fewer } = { ...a, clientStatus: 'failed' as const };
    s.putAlloc(fewer as Allocation);
    s.close();
    expect(JSON.parse((rows(path, 'SELECT alloc FROM allocs')[0] as { alloc: string }).alloc)).to.not.have.property('nodeId');
  });

  it('refuses records JSON cannot hold with a StateStoreError to onError, keeps what it can, and never throws', () => {
    const errors: StateStoreError[] = [];
    const s = openStateStore(path, { onError: (e) => errors.push(e) });
    const a = makeAlloc([mockTask('web')]);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    s.putHandle(a.id, 'web', { ...handleOf(a, 'web'), state: cyclic } as unknown as TaskHandle);
    s.putHandle(a.id, 'log', undefined as unknown as TaskHandle);
    s.putAlloc({ ...a, extra: 1n } as unknown as Allocation);
    const b = makeAlloc([mockTask('web')]);
    s.putAlloc({ ...b, taskStates: { web: { ...st('running'), big: 2n } as unknown as TaskState } });
    s.flush();
    expect(errors.map((e) => e.message.replace(/: [^:]*$/, ''))).to.deep.equal([
      'cannot store the handle of task "web" of allocation ' + a.id,
      'cannot store the handle of task "log" of allocation ' + a.id,
      'cannot store allocation ' + a.id,
      'cannot store the state of task "web" of allocation ' + b.id,
    ]);
    expect(errors[1]!.message).to.equal(`cannot store the handle of task "log" of allocation ${a.id}: not a JSON value`);
    expect(errors.every((e) => e instanceof StateStoreError && e.file === undefined)).to.equal(true);
    // The JSON error itself rides along as the cause (a cycle is a TypeError); "not a JSON value" has none.
    expect(errors[0]!.cause).to.be.instanceOf(TypeError);
    expect(errors[1]!.cause).to.equal(undefined);
    const loaded = s.load();
    expect(loaded.map((l) => l.alloc.id)).to.deep.equal([b.id]);
    expect(loaded[0]!.alloc.taskStates ?? {}).to.deep.equal({});
    s.close();
  });

  it('a reporter that throws breaks nothing', () => {
    const s = openStateStore(path, {
      onError: () => {
        throw new Error('reporter down');
      },
    });
    const a = makeAlloc([mockTask('web')]);
    s.putHandle(a.id, 'web', undefined as unknown as TaskHandle);
    s.putAlloc(a);
    s.close();
    const ro = openStateStore(path, { readonly: true });
    expect(ro.load().map((l) => l.alloc.id)).to.deep.equal([a.id]);
    ro.close();
  });

  it('a failed write is reported, and everything is written again on the next one', () => {
    const errors: string[] = [];
    const causes: unknown[] = [];
    const db = new Database(path.replace('state.db', 'given.db').replace('/client/', '/'));
    // A given database makes no directory for the path it is named by.
    const s = openStateStore(join(dir, 'never', 'made.db'), { db, onError: (e) => (errors.push(e.message), causes.push(e.cause)) });
    expect(existsSync(join(dir, 'never'))).to.equal(false);
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc({ ...a, taskStates: { web: st('running') } });
    db.exec('DROP TABLE task_states');
    s.flush();
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^failed to write client state: .*task_states/);
    expect((causes[0] as Error).message).to.contain('task_states');
    db.exec('CREATE TABLE task_states (alloc_id TEXT NOT NULL, task TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (alloc_id, task))');
    // The same view again: the failed write is forgotten, so it is written in full.
    s.putAlloc({ ...a, taskStates: { web: st('running') } });
    s.flush();
    expect(s.load().map((l) => [l.alloc.id, l.alloc.taskStates?.web?.state])).to.deep.equal([[a.id, 'running']]);
    s.close();
    db.close();
  });

  it('an alloc deleted and put again as it was is written again; a delete keeps the queued handles of other allocs', () => {
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    const b = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.putAlloc(b);
    s.flush();
    s.deleteAlloc(a.id);
    s.flush();
    s.putAlloc(a);
    s.putHandle(b.id, 'web', handleOf(b, 'web'));
    s.deleteAlloc(a.id);
    s.putAlloc(a);
    s.close();
    const ro = openStateStore(path, { readonly: true });
    const loaded = ro.load();
    expect(loaded.map((l) => l.alloc.id).sort()).to.deep.equal([a.id, b.id].sort());
    expect(Object.keys(loaded.find((l) => l.alloc.id === b.id)!.handles)).to.deep.equal(['web']);
    ro.close();
  });

  it('a put is written on the next turn of the event loop, with no flush', async () => {
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    expect(rows(path, 'SELECT id FROM allocs')).to.deep.equal([]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(rows(path, 'SELECT id FROM allocs')).to.deep.equal([{ id: a.id }]);
    s.close();
  });

  it("a page damaged inside the file fails SQLite's quick_check: the store is refused as damaged", () => {
    const s = openStateStore(path);
    for (let i = 0; i < 200; i++) s.putAlloc(makeAlloc([mockTask(`t${i}`)]));
    s.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x41), 0, 4096, 4096);
    closeSync(fd);
    let thrown: unknown;
    try {
      openStateStore(path);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(StateStoreError);
    expect((thrown as StateStoreError).message).to.match(/\(opening it: quick_check: \*\*\* in database main \*\*\*/);
    expect(((thrown as Error).cause as StateStoreError).file).to.equal(path);
  });

  it('markDestroying is durable at once, with the alloc row before it; deleteAlloc clears it; a closed store ignores it', () => {
    const errors: string[] = [];
    const s = openStateStore(path, { defer: () => () => undefined, onError: (e) => errors.push(e.message) });
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.markDestroying(a.id);
    // Nothing deferred ever runs: what is on disk came from markDestroying itself.
    expect(rows(path, 'SELECT id FROM allocs')).to.deep.equal([{ id: a.id }]);
    expect(rows(path, 'SELECT alloc_id FROM destroying')).to.deep.equal([{ alloc_id: a.id }]);
    const seen = openStateStore(path, { readonly: true });
    expect(seen.load().map((l) => [l.alloc.id, l.destroying])).to.deep.equal([[a.id, true]]);
    seen.close();
    s.deleteAlloc(a.id);
    s.flush();
    expect(rows(path, 'SELECT alloc_id FROM destroying')).to.deep.equal([]);
    s.close();
    s.markDestroying(a.id);
    expect(rows(path, 'SELECT alloc_id FROM destroying')).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it('a destroy mark that cannot be written is reported, not thrown', () => {
    const errors: string[] = [];
    const causes: unknown[] = [];
    const db = new Database(join(dir, 'given.db'));
    const s = openStateStore(':unused:', { db, onError: (e) => (errors.push(e.message), causes.push(e.cause)) });
    db.exec('DROP TABLE destroying');
    s.markDestroying('a1');
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^failed to record the destroy of allocation a1: /);
    expect((causes[0] as Error).message).to.contain('destroying');
    s.close();
  });

  it('puts made after close are never written', () => {
    let deferred: (() => void) | undefined;
    const errors: string[] = [];
    const s = openStateStore(path, { defer: (fn) => ((deferred = fn), () => (deferred = undefined)), onError: (e) => errors.push(e.message) });
    const a = makeAlloc([mockTask('web')]);
    s.close();
    s.putAlloc(a);
    expect(deferred).to.equal(undefined);
    s.flush();
    expect(rows(path, 'SELECT id FROM allocs')).to.deep.equal([]);
    // Nothing is tried on the closed database, so nothing fails.
    expect(errors).to.deep.equal([]);
  });

  it('the deferred write is scheduled once per batch and cancelled by an explicit flush', () => {
    const scheduled: Array<() => void> = [];
    let cancelled = 0;
    const s = openStateStore(path, {
      defer: (fn) => {
        scheduled.push(fn);
        return () => void cancelled++;
      },
    });
    const a = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.putHandle(a.id, 'web', handleOf(a, 'web'));
    s.deleteHandle(a.id, 'web');
    expect(scheduled).to.have.length(1);
    s.flush();
    expect(cancelled).to.equal(1);
    expect(rows(path, 'SELECT task FROM task_handles')).to.deep.equal([]);
    s.putHandle(a.id, 'web', handleOf(a, 'web'));
    expect(scheduled).to.have.length(2);
    scheduled[1]!();
    expect(rows(path, 'SELECT task FROM task_handles')).to.deep.equal([{ task: 'web' }]);
    s.close();
  });

  it('rows that no longer parse, or parse to no handle of theirs, are reported and skipped', () => {
    const s = openStateStore(path);
    const a = makeAlloc([mockTask('web'), mockTask('log'), mockTask('db'), mockTask('x')]);
    const torn = makeAlloc([mockTask('web')]);
    s.putAlloc({ ...a, taskStates: { web: st('running'), log: st('running') } });
    s.putAlloc(torn);
    s.putHandle(a.id, 'web', handleOf(a, 'web'));
    s.putHandle(a.id, 'log', handleOf(a, 'db'));
    s.putHandle(a.id, 'db', { driver: '' } as unknown as TaskHandle);
    s.putHandle(a.id, 'x', handleOf(a, 'x'));
    s.putHandle('nobody', 'web', handleOf(a, 'web'));
    s.markDestroying(torn.id);
    s.close();
    const db = new Database(path);
    db.prepare('UPDATE allocs SET alloc = ? WHERE id = ?').run('{"id":', torn.id);
    db.prepare("UPDATE task_handles SET handle = '{' WHERE task = 'x'").run();
    db.prepare("UPDATE task_states SET state = 'nope' WHERE task = 'log'").run();
    db.close();
    const errors: string[] = [];
    const causes: unknown[] = [];
    const again = openStateStore(path, {
      onError: (e) => (errors.push(e.message.replace(/: (Unexpected|Expected|Bad).*$/, ': <parse error>')), causes.push(e.cause)),
    });
    // The torn alloc's destroy mark finds no alloc to mark: skipped with it.
    const loaded = again.load();
    expect(causes.filter((c) => c instanceof SyntaxError)).to.have.length(3);
    expect(loaded.map((l) => l.alloc.id)).to.deep.equal([a.id]);
    expect(Object.keys(loaded[0]!.handles)).to.deep.equal(['web']);
    expect(Object.keys(loaded[0]!.alloc.taskStates ?? {})).to.deep.equal(['web']);
    expect(errors.sort()).to.deep.equal(
      [
        `cannot read allocation ${torn.id}: <parse error>`,
        `cannot use the handle of task "log" of allocation ${a.id}: it names another task; ignored`,
        `cannot use the handle of task "db" of allocation ${a.id}: no driver; ignored`,
        `cannot read the handle of task "x" of allocation ${a.id}: <parse error>`,
        `cannot read the state of task "log" of allocation ${a.id}: <parse error>`,
      ].sort(),
    );
    again.close();
  });

  it('a handle of the right task in another alloc is refused as naming another task', () => {
    const s = openStateStore(':memory:', { onError: () => undefined });
    const a = makeAlloc([mockTask('web')]);
    const b = makeAlloc([mockTask('web')]);
    s.putAlloc(a);
    s.putHandle(a.id, 'web', handleOf(b, 'web'));
    expect(s.load()[0]!.handles).to.deep.equal({});
    s.close();
  });

  it('handleProblem names what a stored handle lacks', () => {
    const ok = handleOf(makeAlloc([mockTask('web')]), 'web') as unknown as Record<string, unknown>;
    const config = ok.config as Record<string, unknown>;
    const cases: Array<[unknown, string | undefined]> = [
      [ok, undefined],
      [null, 'not an object'],
      ['h', 'not an object'],
      [[ok], 'not an object'],
      [{ ...ok, driver: '' }, 'no driver'],
      [{ ...ok, driver: 3 }, 'no driver'],
      [{ ...ok, id: 3 }, 'no id'],
      [{ ...ok, config: null }, 'no config'],
      [{ ...ok, config: 'c' }, 'no config'],
      [{ ...ok, config: { ...config, taskName: 1 } }, 'config without task, alloc or state dir'],
      [{ ...ok, config: { ...config, allocId: 1 } }, 'config without task, alloc or state dir'],
      [{ ...ok, config: { ...config, stateDir: 1 } }, 'config without task, alloc or state dir'],
      [{ ...ok, config: { ...config, task: null } }, 'config without its task'],
      [{ ...ok, config: { ...config, task: 'web' } }, 'config without its task'],
      [{ ...ok, state: null }, 'no driver state'],
      [{ ...ok, state: 1 }, 'no driver state'],
    ];
    expect(cases.map(([h]) => handleProblem(h))).to.deep.equal(cases.map(([, why]) => why));
  });

  it('a file that is no database is refused with the file named and what to do; repair moves it aside and starts fresh', () => {
    openStateStore(path).close(); // makes the client dir
    rmSync(path);
    writeFileSync(path, 'not a database, not at all, long enough to be read as a header by SQLite.');
    let refused: unknown;
    try {
      openStateStore(path);
    } catch (e) {
      refused = e;
    }
    expect(refused).to.be.instanceOf(StateStoreError);
    // The refused open left no connection holding the file.
    expect(openFds(path)).to.equal(0);
    expect((refused as StateStoreError).file).to.equal(path);
    expect((refused as StateStoreError).message).to.contain(`state store ${path} is damaged or unreadable (opening it: `);
    expect((refused as StateStoreError).message).to.contain(`; ${REPAIR_ADVICE}`);
    const moved: Array<[string, string]> = [];
    const s = openStateStore(path, { repair: true, onRepair: (to, err) => moved.push([to, err.file ?? '']) });
    expect(moved).to.have.length(1);
    expect(moved[0]![1]).to.equal(path);
    expect(moved[0]![0]).to.match(/state\.db\.damaged-\d+$/);
    const aside = moved[0]![0].split('/').pop()!;
    expect(readdirSync(join(dir, 'client'))).to.include.members([aside, 'state.db']);
    expect(readFileSync(moved[0]![0], 'utf8')).to.match(/^not a database/);
    expect(s.load()).to.deep.equal([]);
    s.close();
    // Repair without anyone to tell works the same.
    writeFileSync(path, 'not a database, not at all, long enough to be read as a header by SQLite.');
    const quiet = openStateStore(path, { repair: true });
    expect(quiet.load()).to.deep.equal([]);
    quiet.close();
    expect(readdirSync(join(dir, 'client')).filter((n) => /damaged-\d+$/.test(n))).to.have.length(2);
  });

  it('quarantine moves the file and its -wal and -shm when they exist, to a name of the given time', () => {
    openStateStore(path).close();
    writeFileSync(`${path}-wal`, 'wal');
    const aside = quarantineStateStore(path, 1234);
    expect(aside).to.equal(join(dir, 'client', 'state.db.damaged-1234'));
    expect(readdirSync(join(dir, 'client')).sort()).to.deep.equal(['state.db.damaged-1234', 'state.db.damaged-1234-wal']);
    expect(readFileSync(`${aside}-wal`, 'utf8')).to.equal('wal');
    writeFileSync(path, 'main');
    writeFileSync(`${path}-shm`, 'shm');
    quarantineStateStore(path, 5678);
    expect(
      readdirSync(join(dir, 'client'))
        .filter((n) => n.includes('5678'))
        .sort(),
    ).to.deep.equal(['state.db.damaged-5678', 'state.db.damaged-5678-shm']);
  });

  it('repair of an in-memory store or a given database refuses instead (there is no file to move)', () => {
    const db = new Database(join(dir, 'given.db'));
    db.exec('CREATE TABLE allocs (id TEXT PRIMARY KEY, alloc TEXT NOT NULL)');
    expect(() => openStateStore(join(dir, 'given.db'), { db, repair: true })).to.throw(StateStoreError, 'table task_handles is missing');
    // The given connection is the caller's: still open.
    expect(db.open).to.equal(true);
    db.close();
  });

  it('one of the two main tables missing is damage, not an empty store', () => {
    const only = (table: string) => {
      const p = join(dir, `${table}.db`);
      const db = new Database(p);
      db.exec(
        table === 'allocs'
          ? 'CREATE TABLE allocs (id TEXT PRIMARY KEY, alloc TEXT NOT NULL)'
          : 'CREATE TABLE task_handles (alloc_id TEXT, task TEXT, handle TEXT)',
      );
      db.close();
      return p;
    };
    for (const [table, missing] of [
      ['allocs', 'task_handles'],
      ['task_handles', 'allocs'],
    ]) {
      const p = only(table!);
      let thrown: unknown;
      try {
        openStateStore(p);
      } catch (e) {
        thrown = e;
      }
      expect((thrown as Error).message).to.contain(`(opening it: table ${missing} is missing)`);
      expect(((thrown as Error).cause as StateStoreError).file, 'the inner error names the file too').to.equal(p);
    }
  });

  it('a table of the wrong shape is refused when the store opens', () => {
    const p = join(dir, 'shape.db');
    const db = new Database(p);
    db.exec(
      'CREATE TABLE allocs (id TEXT PRIMARY KEY, alloc TEXT NOT NULL); CREATE TABLE task_handles (alloc_id TEXT, task TEXT, handle TEXT); CREATE TABLE destroying (other TEXT)',
    );
    db.close();
    expect(() => openStateStore(p)).to.throw(StateStoreError, /opening it: .*alloc_id/);
  });

  it('a store from before task states and destroy marks (two tables) still loads read-only, with states inside the alloc row', () => {
    const p = join(dir, 'old.db');
    const a = makeAlloc([mockTask('web')]);
    const db = new Database(p);
    db.exec(
      'CREATE TABLE allocs (id TEXT PRIMARY KEY, alloc TEXT NOT NULL); CREATE TABLE task_handles (alloc_id TEXT NOT NULL, task TEXT NOT NULL, handle TEXT NOT NULL, PRIMARY KEY (alloc_id, task))',
    );
    db.prepare('INSERT INTO allocs VALUES (?, ?)').run(a.id, JSON.stringify({ ...a, taskStates: { web: st('dead') } }));
    db.prepare('INSERT INTO task_handles VALUES (?, ?, ?)').run(a.id, 'web', JSON.stringify(handleOf(a, 'web', 99)));
    db.close();
    const ro = openStateStore(p, { readonly: true });
    const [loaded] = ro.load();
    expect(loaded!.alloc.taskStates!.web!.state).to.equal('dead');
    expect(loaded!.handles.web!.pid).to.equal(99);
    expect(loaded).to.not.have.property('destroying');
    ro.close();
    ro.close();
  });

  it('the read-only view reads beside a live writer, refuses every write by name, and needs the file to exist', () => {
    const w = openStateStore(path);
    const a = makeAlloc([mockTask('web')]);
    w.putAlloc(a);
    w.flush();
    const ro = openStateStore(path, { readonly: true });
    expect(ro.load().map((l) => l.alloc.id)).to.deep.equal([a.id]);
    const writes: Array<() => void> = [
      () => ro.putAlloc(a),
      () => ro.deleteAlloc(a.id),
      () => ro.markDestroying(a.id),
      () => ro.putHandle(a.id, 'web', handleOf(a, 'web')),
      () => ro.deleteHandle(a.id, 'web'),
    ];
    for (const write of writes) expect(write).to.throw(BerthError, `state store ${path} is open read-only`);
    ro.flush();
    ro.close();
    w.close();
    // Alone (SQLite keeps a file open while another connection of the process holds it), its close frees the file.
    const alone = openStateStore(path, { readonly: true });
    expect(openFds(path)).to.equal(1);
    alone.close();
    expect(openFds(path)).to.equal(0);
    alone.close();
    expect(() => openStateStore(join(dir, 'none.db'), { readonly: true })).to.throw();
    expect(existsSync(join(dir, 'none.db'))).to.equal(false);
  });

  it('a load that cannot read a table names the file as damaged', () => {
    const db = new Database(join(dir, 'given.db'));
    const s = openStateStore(join(dir, 'given.db'), { db });
    db.exec('DROP TABLE task_handles');
    let thrown: unknown;
    try {
      s.load();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(StateStoreError);
    expect((thrown as StateStoreError).file).to.equal(join(dir, 'given.db'));
    expect((thrown as StateStoreError).message).to.contain('(reading it: ');
    s.close();
  });
});
