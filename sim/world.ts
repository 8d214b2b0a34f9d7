/**
 * One simulation run: berth's real client, runners and machines on virtual time, above the
 * simulated driver, alloc dirs, servers and state-store disk; ops applied at their times; every
 * invariant checked as it goes. Same seed and ops, same trace, byte for byte.
 * @module
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createClient } from '../actors/client/client.ts';
import type { AllocRunner, Client } from '../actors/client/types.ts';
import type { RunnerHook } from '../actors/runner/hooks.ts';
import type { HostFs } from '../actors/runner/runtime.ts';
import { openStateStore, type StateStore } from '../actors/state/state-store.ts';
import { isClientTerminalStatus } from '../model/status.ts';
import type { Allocation } from '../model/types.ts';
import { SimAllocDir, SimDisk, type SimDirEnv } from './alloc-dir.ts';
import { createSimDriver, SIM_DRIVER, type SimFaults } from './driver.ts';
import { JobSim } from './jobs.ts';
import { HealthInvariant, healthGroupFields } from './health.ts';
import { Checker, type Violation } from './invariants.ts';
import { aliasOf, allocUuid, generateOps, type AllocSpec, type Op, type Ref } from './ops.ts';
import { ProcessTable } from './processes.ts';
import { Rng } from './random.ts';
import { Scheduler } from './scheduler.ts';
import { SimServers } from './servers.ts';
import { Trace } from './trace.ts';

/** Virtual time zero. */
export const EPOCH = Date.UTC(2025, 0, 1);
/** How long the world runs on after the last op before everything is destroyed. */
const SETTLE_MS = 120_000;
/** How long the final destroys may take. */
const DRAIN_MS = 900_000;
const MAX_STEPS = 200_000;

/** Options of {@link runSim}. */
export interface SimOptions {
  seed: number;
  /** The ops to run; default generated from the seed. */
  ops?: Op[];
  /** Keep the trace (default true). */
  trace?: boolean;
  faults?: SimFaults;
  /** Receives every xstate inspection event (coverage). */
  inspect?: (ev: InspectionEvent) => void;
}

/** What a run found. */
export interface SimResult {
  seed: number;
  ops: Op[];
  violations: Violation[];
  trace: string;
  steps: number;
  virtualMs: number;
}

let sharedDataDir: string | undefined;
/** One real (empty) data dir for every run of this process: the client creates its alloc root there. */
function dataDir(): string {
  if (!sharedDataDir) {
    sharedDataDir = mkdtempSync(join(tmpdir(), 'berth-sim-'));
    process.once('exit', releaseSimDataDir);
  }
  return sharedDataDir;
}

/** Removes the shared data dir now (a test suite's cleanup); the next run makes a new one. */
export function releaseSimDataDir(): void {
  if (sharedDataDir) rmSync(sharedDataDir, { recursive: true, force: true });
  sharedDataDir = undefined;
}

const errText = (e: unknown) => (e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e));

interface Host {
  gen: number;
  owner: string;
  client: Client;
  crash(): void;
  unsubscribe(): void;
}

