/**
 * `berth eval status [-json] ID`: one evaluation (id or unique prefix), as `nomad eval status`.
 * @module
 */
import {} from '../command.ts';
import { writeLine } from '../io.ts';
import { AgentApi, ApiRequestError, API_FLAGS } from '../nomad/api.ts';
import { commandFlags } from '../nomad/flags.ts';
import { allocMetricLines, failedGroupHeader } from '../nomad/alloc-metrics.ts';
import { commandGroup } from '../nomad/group.ts';
import { kv, nanoTime, short } from '../nomad/table.ts';

type Obj = Record<string, unknown>;

/** `berth eval`. */
export const evalCommand = commandGroup('eval', 'inspect evaluations', [
  {
    name: 'status',
    summary: 'show an evaluation',
    help: 'usage: berth eval status [-json] EVAL\n\nExit codes: 0 shown; 1 no such evaluation or an error; 2 usage error.',
    async run(argv, io) {
      const { flags, positionals, exit } = commandFlags(
        'eval status',
        argv,
        {
          ...API_FLAGS,
          json: 'boolean',
          verbose: 'boolean',
          monitor: 'boolean',
        },
        { io, help: this.help, positionals: 1, usage: 'expects one evaluation id' },
      );
      if (exit !== undefined) return exit;
      const api = new AgentApi(flags);
      const matches = (await api.get<Obj[]>(`/v1/evaluations?prefix=${encodeURIComponent(positionals[0]!)}`)).body;
      if (matches.length === 0) throw new ApiRequestError(404, `No evaluation(s) with prefix or id "${positionals[0]}" found`);
      if (matches.length > 1) throw new ApiRequestError(400, `Prefix matched multiple evaluations: ${matches.map((e) => short(e.ID)).join(', ')}`);
      const e = matches[0]!;
      if (flags.json) {
        writeLine(io.stdout, JSON.stringify(e, null, 2));
        return 0;
      }
      writeLine(
        io.stdout,
        kv([
          ['ID', e.ID],
          ['Create Time', nanoTime(e.CreateTime)],
          ['Modify Time', nanoTime(e.ModifyTime)],
          ['Status', e.Status],
          ['Status Description', e.StatusDescription || e.Status],
          ['Type', e.Type],
          ['TriggeredBy', e.TriggeredBy],
          ['Job ID', e.JobID],
          ['Priority', e.Priority],
          ['Placement Failures', !!e.FailedTGAllocs],
          ['Previous Eval', e.PreviousEval],
          ['Blocked Eval', e.BlockedEval],
        ]),
      );
      const failed = e.FailedTGAllocs as Record<string, Obj> | null;
      if (failed) {
        writeLine(io.stdout, '\nFailed Placements');
        for (const [g, f] of Object.entries(failed)) {
          writeLine(io.stdout, failedGroupHeader(g, f));
          for (const line of allocMetricLines(f, '  ')) writeLine(io.stdout, line);
        }
        if (e.BlockedEval) writeLine(io.stdout, `\nEvaluation "${short(e.BlockedEval)}" waiting for additional capacity to place remainder`);
      }
      return 0;
    },
  },
]);
