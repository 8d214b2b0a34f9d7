/**
 * The invariant checker: I1-I6 of docs/invariants.md and I7 (the stop path, docs/nomad-parity.md), checked as things happen against the
 * simulated process table (the truth), the bus, the simulated disk and the state store.
 * @module
 */
import { isClientTerminalStatus } from '../model/status.ts';
import type { Allocation, TaskEvent } from '../model/types.ts';
import { aliasOf } from './ops.ts';
import type { ProcessTable, SimProcess } from './processes.ts';

/** One broken invariant. */
export interface Violation {
  invariant: 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6' | 'I7' | 'I8' | 'LEAK' | 'LIVELOCK' | 'CRASH';
  message: string;
  at: number;
  /** What the checker knew about the alloc concerned (restored, failed restore, ...). */
  tags: string[];
}

/** Per task: where it stands in Nomad's event grammar. */
interface Grammar {
  seen: boolean;
  setup: boolean;
  running: boolean;
  killing: boolean;
  canRestart: boolean;
}

const freshGrammar = (): Grammar => ({ seen: false, setup: false, running: false, killing: false, canRestart: false });

/** What the checker knows about one alloc. */
export interface AllocFacts {
  id: string;
  prev?: string;
  preempted: string[];
  /** Highest allocModifyIndex a listener saw. */
  maxIndex: number;
  terminalSeen: boolean;
  destroyCalled: boolean;
  destroyResolved: boolean;
  /** A kill reached one of its processes after destroy was called. */
  destroyBegan: boolean;
  /** Its destroy had begun killing when the host crashed: restore must not start it again. */
  destroyBeganAtCrash: boolean;
  /** Task names broadcast dead (since the last restartAll). */
  finished: Set<string>;
  /** When restartAll was last asked for: a task that finished before then may run again. */
  restartAllAt: number;
  /**
   * When each restartAll was asked for. Requests that arrive during one group restart's delay and
   * hooks are served together, and the revival's "Restart Signaled" carries the time of the
   * request that made it (Nomad stamps the event when it is asked for), not the latest one.
   */
  restartAllTimes: Set<number>;
  /** Persisted as client-terminal when the host crashed: restore must run nothing of it. */
  terminalAtCrash: boolean;
  grammar: Map<string, Grammar>;
  /** Circumstances a violation about this alloc is reported with (see {@link Violation.tags}). */
  tags: Set<string>;
  /**
   * Tasks an update dropped ("update missing task") and how many spawns each may still make: one
   * when a start was already under way at the drop (its process may exist before the start
   * returns; the kill then ends it), else none.
   */
  dropped: Map<string, number>;
}

/** The checker. `now` stamps violations with virtual time. */
export class Checker {
  readonly violations: Violation[] = [];
  readonly allocs = new Map<string, AllocFacts>();
  /** Remote allocs (on other nodes): terminal as the fake servers know them. */
  remoteTerminal: (id: string) => boolean = () => true;

