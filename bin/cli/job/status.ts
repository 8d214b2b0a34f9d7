/**
 * `berth job status [-json] [ID]`: every job (a table), or one job: its fields, the summary per
 * group, its latest deployment and its allocations, as `nomad job status` prints them.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { nowOf, writeLine, type CliIO } from '../io.ts';
import { allocMetricLines } from '../nomad/alloc-metrics.ts';
import { deploymentLines } from '../nomad/deployment-view.ts';
import { kv, nanoTime, table } from '../nomad/table.ts';
import { allocTable } from './alloc-table.ts';

const HELP = `usage: berth job status [-json] [JOB]

Without JOB: one line per job. With JOB: its details, a summary per task group and its
allocations.
Exit codes: 0 shown; 1 no such job or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/**
 * Nomad's "Placement Failure" section: while an eval of the job is blocked, the reasons of the
 * newest eval that failed placements, per group.
 */
function printPlacementFailure(io: CliIO, evals: Obj[]): void {
  if (!evals.some((e) => e.Status === 'blocked')) return;
  const failed = evals
    .filter((e) => e.FailedTGAllocs && Object.keys(e.FailedTGAllocs as Obj).length > 0)
    .sort((a, b) => Number(b.CreateIndex) - Number(a.CreateIndex))[0];
  if (!failed) return;
  writeLine(io.stdout, '\nPlacement Failure');
  const groups = Object.entries(failed.FailedTGAllocs as Record<string, Obj>).sort(([a], [b]) => (a < b ? -1 : 1));
  groups.forEach(([g, m], i) => {
    writeLine(io.stdout, `Task Group ${JSON.stringify(g)}:`);
    for (const line of allocMetricLines(m, '  ')) writeLine(io.stdout, line);
    if (i < groups.length - 1) writeLine(io.stdout, '');
  });
}

/** `berth job status`. */
export const jobStatusCommand = apiCommand(
  { command: 'job status', summary: 'list jobs, or show one', help: HELP, args: [[0, 1], 'expects at most one job id'] },
  { json: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    if (positionals.length === 0) {
      const jobs = (await api.get<Obj[]>('/v1/jobs')).body;
      if (flags.json) writeLine(io.stdout, JSON.stringify(jobs, null, 2));
      else if (jobs.length === 0) writeLine(io.stdout, 'No running jobs');
      else
        writeLine(
          io.stdout,
          table(
            ['ID', 'Type', 'Priority', 'Status', 'Submit Date'],
            jobs.map((j) => [j.ID, j.Type, j.Priority, j.Status, nanoTime(j.SubmitTime)]),
          ),
        );
      return 0;
    }
    const id = encodeURIComponent(positionals[0]!);
    const job = (await api.get<Obj>(`/v1/job/${id}`)).body;
    const allocs = (await api.get<Obj[]>(`/v1/job/${id}/allocations`)).body;
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(job, null, 2));
      return 0;
    }
    const summary = (await api.get<{ Summary: Record<string, Record<string, number>> }>(`/v1/job/${id}/summary`)).body.Summary;
    writeLine(
      io.stdout,
      kv([
        ['ID', job.ID],
        ['Name', job.Name],
        ['Submit Date', nanoTime(job.SubmitTime)],
        ['Type', job.Type],
        ['Priority', job.Priority],
        ['Datacenters', ((job.Datacenters as string[] | undefined) ?? ['*']).join(',')],
        ['Namespace', job.Namespace],
        ['Node Pool', job.NodePool ?? ''],
        ['Status', job.Stop === true ? `${job.Status} (stopped)` : job.Status],
        // Nomad's IsPeriodic and IsParameterized: a periodic block; a parameterized parent (not a dispatched child).
        ['Periodic', !!job.Periodic],
        ['Parameterized', !!job.ParameterizedJob && job.Dispatched !== true],
      ]),
    );
    writeLine(io.stdout, '\nSummary');
    writeLine(
      io.stdout,
      table(
        ['Task Group', 'Queued', 'Starting', 'Running', 'Failed', 'Complete', 'Lost', 'Unknown'],
        Object.entries(summary).map(([g, s]) => [g, s.Queued, s.Starting, s.Running, s.Failed, s.Complete, s.Lost, s.Unknown]),
      ),
    );
    printPlacementFailure(io, (await api.get<Obj[]>(`/v1/job/${id}/evaluations`)).body);
    // Nomad's "Latest Deployment": the job's newest deployment, while there is one.
    const latest = (await api.get<Obj | null>(`/v1/job/${id}/deployment`).catch(() => ({ body: null }))).body;
    if (latest) writeLine(io.stdout, `\nLatest Deployment\n${deploymentLines(latest, false, flags.verbose === true)}`);
    writeLine(io.stdout, '\nAllocations');
    writeLine(io.stdout, allocs.length === 0 ? 'No allocations placed' : allocTable(allocs, { verbose: flags.verbose === true, now: nowOf(io) }));
    return 0;
  },
);
