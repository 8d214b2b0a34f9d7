/**
 * `berth job periodic force JOB`: launches a periodic job now, whatever its schedule, as
 * `nomad job periodic force`; shows the child's evaluation unless `-detach`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { monitorAndFollow } from './monitor.ts';

const HELP = `usage: berth job periodic force [-detach] JOB

Launches the periodic job JOB now (a child job JOB/periodic-<unix seconds>), whatever its
schedule and its prohibit_overlap, then shows the evaluation and follows its allocations,
unless -detach.
Exit codes: 0 launched; 1 not a periodic job, or an error; 2 usage error or some allocations
could not be placed.`;

/** `berth job periodic`. */
export const jobPeriodicCommand = apiCommand(
  { command: 'job periodic', summary: 'launch a periodic job now (periodic force)', help: HELP },
  { detach: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    if (positionals[0] !== 'force' || positionals.length !== 2) throw new UsageError('expects force JOB', 'job periodic');
    const jobId = positionals[1]!;
    const { body } = await api.json<{ EvalID: string }>('POST', `/v1/job/${encodeURIComponent(jobId)}/periodic/force`, {});
    if (flags.detach) {
      writeLine(io.stdout, `Force periodic successful\nEvaluation ID: ${body.EvalID}`);
      return 0;
    }
    return monitorAndFollow(api, io, body.EvalID);
  },
);
