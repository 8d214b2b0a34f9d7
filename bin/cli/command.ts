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

/** Prints a command's help to stdout; `--help` exits 0. */
export function printHelp(io: CliIO, help: string): number {
  io.stdout.write(`${help}\n`);
  return 0;
}
