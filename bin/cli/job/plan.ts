/**
 * `berth job plan [-var k=v]... FILE`: what registering FILE would do, changing nothing: the job's
 * field-by-field diff against its current version (as nomad prints it, see plan-diff.ts), then
 * the scheduler's dry run (placements, in-place and destructive updates, stops, preemptions).
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { paint, writeLine, type CliIO } from '../io.ts';
import { allocMetricLines, failedGroupHeader } from '../nomad/alloc-metrics.ts';
import { short, table } from '../nomad/table.ts';
import { loadCommandJob } from './job-file.ts';
import { errorText } from '../../../model/error-text.ts';
import { quote } from '../../../actors/templates/fmt.ts';
import type { JobDiff } from '../../../agent/jobs/diff/index.ts';
import { formatJobDiff } from './plan-diff.ts';

const HELP = `usage: berth job plan [-var key=value]... [-var-file FILE]... [-unsupported warn] [-diff=false] [-verbose] [-json] FILE

A dry run of berth job run FILE: the diff between the job the agent runs and FILE (+ added,
- deleted, +/- edited; -verbose expands added and deleted groups and tasks; -diff=false leaves
it out), then per task group how many allocations would be placed, updated (in place or by
replacement) or stopped, and which allocations would be preempted.
Exit codes (as nomad's): 0 nothing would be placed or stopped; 1 allocations would be placed
or stopped; 255 an error.`;

type Obj = Record<string, unknown>;
type Updates = Record<string, Record<string, number>>;

/** nomad's advice after a plan (its words, with berth's command). */
const CHECK_INDEX_HELP = `When running the job with the check-index flag, the job will only be run if the
job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.`;

/** `berth job plan`. */
export const jobPlanCommand = apiCommand(
  { command: 'job plan', summary: 'show what running a job file would change', help: HELP, args: [1, 'expects one job file'] },
  { var: 'multi', 'var-file': 'multi', json: 'boolean', diff: 'boolean', verbose: 'boolean', unsupported: 'string' },
  async ({ flags, positionals, api, io }) => {
    const job = await loadCommandJob('job plan', positionals[0]!, flags, io);
    let plan: Obj;
    try {
      plan = (await api.json<Obj>('POST', `/v1/job/${encodeURIComponent(job.ID)}/plan`, { Job: job, Diff: true })).body;
    } catch (e) {
      writeLine(io.stderr, `berth: ${errorText(e)}`);
      return 255;
    }
    if (flags.json) writeLine(io.stdout, JSON.stringify(plan, null, 2));
    else
      printPlan(io, plan, {
        diff: flags.diff !== false,
        verbose: flags.verbose === true,
        runArgs: runArgs(flags),
        path: positionals[0]!,
      });
    return exitCode(plan);
  },
);

/**
 * The plan as nomad prints it: the diff (unless `-diff=false`), the scheduler's dry run, the
 * job's warnings, the preemptions, then the job modify index and how to submit with it.
 */
function printPlan(io: CliIO, plan: Obj, o: { diff: boolean; verbose: boolean; runArgs: string; path: string }): void {
  const c = paint(io.color);
  const ann = plan.Annotations as { DesiredTGUpdates: Updates; PreemptedAllocs: Obj[] };
  if (o.diff && plan.Diff) writeLine(io.stdout, `${formatJobDiff(plan.Diff as JobDiff, o.verbose, io.color)}\n`);
  writeLine(io.stdout, c(1, 'Scheduler dry-run:'));
  const failed = plan.FailedTGAllocs as Record<string, Obj> | null;
  if (!failed) writeLine(io.stdout, c(32, '- All tasks successfully allocated.'));
  else
    for (const [g, f] of Object.entries(failed)) {
      writeLine(io.stdout, `- WARNING: Failed to place all allocations.\n  ${failedGroupHeader(g, f)}`);
      for (const line of allocMetricLines(f, '    ')) writeLine(io.stdout, line);
    }
  writeLine(io.stdout, '');
  if (plan.Warnings) writeLine(io.stdout, `${c(33, `Job Warnings:\n${String(plan.Warnings)}`)}\n`);
  if (ann.PreemptedAllocs.length) {
    writeLine(io.stdout, `${c(33, 'Preemptions:')}\n`);
    writeLine(
      io.stdout,
      table(
        ['Alloc ID', 'Job ID', 'Task Group'],
        ann.PreemptedAllocs.map((p) => [short(p.ID), p.JobID, p.TaskGroup]),
      ),
    );
  }
  const index = String(plan.JobModifyIndex);
  writeLine(io.stdout, `${c(1, `Job Modify Index: ${index}`)}`);
  writeLine(io.stdout, `To submit the job with version verification run:\n\nberth job run -check-index ${index} ${o.runArgs}${o.path}\n\n${CHECK_INDEX_HELP}`);
}

/** The flags `job run` needs to read the file as the plan did (nomad's `-var="k=v" ` form). */
function runArgs(flags: Record<string, unknown>): string {
  const vars = ((flags.var as string[] | undefined) ?? []).map((v) => `-var=${quote(v)} `);
  const files = ((flags['var-file'] as string[] | undefined) ?? []).map((f) => `-var-file=${quote(f)} `);
  const ns = typeof flags.namespace === 'string' && flags.namespace ? [`-namespace=${quote(flags.namespace)} `] : [];
  return [...vars, ...files, ...ns].join('');
}

/** nomad's: 0 when the job would not change or nothing would be placed, stopped or replaced; 1 otherwise. */
function exitCode(plan: Obj): number {
  if ((plan.Diff as JobDiff | null)?.Type === 'None') return 0;
  const ann = plan.Annotations as { DesiredTGUpdates: Updates };
  const moves = Object.values(ann.DesiredTGUpdates).map(
    (u) => (u.Stop ?? 0) + (u.Place ?? 0) + (u.Migrate ?? 0) + (u.DestructiveUpdate ?? 0) + (u.Canary ?? 0),
  );
  return moves.some((n) => n > 0) ? 1 : 0;
}
