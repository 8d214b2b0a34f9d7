/**
 * `berth alloc checks [-json] ID`: the latest result of each Nomad-provider service check of an
 * allocation, as `nomad alloc checks` prints them.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { kv } from '../nomad/table.ts';
import { checkResults } from './status.ts';

const HELP = `usage: berth alloc checks [-json] ALLOC

The latest result of each Nomad-provider service check of ALLOC (an id or a unique prefix):
its status (success, failure or pending), the HTTP status code and the output.
Exit codes: 0 shown; 1 no such allocation or an error; 2 usage error.`;

/** `berth alloc checks`. */
export const allocChecksCommand = apiCommand(
  { command: 'alloc checks', summary: "show an allocation's service check results", help: HELP, args: [1, 'expects one allocation id'] },
  { json: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const checks = await checkResults(api, String(a.ID));
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(checks, null, 4));
      return 0;
    }
    writeLine(io.stdout, `Status of ${checks.length} Nomad Service Checks`);
    for (const c of checks) {
      writeLine(
        io.stdout,
        `\n${kv([
          ['ID', c.ID],
          ['Service', c.Service],
          ['Group', c.Group],
          ['Task', c.Task ?? '(group)'],
          ['Check', c.Check],
          ['Mode', c.Mode],
          ['Status', c.Status],
          ...((c.StatusCode !== undefined ? [['StatusCode', c.StatusCode]] : []) as Array<[string, unknown]>),
          ['Timestamp', new Date(Number(c.Timestamp) * 1000).toISOString()],
          ['Output', String(c.Output ?? '').trim()],
        ])}`,
      );
    }
    return 0;
  },
);
