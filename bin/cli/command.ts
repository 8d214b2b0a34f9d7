/**
 * What every `berth` subcommand is: a name, a one-line summary for `berth --help`, its own help
 * text, and `run`, which parses its arguments and returns the exit code. One file per command in
 * `commands/`; `main.ts` lists them.
 * @module
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.ts';
import type { CliIO } from './io.ts';
import { errorText } from '../../model/error-text.ts';

/** One subcommand. */
export interface Command {
  name: string;
  /** One line for the command list in `berth --help`. */
  summary: string;
  /** The full `berth <name> --help` text (usage line first). */
  help: string;
  /** Runs the command with the arguments after its name; resolves with the exit code. */
  run(argv: string[], io: CliIO): Promise<number>;
}

type Options = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** Parsed flags (each `string` or `boolean` by its declared type, `help` always there) and positionals. */
export interface ParsedArgs<O extends Options> {
  values: { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string } & { help?: boolean };
  positionals: string[];
}

/**
 * `util.parseArgs` with one-line {@link UsageError}s (no stack trace, no Node error code) and
 * `--help`/`-h` added to every command.
 */
export function parseCommandArgs<O extends Options>(command: string, argv: string[], options: O): ParsedArgs<O> {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true }) as ParsedArgs<O>;
  } catch (err) {
    const msg = errorText(err)
      .replace(/\. To specify a positional argument.*$/s, '')
      .replace(/^Unknown option '([^']+)'.*$/s, "unknown flag '$1'")
      .replace(/^Option '(?:-\w, )?(--?[\w-]+)(?: <value>)?' argument missing$/, '$1 needs a value');
    throw new UsageError(msg, command);
  }
}

/** A flag's value as a non-negative integer, or a UsageError naming the flag. */
export function intFlag(command: string, flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a non-negative integer, got ${JSON.stringify(value)}`, command);
  return Number(value);
}

/** What a command is besides what it does: its name, its line in `berth --help`, its help text. */
export type CommandMeta = Pick<Command, 'name' | 'summary' | 'help'>;

/**
 * The {@link Command} `meta` describes, taking the GNU-style `options` (as {@link parseCommandArgs}
 * parses them): `--help` prints the help (exit 0), else `run` gets the parse.
 */
export function flagCommand<O extends Options>(meta: CommandMeta, options: O, run: (args: ParsedArgs<O> & { io: CliIO }) => Promise<number>): Command {
  return {
    ...meta,
    async run(argv, io) {
      const { values, positionals } = parseCommandArgs(meta.name, argv, options);
      if (values.help) return printHelp(io, meta.help);
      return run({ values, positionals, io });
    },
  };
}

/** Prints a command's help to stdout; `--help` exits 0. */
export function printHelp(io: CliIO, help: string): number {
  io.stdout.write(`${help}\n`);
  return 0;
}
