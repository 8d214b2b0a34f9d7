/**
 * `berth job plan [-var k=v]... FILE`: what registering FILE would do (placements, in-place
 * and destructive updates, stops, preemptions), changing nothing.
 * @module
 */
import { printHelp, type Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { AgentApi, API_FLAGS } from '../nomad/api.ts';
import { allocMetricLines, failedGroupHeader } from '../nomad/alloc-metrics.ts';
import { keyValues, parseNomadFlags } from '../nomad/flags.ts';
import { short, table } from '../nomad/table.ts';
import { leftOutWarnings, loadJobFile, unsupportedMode } from './job-file.ts';
import { errorText } from '../../../model/error-text.ts';

const HELP = `usage: berth job plan [-var key=value]... [-var-file FILE]... [-unsupported warn] [-json] FILE

A dry run of berth job run FILE: per task group how many allocations would be placed,
updated (in place or by replacement) or stopped, and which allocations would be preempted.
Exit codes (as nomad's): 0 nothing would be placed or stopped; 1 allocations would be placed
or stopped; 255 an error.`;

type Obj = Record<string, unknown>;

/** `berth job plan`. */
export const jobPlanCommand: Command = {
  name: 'plan',
  summary: 'show what running a job file would change',
  help: HELP,
  async run(argv, io) {
    const { flags, positionals } = parseNomadFlags('job plan', argv, {
      ...API_FLAGS,
      var: 'multi',
      'var-file': 'multi',
      json: 'boolean',
      diff: 'boolean',
      verbose: 'boolean',
      unsupported: 'string',
    });
    if (flags.help) return printHelp(io, HELP);
    if (positionals.length !== 1) throw new UsageError('expects one job file', 'job plan');
    const { api: job, leftOut } = await loadJobFile(
      positionals[0]!,
      {
        vars: keyValues('job plan', flags.var as string[] | undefined),
        varFiles: (flags['var-file'] as string[] | undefined) ?? [],
        unsupported: unsupportedMode(flags.unsupported, 'job plan'),
        command: 'job plan',
      },
      io,
    );
    const leftOutText = leftOutWarnings(leftOut);
    if (leftOutText) writeLine(io.stderr, `Job Warnings:\n${leftOutText}\n`);
    const api = new AgentApi(flags);
    let plan: Obj;
    try {
      plan = (await api.json<Obj>('POST', `/v1/job/${encodeURIComponent(job.ID)}/plan`, { Job: job, Diff: true })).body;
    } catch (e) {
      writeLine(io.stderr, `berth: ${errorText(e)}`);
      return 255;
    }
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(plan, null, 2));
    }
    const ann = plan.Annotations as { DesiredTGUpdates: Record<string, Record<string, number>>; PreemptedAllocs: Obj[] };
    let changes = 0;
    if (!flags.json) {
      writeLine(io.stdout, `+/- Job: "${job.ID}"`);
      for (const [g, u] of Object.entries(ann.DesiredTGUpdates)) {
        const parts = [
          u.Place ? `${u.Place} create` : '',
          u.DestructiveUpdate ? `${u.DestructiveUpdate} create/destroy update` : '',
          u.InPlaceUpdate ? `${u.InPlaceUpdate} in-place update` : '',
          u.Stop ? `${u.Stop} destroy` : '',
          u.Ignore ? `${u.Ignore} ignore` : '',
        ].filter(Boolean);
        writeLine(io.stdout, `+/- Task Group: "${g}" (${parts.join(', ') || 'no change'})`);
      }
      writeLine(io.stdout, '\nScheduler dry-run:');
      const failed = plan.FailedTGAllocs as Record<string, Obj> | null;
      if (!failed) writeLine(io.stdout, '- All tasks successfully allocated.');
      else
        for (const [g, f] of Object.entries(failed)) {
          writeLine(io.stdout, `- WARNING: Failed to place all allocations.\n  ${failedGroupHeader(g, f)}`);
          for (const line of allocMetricLines(f, '    ')) writeLine(io.stdout, line);
        }
      if (ann.PreemptedAllocs.length) {
        writeLine(io.stdout, '\nPreemptions:\n');
        writeLine(
          io.stdout,
          table(
            ['Alloc ID', 'Job ID', 'Task Group'],
            ann.PreemptedAllocs.map((p) => [short(p.ID), p.JobID, p.TaskGroup]),
          ),
        );
      }
      writeLine(
        io.stdout,
        `\nJob Modify Index: ${plan.JobModifyIndex}\nTo submit the job with version verification run:\n\nberth job run -check-index ${plan.JobModifyIndex} ${positionals[0]}`,
      );
    }
    for (const u of Object.values(ann.DesiredTGUpdates)) changes += (u.Place ?? 0) + (u.DestructiveUpdate ?? 0) + (u.Stop ?? 0);
    return changes > 0 ? 1 : 0;
  },
};
