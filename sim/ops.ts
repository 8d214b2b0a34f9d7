/**
 * The operations a simulation runs, and how a seed generates them. An op list is plain JSON:
 * a failure prints it (shrunk) so it can be pasted into a regression spec as it is.
 * @module
 */
import type { RestartPolicy } from '../model/types.ts';
import { withJobOps, type JobOp } from './jobs.ts';
import { Rng } from './random.ts';

/** One task of a generated alloc, and how its processes behave. */
export interface TaskSpec {
  name: string;
  hook?: 'prestart' | 'poststart' | 'poststop';
  sidecar?: boolean;
  killTimeoutMs: number;
  killSignal: string;
  /** A process exits by itself after about this long; absent: runs until killed. */
  lifetimeMs?: number;
  exitCode: number;
  /** Nomad's task `shutdown_delay`. */
  shutdownDelayMs?: number;
}

/** A generated allocation's group. */
export interface AllocSpec {
  type: 'service' | 'batch';
  tasks: TaskSpec[];
  restart: RestartPolicy;
  /** Sticky ephemeral disk: a replacement moves the previous alloc's data. */
  sticky?: boolean;
  /** Host hooks that fail: prerun fails the alloc, the others only report. */
  failingHooks?: Array<'prerun' | 'postrun' | 'destroy'>;
  /** Nomad's group `shutdown_delay`. */
  shutdownDelayMs?: number;
  /** Nomad's `max_run_duration` (batch only), from the add. */
  maxRunDurationMs?: number;
  /** A deployment's health settings and a script check on the `web` task (sim/health.ts). */
  health?: HealthSpec;
  /** A job alloc placed in a deployment (sim/jobs.ts): its update block's `min_healthy_time`, no checks. */
  deploymentMinHealthyMs?: number;
}

/** Another alloc, on this node (`a`) or another (`r`, through the fake servers). */
export type Ref = { a: number } | { r: number };

/** One operation, at a virtual time in ms from the start. */
export type Op =
  | { at: number; op: 'add'; a: number; spec: AllocSpec; prev?: Ref; preempted?: Ref[]; clientStatus?: 'complete' | 'failed' | 'lost' }
  | { at: number; op: 'stop' | 'modify' | 'stale' | 'dup' | 'destroy' | 'restartAll'; a: number }
  | { at: number; op: 'restartTask'; a: number; task: string }
  | { at: number; op: 'signal'; a: number; task?: string; sig: string }
  | { at: number; op: 'burst'; as: number[] }
  | { at: number; op: 'crash' }
  | { at: number; op: 'remoteStop'; r: number }
  /** A stop that skips every shutdown delay (`desiredTransition.noShutdownDelay`). */
  | { at: number; op: 'stopNoDelay'; a: number }
  /** An update without one of the alloc's tasks ("update missing task"). */
  | { at: number; op: 'dropTask'; a: number; task: string }
  /** The servers lost touch and marked the alloc unknown; now an update reconnects it. */
  | { at: number; op: 'reconnect'; a: number }
  /** Jobs through berth's scheduler (sim/jobs.ts): register, update, stop, broker tick. */
  | JobOp
  /** The `web` task's check starts passing (`ok`) or failing. */
  | { at: number; op: 'health'; a: number; ok: boolean };

const TASK_NAMES = ['web', 'db', 'log', 'init', 'tail'];

/** A random group: tasks with lifetimes, hooks, restart policy. */
export function genSpec(r: Rng): AllocSpec {
  const type = r.chance(0.3) ? 'batch' : 'service';
  const n = r.int(1, 3);
  const tasks: TaskSpec[] = [];
  for (let i = 0; i < n; i++) {
    const t: TaskSpec = {
      name: TASK_NAMES[i]!,
      killTimeoutMs: r.pick([50, 200, 1000, 3000]),
      killSignal: r.pick(['SIGINT', 'SIGTERM', 'SIGINT']),
      exitCode: r.chance(0.6) ? 0 : 1,
    };
    if (i > 0 && r.chance(0.35)) {
      t.hook = r.pick(['prestart', 'poststart', 'poststop'] as const);
      if (t.hook !== 'poststop' && r.chance(0.5)) t.sidecar = true;
    }
    const finite = type === 'batch' ? r.chance(0.85) : r.chance(0.3);
    if (finite || (t.hook && !t.sidecar)) t.lifetimeMs = r.int(10, 4000);
    tasks.push(t);
  }
  const spec: AllocSpec = {
    type,
    tasks,
    restart: { attempts: r.int(0, 3), delayMs: r.pick([50, 300, 1500]), intervalMs: r.pick([2000, 10_000, 60_000]), mode: r.chance(0.5) ? 'fail' : 'delay' },
  };
  if (r.chance(0.25)) spec.sticky = true;
  const failing = (['prerun', 'postrun', 'destroy'] as const).filter(() => r.chance(0.04));
  if (failing.length) spec.failingHooks = failing;
  return spec;
}

