/**
 * `berth eval status [-json] ID`: one evaluation (id or unique prefix), as `nomad eval status`.
 * @module
 */
import { nowOf, writeLine } from '../io.ts';
import { apiCommand } from '../nomad/api-command.ts';
import { ApiRequestError } from '../nomad/api.ts';
import { allocMetricLines, failedGroupHeader } from '../nomad/alloc-metrics.ts';
import { commandGroup } from '../nomad/group.ts';
import { kv, prettyTimeDiff, short, table, verboseFormat } from '../nomad/table.ts';
import { allocTable } from '../job/alloc-table.ts';

type Obj = Record<string, unknown>;

/** The columns nomad shows only when some group has a count (or with -verbose), in its order. */
const OPTIONAL_COLUMNS: Array<[string, string]> = [
  ['Migrate', 'Migrate'],
  ['Canary', 'Canary'],
  ['Preemptions', 'Preemptions'],
  ['Reschedule Now', 'RescheduleNow'],
  ['Reschedule Later', 'RescheduleLater'],
  ['Disconnect', 'Disconnect'],
  ['Reconnect', 'Reconnect'],
];

/** Nomad's `formatPlanAnnotations`: the five counts always, the others when used or verbose. */
function planAnnotations(updates: Record<string, Obj>, verbose: boolean): string {
  const groups = Object.keys(updates).sort();
  const extra = OPTIONAL_COLUMNS.filter(([, k]) => verbose || groups.some((g) => Number(updates[g]![k] ?? 0) > 0));
  return table(
    ['Task Group', 'Ignore', 'Place', 'Stop', 'InPlace', 'Destructive', ...extra.map(([h]) => h)],
    groups.map((g) => {
      const u = updates[g]!;
      return [g, u.Ignore ?? 0, u.Place ?? 0, u.Stop ?? 0, u.InPlaceUpdate ?? 0, u.DestructiveUpdate ?? 0, ...extra.map(([, k]) => u[k] ?? 0)];
    }),
  );
}

const STATUS_HELP =
  'usage: berth eval status [-json] [-verbose] EVAL\n\nAs nomad prints it; -verbose gives whole ids and absolute times.\nExit codes: 0 shown; 1 no such evaluation or an error; 2 usage error.';

/** `berth eval`. */
export const evalCommand = commandGroup('eval', 'inspect evaluations', [
  apiCommand(
    { command: 'eval status', summary: 'show an evaluation', help: STATUS_HELP, args: [1, 'expects one evaluation id'] },
    { json: 'boolean', verbose: 'boolean', monitor: 'boolean' },
    async ({ flags, positionals, api, io }) => {
      const matches = (await api.get<Obj[]>(`/v1/evaluations?prefix=${encodeURIComponent(positionals[0]!)}`)).body;
      if (matches.length === 0) throw new ApiRequestError(404, `No evaluation(s) with prefix or id "${positionals[0]}" found`);
      if (matches.length > 1) throw new ApiRequestError(400, `Prefix matched multiple evaluations: ${matches.map((e) => short(e.ID)).join(', ')}`);
      const e = matches[0]!;
      if (flags.json) {
        writeLine(io.stdout, JSON.stringify(e, null, 2));
        return 0;
      }
      const verbose = flags.verbose === true;
      const { id, when } = verboseFormat(verbose, () => nowOf(io));
      const failed = e.FailedTGAllocs as Record<string, Obj> | null;
      const failures = !!failed && Object.keys(failed).length > 0;
      const rows: Array<[string, unknown]> = [
        ['ID', id(e.ID)],
        ['Create Time', when(e.CreateTime)],
        ['Modify Time', when(e.ModifyTime)],
        ['Status', e.Status],
        ['Status Description', e.StatusDescription || e.Status],
        ['Type', e.Type],
        ['TriggeredBy', e.TriggeredBy],
        ['Job ID', e.JobID],
        ['Namespace', e.Namespace],
      ];
      if (e.TriggeredBy === 'node-update' && e.NodeID) rows.push(['Node ID', e.NodeID]);
      if (e.TriggeredBy === 'max-plan-attempts' && e.PreviousEval) rows.push(['Previous Eval', e.PreviousEval]);
      rows.push(['Priority', e.Priority], ['Placement Failures', e.Status === 'blocked' ? 'N/A - In Progress' : failures]);
      if (typeof e.WaitUntil === 'string' && e.WaitUntil && !e.WaitUntil.startsWith('0001-')) rows.push(['Wait Until', e.WaitUntil.replace(/\.\d+/, '')]);
      rows.push(['Previous Eval', id(e.PreviousEval)], ['Next Eval', id(e.NextEval)], ['Blocked Eval', id(e.BlockedEval)]);
      writeLine(io.stdout, kv(rows));
      const related = (e.RelatedEvals as Obj[] | null) ?? [];
      if (related.length)
        writeLine(
          io.stdout,
          `\nRelated Evaluations\n${table(
            ['ID', 'Priority', 'Triggered By', 'Node ID', 'Status', 'Description'],
            related.map((r) => [id(r.ID), r.Priority, r.TriggeredBy, id(r.NodeID), r.Status, r.StatusDescription]),
          )}`,
        );
      const annotations = e.PlanAnnotations as { DesiredTGUpdates?: Record<string, Obj> | null; PreemptedAllocs?: Obj[] | null } | null;
      if (annotations?.DesiredTGUpdates && Object.keys(annotations.DesiredTGUpdates).length)
        writeLine(io.stdout, `\nPlan Annotations\n${planAnnotations(annotations.DesiredTGUpdates, verbose)}`);
      if (annotations?.PreemptedAllocs?.length)
        writeLine(
          io.stdout,
          `\nPreempted Allocations\n${table(
            ['ID', 'Job ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
            annotations.PreemptedAllocs.map((a) => [
              id(a.ID),
              a.JobID,
              id(a.NodeID),
              a.TaskGroup,
              a.JobVersion,
              a.DesiredStatus,
              a.ClientStatus,
              prettyTimeDiff(a.CreateTime, nowOf(io)),
              prettyTimeDiff(a.ModifyTime, nowOf(io)),
            ]),
          )}`,
        );
      const placed = (await api.get<Obj[]>(`/v1/evaluation/${encodeURIComponent(String(e.ID))}/allocations`)).body;
      if (placed.length) writeLine(io.stdout, `\nPlaced Allocations\n${allocTable(placed, { fullIds: verbose, now: nowOf(io) })}`);
      if (failures) {
        writeLine(io.stdout, '\nFailed Placements');
        for (const [g, f] of Object.entries(failed!).sort(([x], [y]) => (x < y ? -1 : 1))) {
          writeLine(io.stdout, failedGroupHeader(g, f));
          for (const line of allocMetricLines(f, '  ')) writeLine(io.stdout, line);
        }
        if (e.BlockedEval) writeLine(io.stdout, `\nEvaluation "${id(e.BlockedEval)}" waiting for additional capacity to place remainder`);
      }
      return 0;
    },
  ),
]);
