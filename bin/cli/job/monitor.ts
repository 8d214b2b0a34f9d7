/**
 * Following an evaluation and the allocations it placed, as `nomad job run` does: the
 * evaluation's outcome (placements, preemptions, what could not be placed), then each new alloc's
 * status until it runs (or, for a batch job, ends), and who it waits for on the way (berth's
 * `Client` topic of the event stream: one line per watched alloc).
 * @module
 */
import { isClientTerminalStatus, type ClientStatus } from '../../../index.ts';
import type { CliIO } from '../io.ts';
import { writeLine } from '../io.ts';
import type { AgentApi } from '../nomad/api.ts';
import { allocMetricLines, failedGroupHeader } from '../nomad/alloc-metrics.ts';
import { short } from '../nomad/table.ts';
import { CHROOT_PROGRESS_EVERY_MS, chrootProgressLine, type ChrootProgressCounts } from '../run/chroot-progress.ts';

type Obj = Record<string, unknown>;
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** What an evaluation ended with. */
export interface EvalOutcome {
  status: string;
  /** The evaluation's create index: events after it concern what it did. */
  createIndex: number;
  placed: string[];
  failed: boolean;
}

/** Waits for the evaluation to finish and prints what it did. */
export async function monitorEval(api: AgentApi, io: CliIO, evalId: string): Promise<EvalOutcome> {
  const out = (s: string) => writeLine(io.stdout, s);
  out(`==> ${now()}: Monitoring evaluation "${short(evalId)}"`);
  let index = 0;
  let ev: Obj;
  for (;;) {
    const r = await api.get<Obj>(`/v1/evaluation/${evalId}?index=${index}&wait=30s`);
    ev = r.body;
    index = r.index;
    if (ev.Status !== 'pending') break;
  }
  out(`    ${now()}: Evaluation triggered by job "${ev.JobID}"`);
  const allocs = (await api.get<Obj[]>(`/v1/evaluation/${evalId}/allocations`)).body;
  for (const a of allocs) out(`    ${now()}: Allocation "${short(a.ID)}" created: node "${short(a.NodeID)}", group "${a.TaskGroup}"`);
  const preempted = ((ev.PlanAnnotations as Obj | null)?.PreemptedAllocs as Obj[] | undefined) ?? [];
  for (const p of preempted) out(`    ${now()}: Allocation "${short(p.ID)}" preempted by allocation "${short(p.PreemptedByAllocation)}"`);
  const failed = ev.FailedTGAllocs as Record<string, Obj> | null;
  out(`    ${now()}: Evaluation status changed: "pending" -> "${ev.Status}"`);
  if (failed) {
    // As nomad's monitor: the reasons per group, then the blocked eval that waits for room.
    out(`==> ${now()}: Evaluation "${short(evalId)}" finished with status "${ev.Status}" but failed to place all allocations:`);
    for (const [g, f] of Object.entries(failed)) {
      out(`    ${now()}: ${failedGroupHeader(g, f)}`);
      for (const line of allocMetricLines(f, '      ')) out(line);
    }
    if (ev.BlockedEval) out(`    ${now()}: Evaluation "${short(ev.BlockedEval)}" waiting for additional capacity to place remainder`);
  } else out(`==> ${now()}: Evaluation "${short(evalId)}" finished with status "${ev.Status}"`);
  return { status: String(ev.Status), createIndex: Number(ev.CreateIndex ?? 0), placed: allocs.map((a) => String(a.ID)), failed: !!failed };
}

/**
 * What a command that made an evaluation does unless `-detach` (job scale, dispatch, periodic
 * force): the evaluation shown, then its new allocations followed. Resolves with the exit code:
 * 1 when an allocation failed, 2 when some could not be placed, else 0.
 */
export async function monitorAndFollow(api: AgentApi, io: CliIO, evalId: string): Promise<number> {
  const outcome = await monitorEval(api, io, evalId);
  if (!(await followAllocs(api, io, outcome.placed, outcome.createIndex - 1))) return 1;
  return outcome.failed ? 2 : 0;
}

/**
 * Prints each alloc's status changes until every one runs (service) or ended (batch); resolves
 * true when none failed.
 */
