/**
 * `berth var list [-json | -out=json|table] [-q] [<prefix>]`: the variables under a prefix, as
 * `nomad var list` shows them (namespace, path, last update; `-q` the paths only).
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { table } from '../nomad/table.ts';
import { isoTime, type ApiVariable } from './common.ts';

const NAME = 'var list';
const HELP = `usage: berth var list [-json | -out=json|table] [-q] [<prefix>]

Lists the variables whose path starts with <prefix> (all of them without one), by namespace and
path; -q prints only the paths.

Exit codes: 0 listed (an empty list included); 1 an error; 2 usage error.`;

/** `berth var list`. */
export const varListCommand = apiCommand(
  { command: NAME, summary: 'list variables', help: HELP, args: [[0, 1], 'This command takes flags and either no arguments or one: <prefix>'] },
  { json: 'boolean', q: 'boolean', out: 'string' },
  async ({ flags, positionals, api, io }) => {
    const out = flags.json ? 'json' : ((flags.out as string | undefined) ?? 'table');
    if (!['json', 'table'].includes(out)) throw new UsageError('Invalid value for "-out"; valid values are [json, table]', NAME);
    const prefix = positionals[0] ?? '';
    const { body } = await api.get<Array<Omit<ApiVariable, 'Items'>>>(`/v1/vars?prefix=${encodeURIComponent(prefix)}`);
    const vars = [...(body ?? [])].sort((a, b) => (a.Namespace === b.Namespace ? (a.Path < b.Path ? -1 : 1) : a.Namespace < b.Namespace ? -1 : 1));
    if (out === 'json') writeLine(io.stdout, JSON.stringify(flags.q ? vars.map((v) => v.Path) : vars, null, 4));
    else if (flags.q) {
      if (vars.length) writeLine(io.stdout, vars.map((v) => v.Path).join('\n'));
    } else if (vars.length === 0) writeLine(io.stdout, 'No matching variables found');
    else
      writeLine(
        io.stdout,
        table(
          ['Namespace', 'Path', 'Last Updated'],
          vars.map((v) => [v.Namespace, v.Path, isoTime(v.ModifyTime)]),
        ),
      );
    return 0;
  },
);
