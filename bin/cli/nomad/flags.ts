/**
 * Flags as `nomad` takes them: `-flag`, `--flag`, `-flag=value`, `-flag value`, booleans as
 * `-detach` or `-detach=false`, repeatable ones (`-var`) collected. Flags may come before or
 * between positionals, as Go's flag package stops at the first positional, nomad users put them
 * first; berth takes both.
 * @module
 */
import { printHelp } from '../command.ts';
import { UsageError } from '../errors.ts';
import type { CliIO } from '../io.ts';

/** A flag's kind. */
export type FlagKind = 'boolean' | 'string' | 'multi';

/** Parsed flags and positionals. */
export interface NomadArgs {
  flags: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Parses `argv` against `spec` (flag name → kind); `-h`/`-help`/`--help` set `help`. */
export function parseNomadFlags(command: string, argv: string[], spec: Record<string, FlagKind>): NomadArgs {
  const flags: NomadArgs['flags'] = {};
  const positionals: string[] = [];
  const all: Record<string, FlagKind> = { ...spec, help: 'boolean', h: 'boolean' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const kind = all[name];
    if (!kind) throw new UsageError(`unknown flag '${arg.split('=')[0]}'`, command);
    let value: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (kind === 'boolean') {
      if (value !== undefined && value !== 'true' && value !== 'false')
        throw new UsageError(`-${name} takes true or false, got ${JSON.stringify(value)}`, command);
      flags[name === 'h' ? 'help' : name] = value === undefined ? true : value === 'true';
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`-${name} needs a value`, command);
    }
    if (kind === 'multi') ((flags[name] ??= []) as string[]).push(value);
    else flags[name] = value;
  }
  return { flags, positionals };
}

/** `k=v` pairs (from `-var`) as an object; a UsageError for one without `=`. */
export function keyValues(command: string, pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`-var takes key=value, got ${JSON.stringify(p)}`, command);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

/** What a command's preamble checks besides the flags: its help text, and how many positionals it takes. */
export interface CommandShape {
  io: CliIO;
  /** Printed for `-help` (the command then exits 0). */
  help: string;
  /** Exactly this many positionals, or from `[min, max]`; left out, any number. */
  positionals?: number | readonly [number, number];
  /** The UsageError's text for a count outside `positionals` (or made from the positionals given). */
  usage?: string | ((positionals: string[]) => string);
}

/**
 * The preamble nomad-style commands share: `argv` parsed against `spec`; for `-help` the help
 * printed and `exit` set to 0 (the command returns it); a positional count outside
 * `shape.positionals` is the UsageError `shape.usage`, named for `command`.
 * @example
 * const { flags, positionals, exit } = commandFlags('job eval', argv, { ...API_FLAGS }, { io, help: HELP, positionals: 1, usage: 'expects one job id' });
 * if (exit !== undefined) return exit;
 */
export function commandFlags(command: string, argv: string[], spec: Record<string, FlagKind>, shape: CommandShape): NomadArgs & { exit?: number } {
  const args = parseNomadFlags(command, argv, spec);
  if (args.flags.help) return { ...args, exit: printHelp(shape.io, shape.help) };
  const n = args.positionals.length;
  const want = shape.positionals;
  const [min, max] = typeof want === 'number' ? [want, want] : (want ?? [0, Infinity]);
  if (n < min || n > max) {
    const usage = typeof shape.usage === 'function' ? shape.usage(args.positionals) : shape.usage;
    throw new UsageError(usage ?? `expects ${min === max ? min : `${min} to ${max}`} arguments`, command);
  }
  return args;
}
