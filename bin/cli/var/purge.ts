/**
 * `berth var purge [-check-index=N] <path>`: deletes a variable for good, as `nomad var purge`
 * does; with `-check-index` only while its modify index is N (a conflict prints nomad's message
 * and exits 1).
 * @module
 */
import { type Command } from '../command.ts';
import { apiCommandFlags } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { casConflictOf, checkIndexFlag, refuseWildcard, varUrl, writeCasConflict } from './common.ts';

const NAME = 'var purge';
const HELP = `usage: berth var purge [-check-index=N] <path>

Deletes the variable at <path>. With -check-index, only if its modify index is N.

Exit codes: 0 purged (or there was none); 1 a check-and-set conflict or an error; 2 usage error.`;

/** `berth var purge`. */
export const varPurgeCommand: Command = {
  name: 'purge',
  summary: 'delete a variable',
  help: HELP,
  async run(argv, io) {
    const { flags, positionals, exit, api } = apiCommandFlags(
      NAME,
      argv,
      { 'check-index': 'string' },
      { io, help: HELP, positionals: 1, usage: 'This command takes one argument: <path>' },
    );
    if (exit !== undefined) return exit;
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
};