/** Generates a seed's op list. */
export function generateOps(seed: number): Op[] {
  const r = new Rng(seed).fork('ops');
  const ops: Op[] = [];
  let t = 0;
  let nextA = 0;
  let nextR = 0;
  const live: number[] = [];
  const gone: number[] = [];
  const remotes: number[] = [];
  const gap = () => (r.chance(0.6) ? r.int(0, 300) : r.chance(0.7) ? r.int(300, 3000) : r.int(3000, 20_000));
  const count = r.int(4, 22);
  for (let i = 0; i < count; i++) {
    t += gap();
    const roll = r.next();
    if (live.length === 0 || roll < 0.28) {
      const a = nextA++;
      const op: Extract<Op, { op: 'add' }> = { at: t, op: 'add', a, spec: genSpec(r) };
      if (live.length && r.chance(0.35)) op.prev = { a: r.pick(live) };
      else if (r.chance(0.1)) op.prev = { r: nextR++ };
      if (r.chance(0.3)) {
        const pre: Ref[] = [];
        for (const x of live) if (r.chance(0.5) && (!op.prev || !('a' in op.prev) || op.prev.a !== x)) pre.push({ a: x });
        if (r.chance(0.4)) pre.push({ r: nextR++ });
        if (pre.length) op.preempted = pre;
      }
      if (r.chance(0.05)) op.clientStatus = r.pick(['complete', 'failed', 'lost'] as const);
      ops.push(op);
      // A replacement or a preemptor usually comes with its victims being stopped.
      const victims = [...(op.prev && 'a' in op.prev ? [op.prev.a] : []), ...(op.preempted ?? []).flatMap((p) => ('a' in p ? [p.a] : []))];
      if (victims.length && r.chance(0.7)) {
        t += r.int(0, 200);
        ops.push(victims.length > 1 && r.chance(0.6) ? { at: t, op: 'burst', as: victims } : { at: t, op: 'stop', a: r.pick(victims) });
      }
      for (const ref of [op.prev, ...(op.preempted ?? [])]) if (ref && 'r' in ref) remotes.push(ref.r);
      live.push(a);
      continue;
    }
    // Now and then an op reaches an alloc that is already being (or was) destroyed.
    const a = gone.length && r.chance(0.08) ? r.pick(gone) : r.pick(live);
    if (roll < 0.4) ops.push({ at: t, op: 'stop', a });
    else if (roll < 0.48) ops.push({ at: t, op: r.pick(['modify', 'stale', 'dup'] as const), a });
    else if (roll < 0.58) {
      ops.push({ at: t, op: 'destroy', a });
      if (live.includes(a)) live.splice(live.indexOf(a), 1);
      gone.push(a);
    } else if (roll < 0.65) ops.push({ at: t, op: 'restartTask', a, task: 'web' });
    else if (roll < 0.7) ops.push({ at: t, op: 'restartAll', a });
    else if (roll < 0.76) ops.push({ at: t, op: 'signal', a, ...(r.chance(0.5) ? { task: 'web' } : {}), sig: r.pick(['SIGHUP', 'SIGUSR1', 'SIGTERM']) });
    else if (roll < 0.84 && remotes.length) ops.push({ at: t, op: 'remoteStop', r: r.pick(remotes) });
    else if (roll < 0.93) ops.push({ at: t, op: 'crash' });
    else if (live.length > 1) ops.push({ at: t, op: 'burst', as: live.filter(() => r.chance(0.6)) });
  }
  return withJobOps(seed, withHealthOps(seed, withStopPathOps(seed, ops)), genSpec);
}

