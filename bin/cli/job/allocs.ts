/**
 * `berth job allocs [-json] JOB`: a job's allocations as `nomad job allocs` lists them.
 * @module
 */
import { type Command } from '../command.ts';
import { apiCommandFlags } from '../nomad/api-command.ts';
import { nowOf, writeLine } from '../io.ts';
import { allocTable } from './alloc-table.ts';

const HELP = `usage: berth job allocs [-json] JOB

The allocations of JOB, newest first.
Exit codes: 0 shown; 1 no such job or an error; 2 usage error.`;

/** `berth job allocs`. */
export const jobAllocsCommand: Command = {
  name: 'allocs',
  summary: "list a job's allocations",
  help: HELP,
  async run(argv, io) {
    const { flags, positionals, exit, api } = apiCommandFlags(
      'job allocs',
      argv,
      { json: 'boolean', all: 'boolean', verbose: 'boolean' },
      { io, help: HELP, positionals: 1, usage: 'expects one job id' },
    );
    if (exit !== undefined) return exit;
    const id = encodeURIComponent(positionals[0]!);
    await api.get(`/v1/job/${id}`); // a 404 names a missing job, rather than an empty list
    const allocs = (await api.get<Array<Record<string, unknown>>>(`/v1/job/${id}/allocations`)).body;
    if (flags.json) writeLine(io.stdout, JSON.stringify(allocs, null, 4));
    else writeLine(io.stdout, allocs.length ? allocTable(allocs, { verbose: flags.verbose === true, now: nowOf(io) }) : 'No allocations placed');
    return 0;
  },
};
