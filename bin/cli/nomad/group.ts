/**
 * A command with subcommands, as `nomad job run` / `nomad alloc logs`: `berth job --help` lists
 * them, `berth job run ...` runs one.
 * @module
 */
import { printHelp, type Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { ExitCode } from '../exit-codes.ts';
import { writeLine } from '../io.ts';

/** `berth <name> <sub> ...` over `subs`. */
export function commandGroup(name: string, summary: string, subs: readonly Command[]): Command {
  const width = Math.max(...subs.map((s) => s.name.length));
  const help = `usage: berth ${name} <subcommand> [flags] [args]

${summary[0]!.toUpperCase()}${summary.slice(1)}, talking to the agent at $BERTH_ADDR (or $NOMAD_ADDR),
default http://127.0.0.1:4646; $BERTH_TOKEN (or $NOMAD_TOKEN) is sent as X-Nomad-Token.

subcommands:
${subs.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}`).join('\n')}`;
  return {
    name,
    summary,
    help,
    async run(argv, io) {
      const [sub, ...rest] = argv;
      if (sub === undefined) {
        writeLine(io.stderr, help);
        return ExitCode.usage;
      }
      if (sub === '-h' || sub === '-help' || sub === '--help') return printHelp(io, help);
      const cmd = subs.find((s) => s.name === sub);
      if (!cmd) throw new UsageError(`unknown subcommand ${JSON.stringify(sub)} (${subs.map((s) => s.name).join(', ')})`, name);
      return cmd.run(rest, io);
    },
  };
}
