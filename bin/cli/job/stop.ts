/**
 * `berth job stop [-purge] [-detach] ID`: stops a job's allocations (and with `-purge` forgets
 * the job), showing the evaluation unless `-detach`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { ApiRequestError } from '../nomad/api.ts';
import { short } from '../nomad/table.ts';
import { monitorEval } from './monitor.ts';

const HELP = `usage: berth job stop [-purge] [-detach] JOB

Stops every allocation of JOB. -purge also forgets the job (its versions and status).
Exit codes: 0 stopped; 1 no such job or an error; 2 usage error.`;

/** `berth job stop`. */
export const jobStopCommand = apiCommand(
  { command: 'job stop', summary: "stop a job's allocations", help: HELP, args: [1, 'expects one job id'] },
  { purge: 'boolean', detach: 'boolean', yes: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const { body } = await api.json<{ EvalID: string }>('DELETE', `/v1/job/${encodeURIComponent(positionals[0]!)}${flags.purge ? '?purge=true' : ''}`);
    if (flags.detach) {
      writeLine(io.stdout, body.EvalID);
      return 0;
    }
    try {
      await monitorEval(api, io, body.EvalID);
    } catch (e) {
      // A purged job's rows, its last evaluation included, are collected once they are over.
      if (!(flags.purge && e instanceof ApiRequestError && e.status === 404)) throw e;
      writeLine(io.stdout, `==> Evaluation "${short(body.EvalID)}" finished: it and the purged job's rows are collected`);
    }
    return 0;
  },
);
