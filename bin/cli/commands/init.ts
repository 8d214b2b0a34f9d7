/**
 * `berth init [--batch|--service] [FILE]`: writes an example allocation file (default
 * `alloc.json`, never overwritten without --force) and explains its fields.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { flagCommand } from '../command.ts';
import { InputError, UsageError } from '../errors.ts';
import { BATCH_EXAMPLE, FIELD_NOTES, SERVICE_EXAMPLE } from '../examples.ts';
import { writeLine } from '../io.ts';
import { errorText } from '../../../model/error-text.ts';

const HELP = `usage: berth init [--batch | --service] [--force] [FILE]

Writes an example allocation to FILE (default alloc.json) and prints what each field means.
  --batch    a one-shot task (the default)
  --service  a long-running task that is restarted when it exits
  --force    overwrite FILE
Exit codes: 0 written; 2 usage error or FILE exists.`;

export const initCommand = flagCommand(
  { name: 'init', summary: 'write an example allocation file and explain its fields', help: HELP },
  { batch: { type: 'boolean' }, service: { type: 'boolean' }, force: { type: 'boolean' } },
  async ({ values, positionals, io }) => {
    if (values.batch && values.service) throw new UsageError('--batch and --service cannot be used together', 'init');
    if (positionals.length > 1) throw new UsageError(`init takes at most one file name, got ${positionals.length}`, 'init');
    const file = positionals[0] ?? 'alloc.json';
    const example = values.service ? SERVICE_EXAMPLE : BATCH_EXAMPLE;
    try {
      writeFileSync(file, `${JSON.stringify(example, null, 2)}\n`, { flag: values.force ? 'w' : 'wx' });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new InputError(file, code === 'EEXIST' ? 'already exists (use --force to overwrite)' : `cannot write: ${errorText(err)}`, [], {
        cause: err,
      });
    }
    writeLine(io.stdout, `wrote ${file} (a ${values.service ? 'service' : 'batch'} job); run it with: berth run ${file}\n`);
    writeLine(io.stdout, FIELD_NOTES);
    return 0;
  },
);
