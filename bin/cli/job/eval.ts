/**
 * `berth job eval [-detach] JOB`: asks the scheduler to evaluate JOB again as it is (Nomad's
 * `job-eval` trigger): what it would place or replace now, as after a node change.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { monitorEval } from './monitor.ts';

const HELP = `usage: berth job eval [-detach] JOB

Creates a new evaluation of JOB and shows it, unless -detach (then prints its id).
Exit codes: 0 evaluated; 1 no such job or an error; 2 usage error or some allocations could
not be placed.`;

/** `berth job eval`. */
export const jobEvalCommand = apiCommand(
  { command: 'job eval', summary: 'evaluate a job again', help: HELP, args: [1, 'expects one job id'] },
  { detach: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const { body } = await api.json<{ EvalID: string }>('POST', `/v1/job/${encodeURIComponent(positionals[0]!)}/evaluate`, {});
    if (flags.detach) {
      writeLine(io.stdout, `Created eval ID: "${body.EvalID}"`);
      return 0;
    }
    const outcome = await monitorEval(api, io, body.EvalID);
    return outcome.failed ? 2 : 0;
  },
);
