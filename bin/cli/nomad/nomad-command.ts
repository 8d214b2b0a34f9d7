/**
 * One builder for every nomad-style subcommand: what a command is (its words, summary, help,
 * positionals and flags) is data; the preamble that parses and checks them is written once here,
 * and the command's own code gets the result.
 * @module
 */
import type { Command } from '../command.ts';
import type { CliIO } from '../io.ts';
import { commandFlags, type CommandShape, type FlagKind, type NomadArgs } from './flags.ts';

/** A nomad-style subcommand as data (its flags beside it). */
export interface NomadCommandMeta {
  /** The words after `berth` (`'job stop'`), as its usage errors name it; the last is the name its group lists. */
  command: string;
  /** One line for its group's help. */
  summary: string;
  /** The full `-help` text (usage line first). */
  help: string;
  /** Exactly this many positionals (or from `[min, max]`), and the usage error for another count; left out, any number. */
  args?: readonly [count: NonNullable<CommandShape['positionals']>, usage: NonNullable<CommandShape['usage']>];
}

/** What a command's own code gets: the parsed flags and positionals, and the command line's streams. */
export interface NomadCommandArgs extends NomadArgs {
  io: CliIO;
}

/**
 * The {@link Command} `meta` describes, taking `flags` (name → kind): `-help` prints the help
 * (exit 0), a positional count outside `meta.args` is its usage error, else `run` gets the parse.
 */
export function nomadCommand(meta: NomadCommandMeta, flags: Record<string, FlagKind>, run: (args: NomadCommandArgs) => Promise<number>): Command {
  const [positionals, usage] = meta.args ?? [];
  return {
    name: meta.command.slice(meta.command.lastIndexOf(' ') + 1),
    summary: meta.summary,
    help: meta.help,
    async run(argv, io) {
      const shape: CommandShape = { io, help: meta.help, ...(positionals !== undefined ? { positionals, usage } : {}) };
      const parsed = commandFlags(meta.command, argv, flags, shape);
      return parsed.exit ?? run({ flags: parsed.flags, positionals: parsed.positionals, io });
    },
  };
}

/** {@link NomadCommandMeta.args} of a command that takes no positionals, with the usage error nomad's give for one. */
export const NO_ARGS: NonNullable<NomadCommandMeta['args']> = [0, (positionals) => `unexpected argument ${JSON.stringify(positionals[0])}`];