/** Runs one simulation. */
export async function runSim(opts: SimOptions): Promise<SimResult> {
  const ops = opts.ops ?? generateOps(opts.seed);
  const root = new Rng(opts.seed);
  const sched = new Scheduler(EPOCH);
  const trace = new Trace(() => sched.now(), EPOCH, opts.trace !== false, [[dataDir(), '<data>']]);
  const specs = new Map<string, AllocSpec>();
  const table = new ProcessTable(sched, root.fork('world'), trace, (allocId, task, r) => {
    const t = specs.get(allocId)?.tasks.find((x) => x.name === task);
    if (!t || t.lifetimeMs === undefined) return { exitCode: 0 };
    return { lifetimeMs: Math.round(t.lifetimeMs * (0.5 + r.next())), exitCode: t.exitCode };
  });
  const checker = new Checker(
    table,
    () => sched.now(),
    (l) => trace.log(l),
  );
  const disk = new SimDisk();
  const servers = new SimServers();
  checker.remoteTerminal = (id) => servers.terminal(id);
  const db = new Database(':memory:');
  const serverAllocs = new Map<string, Allocation>();
  const persistedTerminal = () => {
    const out = new Map<string, Allocation>();
    for (const row of db.prepare('SELECT id, alloc FROM allocs').all() as Array<{ id: string; alloc: string }>) out.set(row.id, JSON.parse(row.alloc));
    return out;
  };

  table.observers.push({
    spawned: (p) => {
      const f = checker.facts(p.allocId);
      if (f.destroyResolved && !disk.dirs.has(p.allocId))
        checker.fail('I3', `${aliasOf(p.allocId)}/${p.task}: a process (pid ${p.pid}) re-created the alloc's log files after destroy() resolved`, p.allocId);
    },
    signaled: (p) => {
      const f = checker.facts(p.allocId);
      if (f.destroyCalled) f.destroyBegan = true;
    },
  });

  const waitBound = root.fork('config').chance(0.3) ? 20_000 : undefined;
  let host: Host | undefined;
  let gen = 0;
  const fs: HostFs = { mkdirp: async () => {}, rmrf: async () => {}, rmdir: async () => {} };

  /** `<alloc>/<task>` whose check fails now (the `health` op). */
  const sick = new Set<string>();
  const health = new HealthInvariant(
    checker,
    () => sched.now(),
    (id) => specs.get(id),
  );

  const startHost = (): Host => {
    const g = gen++;
    const owner = `host${g}`;
    const hostRng = root.fork(owner);
    const driver = createSimDriver({
      sched,
      table,
      rng: root.fork(`${owner}:driver`),
      trace,
      owner,
      healthOf: (allocId, task) => !sick.has(`${allocId}/${task}`),
      ...(opts.faults ? { faults: opts.faults } : {}),
    });
    const dirEnv: SimDirEnv = { sched, rng: root.fork(`${owner}:dirs`), trace, disk, owner, buildFail: 0.02, moveFail: 0.3 };
    const real = openStateStore(':memory:', {
      db,
      defer: (fn) => {
        const t = sched.at(0, fn, owner);
        return () => sched.cancel(t);
      },
    });
    // The store as the runtime sees it; a write for an alloc whose destroy resolved is I3.
    const guard = (id: string, what: string) => {
      if (checker.facts(id).destroyResolved) checker.fail('I3', `${aliasOf(id)}: state store ${what} after destroy() resolved`, id);
    };
    // A crashed host writes nothing more (whatever of it still runs is a zombie of the sim).
    let alive = true;
    const store: StateStore = {
      putAlloc: (a) => void (alive && (guard(a.id, 'putAlloc'), real.putAlloc(a))),
      deleteAlloc: (id) => void (alive && real.deleteAlloc(id)),
      markDestroying: (id) => void (alive && real.markDestroying(id)),
      putHandle: (id, t, h) => void (alive && (guard(id, 'putHandle'), real.putHandle(id, t, h))),
      deleteHandle: (id, t) => void (alive && real.deleteHandle(id, t)),
      load: () => real.load(),
      flush: () => void (alive && real.flush()),
      close: () => void (alive && real.flush()), // the database outlives hosts: it is the disk
    };
    const hookRng = root.fork(`${owner}:hooks`);
    const failing = (id: string, kind: 'prerun' | 'postrun' | 'destroy') => {
      if (specs.get(id)?.failingHooks?.includes(kind)) throw new Error(`sim: ${kind} hook failed`);
    };
    const hook: RunnerHook = {
      name: 'sim',
      prerun: async (ctx) => {
        trace.log(`hook prerun ${aliasOf(ctx.alloc.id)}`);
        if (checker.facts(ctx.alloc.id).terminalAtCrash)
          checker.fail('I5', `${aliasOf(ctx.alloc.id)}: prerun hook ran for a client-terminal alloc`, ctx.alloc.id);
        failing(ctx.alloc.id, 'prerun');
      },
      postrun: async (ctx) => {
        // A client-terminal alloc runs its postrun hooks again (Nomad's Run calls postrun when it
        // does not run): only prerun and task starts are refused it.
        trace.log(`hook postrun ${aliasOf(ctx.alloc.id)}`);
        failing(ctx.alloc.id, 'postrun');
      },
      destroy: async (ctx) => {
        trace.log(`hook destroy ${aliasOf(ctx.alloc.id)}`);
        failing(ctx.alloc.id, 'destroy');
      },
      // Update hooks take a while, so later updates queue behind them (one slot).
      update: (ctx) =>
        new Promise<void>((resolve) => {
          trace.log(`hook update ${aliasOf(ctx.alloc.id)} index ${ctx.alloc.allocModifyIndex}`);
          sched.at(hookRng.int(0, 300), resolve, owner);
        }),
    };
    const client = createClient({
      dataDir: dataDir(),
      nodeId: 'node-1',
      drivers: { [SIM_DRIVER]: driver },
      clock: sched.clock(owner),
      random: () => hostRng.next(),
      retry: { baseMs: 1000, staggerMs: 1000 },
      rpc: servers.rpc(sched, root.fork(`${owner}:rpc`), owner),
      hooks: [hook],
      // Some runs bound the wait for previous allocs.
      ...(waitBound ? { prevAllocWaitTimeoutMs: waitBound } : {}),
      ...(opts.inspect ? { inspect: opts.inspect } : {}),
      seams: { allocDirs: (r, id) => new SimAllocDir(r, id, dirEnv), fs, openStore: () => store },
      // The garbage collector's rounds run on the virtual clock; its disk reading must not touch
      // the real disk (a statfs completing in real time made the step count vary run to run).
      // The simulated disk never fills, so only the count limit collects.
      gcUsageReader: async () => ({ diskUsedPercent: 1, inodesUsedPercent: 1 }),
    });
    const subs = [
      client.bus.of('alloc.updated').subscribe((m) => checker.broadcast(m.alloc)),
      client.bus.of('alloc.state').subscribe((m) => trace.log(() => `alloc ${aliasOf(m.allocId)} ${m.from} -> ${m.to}`)),
      client.bus.of('task.event').subscribe((m) => {
        trace.log(() => `event ${aliasOf(m.allocId)}/${m.task} ${m.event.type}${m.event.displayMessage ? `: ${m.event.displayMessage}` : ''}`);
        checker.taskEvent(m.allocId, m.task, m.event);
      }),
      client.bus.of('client.error').subscribe((m) => trace.log(() => `client.error ${m.allocId ? aliasOf(m.allocId) : ''} ${m.error}`)),
      client.bus.of('alloc.health').subscribe((m) => trace.log(() => `health ${aliasOf(m.allocId)} ${m.healthy ? 'healthy' : `unhealthy: ${m.reason}`}`)),
      ...health.attach(client.bus),
    ];
    return {
      gen: g,
      owner,
      client,
      crash: () => {
        alive = false;
        driver.crash();
        sched.cancelOwner(owner);
      },
      unsubscribe: () => subs.forEach((s) => s.unsubscribe()),
    };
  };

  const jobSim = new JobSim({
    seed: opts.seed,
    now: () => sched.now(),
    log: (l) => trace.log(l),
    client: () => host!.client,
    specs,
    waitsFor: (id, prev, preempted) => {
      const f = checker.facts(id);
      f.prev = prev;
      f.preempted = preempted;
    },
    fail: (message, allocId) => checker.fail('CRASH', message, allocId),
  });

  const runnerOf = (a: number): AllocRunner | undefined => host!.client.runner(allocUuid({ a }));
  const watch = (what: string, p: Promise<unknown>, then?: () => void) => {
    p.then(
      () => {
        trace.log(`${what} resolved`);
        then?.();
      },
      (e) => trace.log(`${what} rejected: ${errText(e)}`),
    );
  };
  const ensureRemote = (ref: Ref) => {
    if (!('r' in ref)) return;
    const id = allocUuid(ref);
    if (servers.allocs.has(id)) return;
    servers.put({
      id,
      nodeId: 'node-2',
      jobId: `remote${ref.r}`,
      job: { id: `remote${ref.r}`, type: 'service', taskGroups: [{ name: 'g', tasks: [{ name: 'web', driver: 'raw_exec', config: {} }] }] },
      taskGroup: 'g',
      desiredStatus: 'run',
      clientStatus: 'running',
      allocModifyIndex: 1,
    });
  };

  const destroyResolved = (id: string) => {
    const f = checker.facts(id);
    if (f.destroyResolved) return;
    f.destroyResolved = true;
    const a = aliasOf(id);
    const live = table.live(id);
    if (live.length) checker.fail('I3', `${a}: destroy() resolved while pid ${live.map((p) => `${p.pid}(${p.task})`).join(',')} is alive`, id);
    if (host?.client.runner(id)) checker.fail('I3', `${a}: destroy() resolved but the client still has its runner`, id);
    if (disk.dirs.has(id)) checker.fail('I3', `${a}: destroy() resolved but its alloc dir is still there`, id);
  };

  const update = (a: number, change: (x: Allocation) => Allocation) => {
    const id = allocUuid({ a });
    const cur = serverAllocs.get(id);
    if (!cur) return trace.log(`  (a${a} never added)`);
    const next = change(cur);
    if (next.allocModifyIndex > cur.allocModifyIndex) serverAllocs.set(id, next);
    host!.client.updateAlloc(next);
  };

  const apply = (op: Op) => {
    switch (op.op) {
      case 'add': {
        const id = allocUuid({ a: op.a });
        specs.set(id, op.spec);
        const f = checker.facts(id);
        if (op.prev) {
          ensureRemote(op.prev);
          f.prev = allocUuid(op.prev);
        }
        for (const p of op.preempted ?? []) ensureRemote(p);
        f.preempted = (op.preempted ?? []).map(allocUuid);
        if (op.clientStatus) {
          f.terminalAtCrash = true; // defect 4: a terminal alloc must not run
          f.tags.add('client-terminal');
        }
        const alloc: Allocation = {
          id,
          nodeId: 'node-1',
          jobId: `job${op.a}`,
          job: {
            id: `job${op.a}`,
            type: op.spec.type,
            taskGroups: [
              {
                name: 'g',
                restartPolicy: op.spec.restart,
                ...(op.spec.health ? { update: healthGroupFields(op.spec).update } : {}),
                ...(op.spec.sticky ? { ephemeralDisk: { sticky: true } } : {}),
                ...(op.spec.shutdownDelayMs ? { shutdownDelayMs: op.spec.shutdownDelayMs } : {}),
                ...(op.spec.maxRunDurationMs ? { maxRunDurationMs: op.spec.maxRunDurationMs } : {}),
                tasks: op.spec.tasks.map((t) => ({
                  name: t.name,
                  driver: SIM_DRIVER,
                  config: {},
                  killTimeoutMs: t.killTimeoutMs,
                  killSignal: t.killSignal,
                  ...(t.shutdownDelayMs ? { shutdownDelayMs: t.shutdownDelayMs } : {}),
                  ...(t.hook ? { lifecycle: { hook: t.hook, sidecar: !!t.sidecar } } : {}),
                  ...(t.name === 'web' && op.spec.health ? { services: healthGroupFields(op.spec).webServices } : {}),
                })),
              },
            ],
          },
          taskGroup: 'g',
          desiredStatus: 'run',
          clientStatus: op.clientStatus ?? 'pending',
          allocModifyIndex: 1,
          ...(op.spec.maxRunDurationMs ? { createTime: sched.now() } : {}),
          ...(op.prev ? { previousAllocation: allocUuid(op.prev) } : {}),
          ...(op.spec.health ? { deploymentId: `dep${op.a}` } : {}),
          ...(op.preempted?.length ? { preemptedAllocations: op.preempted.map(allocUuid) } : {}),
        };
        serverAllocs.set(id, alloc);
        host!.client.addAlloc(alloc);
        return;
      }
      case 'stop':
        return update(op.a, (x) => ({ ...x, desiredStatus: 'stop', allocModifyIndex: x.allocModifyIndex + 1 }));
      case 'health': {
        const k = `${allocUuid({ a: op.a })}/web`;
        if (op.ok) sick.delete(k);
        else sick.add(k);
        trace.log(`check ${aliasOf(allocUuid({ a: op.a }))}/web ${op.ok ? 'passes' : 'fails'}`);
        return;
      }
      case 'burst':
        for (const a of op.as) {
          try {
            update(a, (x) => ({ ...x, desiredStatus: 'stop', allocModifyIndex: x.allocModifyIndex + 1 }));
          } catch (e) {
            trace.log(`  a${a}: ${errText(e)}`);
          }
        }
        return;
      case 'stopNoDelay':
        return update(op.a, (x) => ({ ...x, desiredStatus: 'stop', desiredTransition: { noShutdownDelay: true }, allocModifyIndex: x.allocModifyIndex + 1 }));
      case 'dropTask': {
        const id = allocUuid({ a: op.a });
        const cur = serverAllocs.get(id);
        const g = cur?.job.taskGroups[0];
        if (!cur || !g || g.tasks.length < 2 || !g.tasks.some((t) => t.name === op.task)) return trace.log(`  (nothing to drop)`);
        checker.taskDropped(id, op.task);
        return update(op.a, (x) => ({
          ...x,
          allocModifyIndex: x.allocModifyIndex + 1,
          job: { ...x.job, taskGroups: [{ ...g, tasks: g.tasks.filter((t) => t.name !== op.task) }] },
        }));
      }
      case 'reconnect': {
        const id = allocUuid({ a: op.a });
        const cur = serverAllocs.get(id);
        if (!cur || cur.desiredStatus !== 'run') return trace.log(`  (nothing to reconnect)`);
        update(op.a, (x) => ({ ...x, clientStatus: 'unknown', allocModifyIndex: x.allocModifyIndex + 1 }));
        // The servers take the client's word again once it reports.
        serverAllocs.set(id, { ...serverAllocs.get(id)!, clientStatus: cur.clientStatus });
        return;
      }
      case 'modify':
        return update(op.a, (x) => ({ ...x, allocModifyIndex: x.allocModifyIndex + 1 }));
      case 'stale':
        return update(op.a, (x) => ({ ...x, desiredStatus: 'run', allocModifyIndex: Math.max(0, x.allocModifyIndex - 1) }));
      case 'dup':
        return update(op.a, (x) => x);
      case 'destroy': {
        const r = runnerOf(op.a);
        if (!r) return trace.log(`  (no runner)`);
        const id = allocUuid({ a: op.a });
        checker.facts(id).destroyCalled = true;
        watch(`destroy a${op.a}`, r.destroy(), () => destroyResolved(id));
        return;
      }
      case 'restartTask': {
        const r = runnerOf(op.a);
        if (!r) return trace.log(`  (no runner)`);
        return watch(`restartTask a${op.a}/${op.task}`, r.restartTask(op.task, 'sim'));
      }
      case 'restartAll': {
        const r = runnerOf(op.a);
        if (!r) return trace.log(`  (no runner)`);
        checker.restartAll(allocUuid({ a: op.a }));
        return watch(`restartAll a${op.a}`, r.restartAll('sim'));
      }
      case 'signal': {
        const r = runnerOf(op.a);
        if (!r) return trace.log(`  (no runner)`);
        return watch(`signal a${op.a}/${op.task ?? '*'} ${op.sig}`, r.signal(op.task, op.sig));
      }
      case 'remoteStop': {
        const id = allocUuid({ r: op.r });
        const cur = servers.allocs.get(id)?.alloc;
        if (cur) servers.put({ ...cur, desiredStatus: 'stop', clientStatus: 'complete', allocModifyIndex: cur.allocModifyIndex + 1 });
        return;
      }
      case 'jobRegister':
      case 'jobUpdate':
      case 'jobStop':
      case 'jobTick':
        return jobSim.apply(op);
      case 'crash': {
        const old = host!;
        old.crash();
        old.unsubscribe();
        const persisted = persistedTerminal();
        const destroying = new Set((db.prepare('SELECT alloc_id FROM destroying').all() as Array<{ alloc_id: string }>).map((r) => r.alloc_id));
        for (const f of checker.allocs.values()) {
          const p = persisted.get(f.id);
          if (p) f.tags.add('restored');
          f.terminalAtCrash = !!p && isClientTerminalStatus(p.clientStatus) && !f.destroyCalled;
          if (f.terminalAtCrash) f.tags.add('client-terminal');
          f.destroyBeganAtCrash = f.destroyBegan && !f.destroyResolved;
        }
        // Restored task states resume the event grammar where the disk left it (before the
        // restore, which publishes its first events at once).
        for (const [id, a] of persisted) {
          for (const [task, st] of Object.entries(a.taskStates ?? {})) checker.resumeGrammar(id, task, st.events, st.state === 'running');
        }
        host = startHost();
        const h = host;
        trace.log(`host${h.gen} restores ${persisted.size} allocs`);
        // Restored task states resume the event grammar where the disk left it: before the
        // restore runs, which may already report events synchronously.
        for (const [id, a] of persisted) {
          for (const [task, st] of Object.entries(a.taskStates ?? {})) {
            // A task waiting out its shutdown_delay is pending, but its run is under way.
            // (Its run ends with Terminated, or with a failed reattach or driver failure.)
            const types = st.events.map((e) => e.type);
            const ended = Math.max(types.lastIndexOf('Terminated'), types.lastIndexOf('Failed Restoring Task'), types.lastIndexOf('Driver Failure'));
            const inDelay =
              st.state === 'pending' &&
              (types.includes('Waiting for shutdown delay') || types.includes('Skipping shutdown delay')) &&
              types.lastIndexOf('Started') > ended;
            checker.resumeGrammar(id, task, st.events, st.state === 'running' || inDelay);
          }
        }
        h.client.restore().then(
          (rs) => {
            trace.log(`restore resolved: ${rs.map((r) => aliasOf(r.allocId)).join(' ') || '-'}`);
            for (const id of persisted.keys()) {
              if (destroying.has(id)) {
                // Its destroy had been asked for: restore finishes it and returns without it.
                if (h.client.runner(id)) checker.fail('I5', `${aliasOf(id)}: its destroy was on record, yet restore brought it back`, id);
                const live = table.live(id);
                if (live.length) checker.fail('I3', `${aliasOf(id)}: restore finished its destroy while pid ${live.map((p) => p.pid).join(',')} is alive`, id);
              } else if (!h.client.runner(id) && !checker.facts(id).destroyResolved)
                checker.fail('I5', `${aliasOf(id)} was persisted but did not come back on restore`, id);
            }
          },
          (e) => checker.fail('CRASH', `restore rejected: ${errText(e)}`),
        );
        return;
      }
    }
  };

  host = startHost();
  try {
    for (const [i, op] of ops.entries()) {
      if (!(await sched.runUntil(EPOCH + op.at, MAX_STEPS))) {
        checker.fail('LIVELOCK', `more than ${MAX_STEPS} steps`);
        break;
      }
      trace.log(`op#${i} ${describe(op)}`);
      try {
        apply(op);
      } catch (e) {
        trace.log(`  -> ${errText(e)}`);
      }
    }
    const lastAt = ops.length ? ops[ops.length - 1]!.at : 0;
    if (!(await sched.runUntil(EPOCH + lastAt + SETTLE_MS, MAX_STEPS))) checker.fail('LIVELOCK', `more than ${MAX_STEPS} steps`);
    // Tear down: destroy everything, then nothing of anything may be left.
    trace.log('final: destroy every alloc');
    const h = host;
    const pending = new Set<string>();
    for (const r of h.client.runners()) {
      pending.add(r.allocId);
      checker.facts(r.allocId).destroyCalled = true;
      watch(`destroy ${aliasOf(r.allocId)}`, r.destroy(), () => {
        pending.delete(r.allocId);
        destroyResolved(r.allocId);
      });
    }
    if (!(await sched.runUntil(sched.now() + DRAIN_MS, MAX_STEPS))) checker.fail('LIVELOCK', `more than ${MAX_STEPS} steps`);
    for (const id of pending) checker.fail('I3', `${aliasOf(id)}: destroy() never resolved`, id);
    for (const p of table.allLive())
      checker.fail('I5', `pid ${p.pid} (${aliasOf(p.allocId)}/${p.task}) outlived every alloc's destroy: nobody owns it`, p.allocId);
    for (const id of persistedTerminal().keys())
      if (checker.facts(id).destroyResolved) checker.fail('I3', `${aliasOf(id)}: state-store row left after destroy()`, id);
    await h.client.shutdown();
    await sched.runUntil(sched.now() + 1000, MAX_STEPS);
    const left = sched.pending(h.owner);
    if (left) checker.fail('LEAK', `${left} timers of the live host left after shutdown`);
    h.unsubscribe();
  } catch (e) {
    checker.fail('CRASH', `simulation threw: ${errText(e)}`);
  } finally {
    db.close();
  }
  trace.log(`end: ${checker.violations.length} violation(s), ${sched.steps} steps`);
  return { seed: opts.seed, ops, violations: checker.violations, trace: trace.text(), steps: sched.steps, virtualMs: sched.now() - EPOCH };
}

/** One line for an op, as the trace shows it. */
export function describe(op: Op): string {
  const { at: _at, op: kind, ...rest } = op;
  if (kind === 'add') {
    const o = op as Extract<Op, { op: 'add' }>;
    const ref = (r: Ref) => ('a' in r ? `a${r.a}` : `r${r.r}`);
    const tasks = o.spec.tasks
      .map(
        (t) => `${t.name}${t.hook ? `[${t.hook}${t.sidecar ? '+sidecar' : ''}]` : ''}${t.lifetimeMs !== undefined ? `~${t.lifetimeMs}ms=>${t.exitCode}` : ''}`,
      )
      .join(',');
    return `add a${o.a} ${o.spec.type} {${tasks}} restart=${o.spec.restart.attempts}/${o.spec.restart.mode}${o.prev ? ` prev=${ref(o.prev)}` : ''}${o.preempted ? ` preempts=${o.preempted.map(ref).join(',')}` : ''}${o.clientStatus ? ` clientStatus=${o.clientStatus}` : ''}`;
  }
  return `${kind} ${JSON.stringify(rest)}`;
}
