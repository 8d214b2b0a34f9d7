/**
 * `berth job <subcommand>`: a small dispatcher. Adding a subcommand is adding a file here and a
 * line to {@link JOB_SUBCOMMANDS}.
 * @module
 */
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { jobAllocsCommand } from './allocs.ts';
import { jobDispatchCommand } from './dispatch.ts';
import { jobPeriodicCommand } from './periodic.ts';
import { jobEvalCommand } from './eval.ts';
import { jobHistoryCommand } from './history.ts';
import { jobInitCommand } from './init.ts';
import { jobInspectCommand } from './inspect.ts';
import { jobPlanCommand } from './plan.ts';
import { jobScaleCommand } from './scale.ts';
import { jobRunCommand } from './run.ts';
import { jobStatusCommand } from './status.ts';
import { jobStopCommand } from './stop.ts';
import { jobValidateCommand } from './validate.ts';

/** Every `berth job` subcommand, in the order `berth job --help` lists them. */
export const JOB_SUBCOMMANDS: Command[] = [
  jobInitCommand,
  jobRunCommand,
  jobStopCommand,
  jobStatusCommand,
  jobAllocsCommand,
  jobHistoryCommand,
  jobInspectCommand,
  jobScaleCommand,
  jobDispatchCommand,
  jobPeriodicCommand,
  jobEvalCommand,
  jobPlanCommand,
  jobValidateCommand,
];

function help(): string {
  const width = Math.max(...JOB_SUBCOMMANDS.map((c) => c.name.length));
  return `usage: berth job <subcommand> [flags]    (berth job <subcommand> --help for its flags)

Nomad job files (HCL2 or JSON): validate them here, or run, stop, inspect and plan them on a
berth agent at $BERTH_ADDR (or $NOMAD_ADDR; default http://127.0.0.1:4646).

subcommands:
${JOB_SUBCOMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}`;
}

/** `berth job`. */
export const jobCommand: Command = {
  name: 'job',
  summary: 'run, stop, inspect, plan and validate Nomad jobs',
  get help() {
    return help();
  },
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
      writeLine(sub === undefined ? io.stderr : io.stdout, help());
      return sub === undefined ? 2 : 0;
    }
    const cmd = JOB_SUBCOMMANDS.find((c) => c.name === sub);
    if (!cmd) throw new UsageError(`unknown job subcommand ${JSON.stringify(sub)} (subcommands: ${JOB_SUBCOMMANDS.map((c) => c.name).join(', ')})`, 'job');
    return cmd.run(rest, io);
  },
};
