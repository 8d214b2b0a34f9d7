/**
 * `berth validate FILE|-`: checks an allocation file as `berth run` would, printing every bad
 * field path.
 * @module
 */
import { loadAllocation, standaloneProblem } from '../alloc-file.ts';
import { flagCommand } from '../command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';

const HELP = `usage: berth validate <alloc.json|->

Checks an allocation file (berth's JSON or Nomad API JSON) as berth run would, and prints every
bad field path. Exit codes: 0 valid; 2 invalid, unreadable or not JSON (or a usage error).`;

export const validateCommand = flagCommand(
  { name: 'validate', summary: 'check an allocation file and print every bad field', help: HELP },
  {},
  async ({ positionals, io }) => {
    if (positionals.length !== 1) throw new UsageError('validate needs one allocation file (or - for stdin)', 'validate');
    const { alloc, source } = await loadAllocation(positionals[0]!, io.stdin);
    const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)!;
    const tasks = group.tasks.map((t) => `${t.name} (${t.driver})`).join(', ');
    const standalone = standaloneProblem(alloc);
    if (standalone) writeLine(io.stderr, `berth: note: ${source}: ${standalone}`);
    writeLine(
      io.stdout,
      `${source}: valid: job ${alloc.jobId} (${alloc.job.type}), group ${group.name}, ${group.tasks.length} task${group.tasks.length === 1 ? '' : 's'}: ${tasks}`,
    );
    return 0;
  },
);
