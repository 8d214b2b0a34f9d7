/**
 * `berth job scale [-detach] JOB [GROUP] COUNT`: sets a group's count, as `nomad job scale`;
 * GROUP may be left out when the job has one group. Shows the evaluation unless `-detach`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { monitorAndFollow } from './monitor.ts';

const HELP = `usage: berth job scale [-detach] JOB [GROUP] COUNT

Sets the count of GROUP of JOB (GROUP may be left out when the job has one group), then shows
the evaluation and follows the new allocations, unless -detach.
Exit codes: 0 scaled; 1 no such job or group, or an error; 2 usage error or some allocations
could not be placed.`;

/** `berth job scale`. */
export const jobScaleCommand = apiCommand(
  { command: 'job scale', summary: "set a task group's count", help: HELP, args: [[2, 3], 'expects JOB [GROUP] COUNT'] },
  { detach: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const countText = positionals[positionals.length - 1]!;
    if (!/^\d+$/.test(countText)) throw new UsageError(`COUNT must be a whole number, got ${JSON.stringify(countText)}`, 'job scale');
    const jobId = positionals[0]!;
    let group = positionals.length === 3 ? positionals[1]! : undefined;
    if (group === undefined) {
      const job = (await api.get<{ TaskGroups?: Array<{ Name: string }> }>(`/v1/job/${encodeURIComponent(jobId)}`)).body;
      const names = (job.TaskGroups ?? []).map((g) => g.Name);
      if (names.length !== 1) throw new UsageError(`job "${jobId}" has ${names.length} task groups (${names.join(', ')}): give GROUP`, 'job scale');
      group = names[0]!;
    }
    const { body } = await api.json<{ EvalID: string; Warnings?: string }>('POST', `/v1/job/${encodeURIComponent(jobId)}/scale`, {
      Count: Number(countText),
      Target: { Group: group },
    });
    if (body.Warnings) writeLine(io.stderr, `Job Warnings:\n${body.Warnings}`);
    if (flags.detach) {
      writeLine(io.stdout, `Job scale successful\nEvaluation ID: ${body.EvalID}`);
      return 0;
    }
    return monitorAndFollow(api, io, body.EvalID);
  },
);
