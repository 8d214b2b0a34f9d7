/**
 * Reading a job file for `berth job ...`: `-var name=value` and `-var-file FILE` flags (Nomad's
 * single-dash spelling or `--var`), the file or stdin, and `parseJobspec`'s errors as an
 * {@link InputError} (exit 2) listing every problem with its line.
 * @module
 */
import { parseArgs } from 'node:util';
import { parseJobspec, type ApiJob } from '../../../agent/jobspec/index.ts';
import { JobspecError, unsupportedText, type UnsupportedStanza } from '../../../model/errors.ts';
import { refusalHintLines } from './refusal-hints.ts';
import { readInput } from '../alloc-file.ts';
import { InputError, UsageError } from '../errors.ts';
import { writeLine, type CliIO } from '../io.ts';
import { keyValues } from '../nomad/flags.ts';
import { errorText } from '../../../model/error-text.ts';

/** Flags and positionals of a `berth job` command that reads a job file. */
export interface JobFileArgs {
  positionals: string[];
  vars: Record<string, string>;
  varFiles: string[];
  help: boolean;
  /** Other flags, by name. */
  values: Record<string, string | boolean | undefined>;
}

/** Parses `-var`/`-var-file` plus `extra` flags, each with one dash or two. */
export function parseJobFileArgs(command: string, argv: string[], extra: Record<string, { type: 'string' | 'boolean' }> = {}): JobFileArgs {
  // Nomad spells long flags with one dash (`-var-file`, `-unsupported=warn`): take both.
  const long = new Set(['var', 'var-file', 'help', ...Object.keys(extra)]);
  const norm = argv.map((a) => (/^-[^-]/.test(a) && long.has(a.slice(1).split('=')[0]!) ? `-${a}` : a));
  let parsed;
  try {
    parsed = parseArgs({
      args: norm,
      options: { ...extra, var: { type: 'string', multiple: true }, 'var-file': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(errorText(err).replace(/\. To specify a positional argument.*$/s, ''), command);
  }
  const vars: Record<string, string> = {};
  for (const kv of (parsed.values.var as string[] | undefined) ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new UsageError(`-var needs name=value, got ${JSON.stringify(kv)}`, command);
    vars[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const { var: _v, 'var-file': varFiles, help, ...values } = parsed.values as Record<string, unknown>;
  return {
    positionals: parsed.positionals,
    vars,
    varFiles: (varFiles as string[] | undefined) ?? [],
    help: help === true,
    values: values as JobFileArgs['values'],
  };
}

/** How {@link loadJobFile} reads a job file. */
export interface JobFileOptions {
  vars: Record<string, string>;
  varFiles: string[];
  /** A stanza berth does not run: refused (the default) or left out with a warning. */
  unsupported?: 'refuse' | 'warn';
  /** The command that reads it, for the hint (`job run`). */
  command?: string;
  /** Fill in Nomad's defaults (default true); false: the job as the file has it, as nomad sends it. */
  canonicalize?: boolean;
}

/**
 * Reads and parses a job file (`-` for stdin) into Nomad's API job. Problems are an InputError
 * (exit 2) naming the file once, with a hint per refused stanza; in `warn` mode the refused
 * stanzas come back in `leftOut`.
 */
export async function loadJobFile(
  path: string,
  opts: JobFileOptions,
  io: CliIO,
): Promise<{ api: ApiJob & { ID: string }; source: string; leftOut: UnsupportedStanza[] }> {
  const { text, source } = await readInput(path, io.stdin);
  const leftOut: UnsupportedStanza[] = [];
  try {
    const api = await parseJobspec(text, {
      filename: source,
      vars: opts.vars,
      varFiles: opts.varFiles,
      ...(opts.unsupported ? { unsupported: opts.unsupported } : {}),
      ...(opts.canonicalize === false ? { canonicalize: false } : {}),
      onWarning: (w) => leftOut.push(w),
    });
    if (typeof api.ID !== 'string' || api.ID === '') throw new InputError(source, 'the job needs an ID');
    return { api: api as ApiJob & { ID: string }, source, leftOut };
  } catch (err) {
    if (err instanceof JobspecError) {
      const loc = err.line ? `:${err.line}${err.column ? `:${err.column}` : ''}` : '';
      // The error names the file (and the first problem's line) itself: say it once.
      const own = [`${source}${loc}: `, `${source}: `].find((p) => err.message.startsWith(p));
      const message = own ? err.message.slice(own.length) : err.message;
      const hints = refusalHintLines(err.unsupported, opts.command ?? 'job run', path);
      throw new InputError(`${source}${loc}`, hints.length ? `${message}\n${hints.map((h) => `  ${h}`).join('\n')}` : message, err.issues, { cause: err });
    }
    throw err;
  }
}

/** `-unsupported warn|refuse`, checked. */
export function unsupportedMode(value: unknown, command: string): 'refuse' | 'warn' | undefined {
  if (value === undefined) return undefined;
  if (value === 'warn' || value === 'refuse') return value;
  throw new UsageError(`-unsupported takes warn or refuse, got ${JSON.stringify(value)}`, command);
}

/** Nomad's warning list (`1 warning:` then `* ...` lines) for the stanzas left out. */
export function leftOutWarnings(leftOut: UnsupportedStanza[]): string | undefined {
  if (!leftOut.length) return undefined;
  const n = leftOut.length;
  return `${n} warning${n === 1 ? '' : 's'}:\n\n${leftOut.map((u) => `* ${unsupportedText(u)}: left out`).join('\n')}`;
}

/**
 * The job file of a `job run`/`job plan` command from its parsed flags (`-var`, `-var-file`,
 * `-unsupported`): loaded, with the stanzas left out printed as nomad's `Job Warnings:` on stderr.
 */
export async function loadCommandJob(
  command: string,
  path: string,
  flags: Record<string, unknown>,
  io: CliIO,
  extra: Pick<JobFileOptions, 'canonicalize'> = {},
): Promise<ApiJob & { ID: string }> {
  const { api, leftOut } = await loadJobFile(
    path,
    {
      vars: keyValues(command, flags.var as string[] | undefined),
      varFiles: (flags['var-file'] as string[] | undefined) ?? [],
      unsupported: unsupportedMode(flags.unsupported, command),
      command,
      ...extra,
    },
    io,
  );
  const text = leftOutWarnings(leftOut);
  if (text) writeLine(io.stderr, `Job Warnings:\n${text}\n`);
  return api;
}