/**
 * Adds the stop-path behaviours (issue 14) from a stream of their own, so the ops above stay what
 * they were for every seed: shutdown delays and max_run_duration on some allocs, and now and then
 * a stop without delays, an update that drops a task, or a reconnect after a while.
 */
function withStopPathOps(seed: number, ops: Op[]): Op[] {
  const r = new Rng(seed).fork('stop-path');
  const extra: Op[] = [];
  for (const op of ops) {
    if (op.op !== 'add') continue;
    for (const t of op.spec.tasks) if (r.chance(0.2)) t.shutdownDelayMs = r.pick([100, 1000, 5000]);
    if (r.chance(0.15)) op.spec.shutdownDelayMs = r.pick([200, 2000]);
    if (op.spec.type === 'batch' && r.chance(0.3)) op.spec.maxRunDurationMs = r.pick([300, 2000, 8000]);
    const roll = r.next();
    const at = op.at + r.int(50, 4000);
    if (roll < 0.12) extra.push({ at, op: 'stopNoDelay', a: op.a });
    else if (roll < 0.22 && op.spec.tasks.length > 1) extra.push({ at, op: 'dropTask', a: op.a, task: r.pick(op.spec.tasks.slice(1)).name });
    else if (roll < 0.34) extra.push({ at, op: 'reconnect', a: op.a });
  }
  if (!extra.length) return ops;
  // Merge by time; an extra op goes after the ops of the same instant.
  const out = [...ops];
  for (const e of extra) {
    const i = out.findIndex((o) => o.at > e.at);
    out.splice(i < 0 ? out.length : i, 0, e);
  }
  return out;
}

/** The health settings of a generated alloc (durations in virtual ms). */
export interface HealthSpec {
  checkIntervalMs: number;
  minHealthyMs: number;
  deadlineMs: number;
  /** check_restart's limit (grace 0), when the check restarts its task. */
  restartLimit?: number;
}

/**
 * Adds health settings (sim/health.ts) to some service allocs with a main `web` task, and ops
 * that flip its check, from a stream of their own: every other op of a seed stays what it was.
 */
function withHealthOps(seed: number, ops: Op[]): Op[] {
  const r = new Rng(seed).fork('health');
  const extra: Op[] = [];
  for (const op of ops) {
    if (op.op !== 'add' || op.spec.type !== 'service' || op.clientStatus) continue;
    const web = op.spec.tasks.find((t) => t.name === 'web');
    if (!web || web.hook || !r.chance(0.3)) continue;
    op.spec.health = {
      checkIntervalMs: r.pick([1000, 3000]),
      minHealthyMs: r.pick([500, 2000, 6000]),
      deadlineMs: r.pick([4000, 20_000, 60_000]),
      ...(r.chance(0.3) ? { restartLimit: r.pick([1, 3]) } : {}),
    };
    let at = op.at;
    for (let i = r.int(0, 3); i > 0; i--) {
      at += r.int(200, 8000);
      extra.push({ at, op: 'health', a: op.a, ok: r.chance(0.5) });
    }
  }
  if (!extra.length) return ops;
  const out = [...ops];
  for (const e of extra) {
    const i = out.findIndex((o) => o.at > e.at);
    out.splice(i < 0 ? out.length : i, 0, e);
  }
  return out;
}

/** The alloc id of a local (`a`) or remote (`r`) alloc number: a valid 36-character UUID. */
export function allocUuid(ref: Ref): string {
  const n = 'a' in ref ? ref.a : ref.r;
  return `${'a' in ref ? '0000000a' : '0000000b'}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** The short name of an alloc id in traces (`a3`, `r1`). */
export function aliasOf(id: string): string {
  const m = /^0000000([abc])-0000-4000-8000-([0-9a-f]{12})$/.exec(id);
  return m ? `${m[1] === 'a' ? 'a' : m[1] === 'b' ? 'r' : 'j'}${parseInt(m[2]!, 16)}` : id;
}