  constructor(
    private readonly table: ProcessTable,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
  ) {
    table.observers.push({ spawned: (p) => this.#spawned(p), launched: (a, t) => this.#launched(a, t) });
  }

  fail(invariant: Violation['invariant'], message: string, allocId?: string): void {
    const tags = allocId ? [...this.facts(allocId).tags].sort() : [];
    this.violations.push({ invariant, message, at: this.now(), tags });
    this.log(`VIOLATION ${invariant}: ${message}`);
  }

  facts(id: string): AllocFacts {
    let f = this.allocs.get(id);
    if (!f) {
      f = {
        id,
        preempted: [],
        maxIndex: -1,
        terminalSeen: false,
        destroyCalled: false,
        destroyResolved: false,
        destroyBegan: false,
        destroyBeganAtCrash: false,
        finished: new Set(),
        restartAllAt: -Infinity,
        restartAllTimes: new Set(),
        terminalAtCrash: false,
        grammar: new Map(),
        tags: new Set(),
        dropped: new Map(),
      };
      this.allocs.set(id, f);
    }
    return f;
  }

  /** A listener saw `alloc` (the bus's alloc.updated, which is what updates$ and watchers see). */
  broadcast(alloc: Allocation): void {
    const f = this.facts(alloc.id);
    const a = aliasOf(alloc.id);
    // I1: a task broadcast dead has no process left.
    for (const [task, st] of Object.entries(alloc.taskStates ?? {})) {
      if (st.state !== 'dead') continue;
      const live = this.table.live(alloc.id, task);
      if (live.length) this.fail('I1', `${a}/${task} broadcast dead while pid ${live.map((p) => p.pid).join(',')} is alive`, alloc.id);
      // A view still showing the death a restartAll already revived is old news.
      if ((st.finishedAt ?? Infinity) > f.restartAllAt) f.finished.add(task);
    }
    // The client status is Nomad's at every moment (failed while a sibling is being killed): what
    // must not happen early is a replacement's start, which I2 checks at every spawn.
    // I7: `unknown` is the servers' word for an alloc they lost touch with; the client never says it.
    if (alloc.clientStatus === 'unknown') this.fail('I7', `${a} broadcast client status unknown`, alloc.id);
    // I4: forward only.
    if (alloc.allocModifyIndex < f.maxIndex) this.fail('I4', `${a} allocModifyIndex went down ${f.maxIndex} -> ${alloc.allocModifyIndex}`, alloc.id);
    f.maxIndex = Math.max(f.maxIndex, alloc.allocModifyIndex);
    const terminal = isClientTerminalStatus(alloc.clientStatus);
    if (f.terminalSeen && !terminal) this.fail('I4', `${a} went from a terminal client status back to ${alloc.clientStatus}`, alloc.id);
    f.terminalSeen = terminal;
  }

  /** restartAll was asked for: terminal may go back, dead tasks may run again. */
  restartAll(id: string): void {
    const f = this.facts(id);
    f.terminalSeen = false;
    f.finished.clear();
    f.restartAllAt = this.now();
    f.restartAllTimes.add(f.restartAllAt);
    f.terminalAtCrash = false;
  }

  /** I6: each task event, in order. */
  taskEvent(allocId: string, task: string, ev: TaskEvent): void {
    const f = this.facts(allocId);
    let g = f.grammar.get(task);
    if (!g) f.grammar.set(task, (g = freshGrammar()));
    const where = `${aliasOf(allocId)}/${task}`;
    // A restartAll revives the tasks dead when its restarts are applied, after the group's
    // shutdown_delay and the preTaskRestart hooks: one that died meanwhile is revived too, and
    // says so with "Restart Signaled", stamped with the time of the request that revives it (an
    // earlier one when two came during the same delay). A single task's restart revives nothing.
    if (ev.type === 'Restart Signaled' && f.restartAllTimes.has(ev.time)) f.finished.delete(task);
    if (ev.type === 'Failed Restoring Task') f.tags.add('failed-restore');
    if (ev.type === 'Setup Failure' && f.tags.has('restored')) f.tags.add('restored-setup-failure');
    if (ev.type === 'Terminated' && /failed to wait/.test(ev.displayMessage) && f.tags.has('restored')) f.tags.add('restored-failed-wait');
    if (!g.seen && ev.type !== 'Received') this.fail('I6', `${where}: first event is ${ev.type}, not Received`, allocId);
    g.seen = true;
    switch (ev.type) {
      case 'Task Setup':
        g.setup = true;
        break;
      case 'Started':
        if (!g.setup) this.fail('I6', `${where}: Started without Task Setup before it`, allocId);
        if (g.running) this.fail('I6', `${where}: Started again without Terminated`, allocId);
        g.setup = false;
        g.running = true;
        g.canRestart = false;
        break;
      case 'Terminated':
        if (!g.running) this.fail('I6', `${where}: Terminated without a start it ends`, allocId);
        g.running = false;
        g.canRestart = true;
        break;
      case 'Killing':
        g.killing = true;
        break;
      case 'Killed':
        // Nomad's "update missing task": the Killed event is the kill request itself (it stands
        // where Killing would); the kill then ends with Terminated and Killed as usual.
        if (ev.details.kill_reason === 'update missing task') {
          g.killing = true;
          break;
        }
        if (!g.killing) this.fail('I6', `${where}: Killed without Killing before it`, allocId);
        if (g.running) this.fail('I6', `${where}: Killed while its run has not Terminated`, allocId);
        g.killing = false;
        break;
      case 'Driver Failure':
      case 'Failed Restoring Task':
        g.running = false;
        g.canRestart = true;
        break;
      case 'Setup Failure':
        // A restored task's run outlives a setup failure: it is killed next (Killing,
        // Terminated, Killed). A task that never ran has no run to end.
        g.canRestart = true;
        break;
      case 'Restarting':
        if (!g.canRestart) this.fail('I6', `${where}: Restarting without Terminated before it`, allocId);
        g.canRestart = false;
        break;
      case 'Restart Signaled':
        // restartAll revives a dead task: its next run starts afresh.
        g.killing = false;
        break;
    }
  }

  /** An update dropped `task`: from now on it may not start (but a start under way may finish). */
  taskDropped(allocId: string, task: string): void {
    const f = this.facts(allocId);
    if (f.dropped.has(task)) return;
    f.dropped.set(task, f.grammar.get(task)?.setup ? 1 : 0);
  }

  /** After a restore: a task's grammar resumes from the events its restored state holds. */
  resumeGrammar(allocId: string, task: string, events: TaskEvent[], running: boolean): void {
    const g: Grammar = { seen: events.length > 0, setup: false, running, killing: false, canRestart: false };
    for (const ev of events) {
      if (ev.type === 'Killing' || (ev.type === 'Killed' && ev.details.kill_reason === 'update missing task')) g.killing = true;
      else if (ev.type === 'Killed') g.killing = false;
      if (ev.type === 'Terminated' || ev.type === 'Driver Failure') g.canRestart = true;
      if (ev.type === 'Started' || ev.type === 'Restarting') g.canRestart = false;
      if (ev.type === 'Task Setup') g.setup = true;
      if (ev.type === 'Started') g.setup = false;
    }
    this.facts(allocId).grammar.set(task, g);
  }

  #spawned(p: SimProcess): void {
    const f = this.facts(p.allocId);
    const where = `${aliasOf(p.allocId)}/${p.task}`;
    // I2: never beside a previous or preempted alloc's live process.
    for (const other of [...(f.prev ? [f.prev] : []), ...f.preempted]) {
      const live = this.table.live(other);
      if (live.length) this.fail('I2', `${where} started (pid ${p.pid}) while ${aliasOf(other)} still runs pid ${live.map((x) => x.pid).join(',')}`, other);
      else if (!this.allocs.has(other) && !this.remoteTerminal(other))
        this.fail('I2', `${where} started (pid ${p.pid}) while remote ${aliasOf(other)} is not terminal`, p.allocId);
    }
    // I5: no task runs twice; a finished task never runs again; nothing of a destroyed or
    // client-terminal alloc runs.
    const twins = this.table.live(p.allocId, p.task).filter((x) => x.pid !== p.pid);
    if (twins.length) this.fail('I5', `${where} runs twice: pid ${p.pid} beside pid ${twins.map((x) => x.pid).join(',')}`, p.allocId);
    if (f.finished.has(p.task)) this.fail('I5', `${where} ran again (pid ${p.pid}) after it was reported dead`, p.allocId);
    // I7: a task an update dropped never starts again ("update missing task").
    const allowed = f.dropped.get(p.task);
    if (allowed !== undefined) {
      if (allowed > 0) f.dropped.set(p.task, allowed - 1);
      else this.fail('I7', `${where} started (pid ${p.pid}) after an update dropped it`, p.allocId);
    }
    if (f.destroyResolved) this.fail('I3', `${where} started (pid ${p.pid}) after destroy() resolved`, p.allocId);
  }

  /**
   * A live host decided to start a task. (A process an executor of a dead host spawns after the
   * crash is that host's start finishing, not a new one.)
   */
  #launched(allocId: string, task: string): void {
    const f = this.facts(allocId);
    const where = `${aliasOf(allocId)}/${task}`;
    if (f.terminalAtCrash) this.fail('I5', `${where} started after a restore of a client-terminal alloc`, allocId);
    if (f.destroyBeganAtCrash) this.fail('I5', `${where} started after a restore, though its destroy had begun before the crash`, allocId);
  }
}
