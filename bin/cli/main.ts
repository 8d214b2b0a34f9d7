/**
 * The `berth` command line: global flags, dispatch to one subcommand, and the one place errors
 * become a message and an exit code. Adding a subcommand is adding a file to `commands/` and a
 * line to {@link COMMANDS}.
 * @module
 */
import { BerthError } from '../../model/errors.ts';
import type { Command } from './command.ts';
import { agentCommand } from './commands/agent.ts';
import { allocCommand } from './commands/alloc.ts';
import { deploymentCommand } from './commands/deployment.ts';
import { evalCommand } from './commands/eval.ts';
import { nodeCommand } from './commands/node.ts';
import { operatorCommand } from './commands/operator.ts';
import { demoCommand } from './commands/demo.ts';
import { initCommand } from './commands/init.ts';
import { jobCommand } from './job/job.ts';
import { logsCommand } from './commands/logs.ts';
import { runCommand } from './commands/run.ts';
import { statusCommand } from './commands/status.ts';
import { systemCommand } from './commands/system.ts';
import { validateCommand } from './commands/validate.ts';
import { varCommand } from './commands/var.ts';
import { viewCommand } from './commands/view.ts';
import { InputError, UsageError } from './errors.ts';
import { ExitCode } from './exit-codes.ts';
import { writeLine, type CliIO } from './io.ts';
import { berthVersion } from './version.ts';

/** Every subcommand, in the order `berth --help` lists them. */
export const COMMANDS: readonly Command[] = [
  runCommand,
  statusCommand,
  logsCommand,
  initCommand,
  validateCommand,
  demoCommand,
  viewCommand,
  agentCommand,
  jobCommand,
  allocCommand,
  nodeCommand,
  evalCommand,
  deploymentCommand,
  operatorCommand,
  systemCommand,
  varCommand,
];

/** `berth --help`. */
export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `berth ${berthVersion()}: run Nomad-style allocations on this host

usage: berth <command> [flags]    (berth <command> --help for its flags)

commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

flags:
  -h, --help     this help
  -V, --version  print the version

exit codes: 0 success; 1 the allocation failed; 2 usage or input error; for run of a batch
allocation with one task, the task's own exit code; 130 / 143 when stopped by SIGINT / SIGTERM.`;
}

/** Runs the command line `argv` (without node and the script); resolves with the exit code. */
export async function main(argv: string[], io: CliIO): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    return report(err, io);
  }
}

async function dispatch(argv: string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    writeLine(io.stderr, mainHelp());
    return ExitCode.usage;
  }
  if (first === '--help' || first === '-h') {
    writeLine(io.stdout, mainHelp());
    return ExitCode.ok;
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    writeLine(io.stdout, berthVersion());
    return ExitCode.ok;
  }
  if (first === 'help') {
    const cmd = rest[0] === undefined ? undefined : findCommand(rest[0]);
    writeLine(io.stdout, cmd ? cmd.help : mainHelp());
    return ExitCode.ok;
  }
  if (first.startsWith('-')) throw new UsageError(`unknown flag '${first}'; a command comes first: berth <command> [flags]`);
  return findCommand(first).run(rest, io);
}

function findCommand(name: string): Command {
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) throw new UsageError(`unknown command ${JSON.stringify(name)} (commands: ${COMMANDS.map((c) => c.name).join(', ')})`);
  return cmd;
}

/** One line (more only for an invalid file's field list) on stderr, and the exit code. */
function report(err: unknown, io: CliIO): number {
  if (err instanceof UsageError) {
    const hint = err.command ? `see berth ${err.command} --help` : 'see berth --help';
    writeLine(io.stderr, `berth${err.command ? ` ${err.command}` : ''}: ${err.message} (${hint})`);
    return ExitCode.usage;
  }
  if (err instanceof InputError) {
    writeLine(io.stderr, `berth: ${err.message}`);
    return ExitCode.usage;
  }
  if (err instanceof BerthError) {
    writeLine(io.stderr, `berth: ${err.message}`);
    return ExitCode.failed;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  writeLine(io.stderr, process.env.BERTH_DEBUG ? `berth: internal error: ${e.stack}` : `berth: internal error: ${e.message} (BERTH_DEBUG=1 shows the stack)`);
  return ExitCode.failed;
}
