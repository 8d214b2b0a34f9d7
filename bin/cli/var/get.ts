/**
 * `berth var get [-item=KEY] [-out=json|table|none] <path>`: prints a variable, as
 * `nomad var get` does (a table on a terminal, JSON otherwise; `-item` prints one value, with no
 * newline after it).
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { ApiRequestError } from '../nomad/api.ts';
import { isTerminal, refuseWildcard, variableJson, variableTable, varUrl, type ApiVariable } from './common.ts';

const NAME = 'var get';
const HELP = `usage: berth var get [-item=KEY] [-out=json|table|none] <path>

Prints the variable at <path>: a table on a terminal, JSON otherwise (or as -out says). -item
prints only that item's value, with no newline after it.

Exit codes: 0 shown; 1 no such variable (or item), or an error; 2 usage error.`;

/** `berth var get`. */
export const varGetCommand = apiCommand(
  { command: NAME, summary: 'read a variable', help: HELP, args: [1, 'This command takes one argument: <path>'] },
  { item: 'string', out: 'string' },
  async ({ flags, positionals, api, io }) => {
    const out = (flags.out as string | undefined) ?? (isTerminal(io.stdout) ? 'table' : 'json');
    if (!['none', 'json', 'table'].includes(out)) throw new UsageError('Invalid value for "-out"; valid values are [json, none, table]', NAME);
    refuseWildcard(NAME, flags.namespace);
    let v: ApiVariable;
    try {
      v = (await api.get<ApiVariable>(varUrl(positionals[0]!))).body;
    } catch (e) {
      if (!(e instanceof ApiRequestError && e.status === 404)) throw e;
      writeLine(io.stderr, 'Variable not found');
      return 1;
    }
    const item = flags.item as string | undefined;
    if (item !== undefined && item !== '') {
      if (!v.Items || !(item in v.Items)) {
        writeLine(io.stderr, `Variable does not contain "${item}" item`);
        return 1;
      }
      io.stdout.write(v.Items[item]!);
      return 0;
    }
    if (out === 'json') writeLine(io.stdout, variableJson(v));
    else if (out === 'table') writeLine(io.stdout, variableTable(v));
    return 0;
  },
);
