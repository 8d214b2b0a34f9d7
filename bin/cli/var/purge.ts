/**
 * `berth var purge [-check-index=N] <path>`: deletes a variable for good, as `nomad var purge`
 * does; with `-check-index` only while its modify index is N (a conflict prints nomad's message
 * and exits 1).
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { casConflictOf, checkIndexFlag, refuseWildcard, varUrl, writeCasConflict } from './common.ts';

const NAME = 'var purge';
const HELP = `usage: berth var purge [-check-index=N] <path>

Deletes the variable at <path>. With -check-index, only if its modify index is N.

Exit codes: 0 purged (or there was none); 1 a check-and-set conflict or an error; 2 usage error.`;

/** `berth var purge`. */
export const varPurgeCommand = apiCommand(
  { command: NAME, summary: 'delete a variable', help: HELP, args: [1, 'This command takes one argument: <path>'] },
  { 'check-index': 'string' },
  async ({ flags, positionals, api, io }) => {
    const checkIndex = checkIndexFlag(NAME, flags['check-index']);
    refuseWildcard(NAME, flags.namespace);
    const path = positionals[0]!;
    try {
      const res = await api.raw('DELETE', varUrl(path, checkIndex === undefined ? '' : `?cas=${checkIndex}`));
      res.resume();
    } catch (e) {
      const conflict = casConflictOf(e);
      if (!conflict) throw e;
      writeCasConflict(io.stderr, checkIndex ?? 0, conflict);
      return 1;
    }
    writeLine(io.stdout, `Successfully purged variable "${path}"!`);
    return 0;
  },
);
