/**
 * `berth job allocs [-json] JOB`: a job's allocations as `nomad job allocs` lists them.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { nowOf, writeLine } from '../io.ts';
import { allocTable } from './alloc-table.ts';

const HELP = `usage: berth job allocs [-json] JOB

The allocations of JOB, newest first.
Exit codes: 0 shown; 1 no such job or an error; 2 usage error.`;

/** `berth job allocs`. */
export const jobAllocsCommand = apiCommand(
  { command: 'job allocs', summary: "list a job's allocations", help: HELP, args: [1, 'expects one job id'] },
  { json: 'boolean', all: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const id = encodeURIComponent(positionals[0]!);
    await api.get(`/v1/job/${id}`); // a 404 names a missing job, rather than an empty list
    const allocs = (await api.get<Array<Record<string, unknown>>>(`/v1/job/${id}/allocations`)).body;
    if (flags.json) writeLine(io.stdout, JSON.stringify(allocs, null, 4));
    else writeLine(io.stdout, allocs.length ? allocTable(allocs, { verbose: flags.verbose === true, now: nowOf(io) }) : 'No allocations placed');
    return 0;
  },
);