export async function followAllocs(api: AgentApi, io: CliIO, allocIds: string[], sinceIndex: number): Promise<boolean> {
  if (allocIds.length === 0) return true;
  const out = (s: string) => writeLine(io.stdout, s);
  const ac = new AbortController();
  const watching = followWatchers(api, io, new Set(allocIds), sinceIndex, ac.signal);
  const seen = new Map<string, string>();
  const shownEvents = new Map<string, number>();
  let index = 0;
  try {
    for (;;) {
      const r = await api.get<Obj[]>(`/v1/allocations?index=${index}&wait=30s`);
      index = r.index;
      let done = 0;
      let failed = 0;
      for (const a of r.body) {
        const id = String(a.ID);
        if (!allocIds.includes(id)) continue;
        const status = String(a.ClientStatus);
        if (seen.get(id) !== status) {
          out(`    ${now()}: Allocation "${short(id)}" status "${seen.get(id) ?? 'created'}" -> "${status}"`);
          seen.set(id, status);
        }
        // Task events as they come, so a long step (a chroot build, a download) is not silence.
        for (const [task, ts] of Object.entries((a.TaskStates as Record<string, Obj> | null) ?? {})) {
          const events = (ts.Events as Obj[] | null) ?? [];
          const key = `${id}/${task}`;
          for (const e of events.slice(shownEvents.get(key) ?? 0)) out(`    ${now()}: Task "${task}" of allocation "${short(id)}": ${taskEventText(e)}`);
          shownEvents.set(key, events.length);
        }
        const terminal = isClientTerminalStatus(status as ClientStatus);
        if (status === 'failed' || status === 'lost') failed++;
        if (terminal || (status === 'running' && a.JobType !== 'batch' && a.JobType !== 'sysbatch')) done++;
      }
      if (done === allocIds.length) return failed === 0;
    }
  } finally {
    ac.abort();
    await watching;
  }
}

/** A task event as one line: its type, and its message when that says more. */
export function taskEventText(e: Obj): string {
  const msg = String(e.DisplayMessage ?? '');
  return msg && msg !== e.Type ? `${e.Type}: ${msg}` : String(e.Type);
}

/**
 * Prints the watcher, migration and chroot-progress lines of the event stream's `Client` topic
 * for `allocs` until `signal`.
 */
async function followWatchers(api: AgentApi, io: CliIO, allocs: Set<string>, sinceIndex: number, signal: AbortSignal): Promise<void> {
  const keys = [...allocs].map((a) => `topic=Client:${a}`).join('&');
  const progressAt = new Map<string, number>();
  try {
    const res = await api.raw('GET', `/v1/event/stream?index=${sinceIndex}&${keys}`, undefined, signal);
    let buf = '';
    for await (const chunk of res) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const msg = (JSON.parse(line) as { Events?: Array<{ Payload: { Message: Obj } }> }).Events?.[0]?.Payload.Message;
        if (!msg) continue;
        if (msg.type === 'watcher.waiting')
          writeLine(
            io.stdout,
            `    ${now()}: Allocation "${short(msg.allocId)}" waiting for ${msg.role} allocation "${short(msg.watchedAllocId)}" to stop (watcher ${short(msg.watchedAllocId)}, ${msg.mode})`,
          );
        else if (msg.type === 'watcher.released')
          writeLine(
            io.stdout,
            `    ${now()}: Allocation "${short(msg.allocId)}" done waiting for allocation "${short(msg.watchedAllocId)}" (${msg.reason ?? 'terminal'})`,
          );
        else if (msg.type === 'chroot.progress') {
          // A long chroot build is not silence: a line every couple of seconds per task.
          const key = `${msg.allocId}/${msg.task}`;
          const at = Date.now();
          const last = progressAt.get(key);
          if (last !== undefined && at - last < CHROOT_PROGRESS_EVERY_MS) continue;
          progressAt.set(key, at);
          writeLine(
            io.stdout,
            `    ${now()}: Task "${msg.task}" of allocation "${short(msg.allocId)}": ${chrootProgressLine(msg as unknown as ChrootProgressCounts)}`,
          );
        } else if (msg.type === 'migration.done')
          writeLine(io.stdout, `    ${now()}: Allocation "${short(msg.allocId)}" migrated data from "${short(msg.previousAllocId)}"`);
      }
    }
  } catch {
    // ended by the signal, or the agent went away: the status loop reports what matters
  }
}

/**
 * When the placed allocs belong to a deployment (a rolling update), prints its progress per
 * group until it is successful or failed, as nomad's deployment monitor does; resolves with its
 * final status, or undefined when there is none.
 */
export async function followDeployment(api: AgentApi, io: CliIO, jobId: string, placed: string[]): Promise<string | undefined> {
  if (placed.length === 0) return undefined;
  const first = (await api.get<Obj>(`/v1/allocation/${placed[0]}`)).body;
  const id = String(first.DeploymentID ?? '');
  if (!id) return undefined;
  writeLine(io.stdout, `==> ${now()}: Monitoring deployment "${short(id)}" of job "${jobId}"`);
  let index = 0;
  let last = '';
  for (;;) {
    const r = await api.get<Obj>(`/v1/deployment/${id}?index=${index}&wait=30s`);
    index = r.index;
    const d = r.body;
    const groups = Object.entries((d.TaskGroups as Record<string, Obj>) ?? {})
      .map(([g, t]) => `${g}: ${t.PlacedAllocs}/${t.DesiredTotal} placed, ${t.HealthyAllocs} healthy, ${t.UnhealthyAllocs} unhealthy`)
      .join('; ');
    const key = `${d.Status} ${groups}`;
    if (key !== last) writeLine(io.stdout, `    ${now()}: Deployment "${short(id)}" ${key}`);
    last = key;
    if (d.Status !== 'running') {
      writeLine(io.stdout, `==> ${now()}: Deployment "${short(id)}" ${d.Status}: ${d.StatusDescription}`);
      return String(d.Status);
    }
  }
}
