/**
 * `berth job validate FILE [-var name=value]... [-var-file FILE]...`: checks a Nomad job file
 * (HCL2 or JSON) with the same schema `berth validate`, `berth run` and the agent use.
 * @module
 */
import { jobFromApi } from '../../../agent/jobspec/index.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { leftOutWarnings, loadJobFile, parseJobFileArgs, unsupportedMode } from './job-file.ts';

const HELP = `usage: berth job validate <job.nomad.hcl|job.json|-> [-var name=value]... [-var-file FILE]... [-unsupported warn]

Checks a Nomad job file (HCL2, or JSON as {"Job": {...}} or the bare job) as the agent would run
it: every unknown key (with a did-you-mean), bad value and stanza berth does not run, with its
line. Exit codes: 0 valid; 2 invalid, unreadable or a usage error.`;

/** `berth job validate`. */
export const jobValidateCommand: Command = {
  name: 'validate',
  summary: 'check a job file and print every problem with its line',
  help: HELP,
  async run(argv, io) {
    const args = parseJobFileArgs('job validate', argv, { unsupported: { type: 'string' } });
    if (args.help) {
      io.stdout.write(`${HELP}\n`);
      return 0;
    }
    if (args.positionals.length !== 1) throw new UsageError('job validate needs one job file (or - for stdin)', 'job validate');
    const unsupported = unsupportedMode(args.values.unsupported, 'job validate');
    const { api, source, leftOut } = await loadJobFile(args.positionals[0]!, { ...args, ...(unsupported ? { unsupported } : {}), command: 'job validate' }, io);
    const warnings = leftOutWarnings(leftOut);
    if (warnings) writeLine(io.stderr, `Job Warnings:\n${warnings}\n`);
    const job = jobFromApi(api, unsupported ? { unsupported } : {});
    const groups = job.taskGroups.map((g) => `${g.name} (${g.count ?? 1} x ${g.tasks.map((t) => `${t.name}/${t.driver}`).join(', ')})`).join('; ');
    writeLine(io.stdout, `Job validation successful`);
    writeLine(io.stdout, `${source}: job ${job.id} (${job.type}, priority ${job.priority ?? 50}): ${groups}`);
    return 0;
  },
};
