/**
 * Reading a job file for `berth job ...`: `-var name=value` and `-var-file FILE` flags (Nomad's
 * single-dash spelling or `--var`), the file or stdin, and `parseJobspec`'s errors as an
 * {@link InputError} (exit 2) listing every problem with its line.
 * @module
 */
import { parseArgs } from 'node:util';
import { parseJobspec, type ApiJob } from '../../../agent/jobspec/index.ts';
import { JobspecError } from '../../../model/errors.ts';
import { readInput } from '../alloc-file.ts';
import { InputError, UsageError } from '../errors.ts';
import type { CliIO } from '../io.ts';
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

/** Parses `-var`/`-var-file` (single or double dash) plus `extra` flags. */
export function parseJobFileArgs(command: string, argv: string[], extra: Record<string, { type: 'string' | 'boolean' }> = {}): JobFileArgs {
  const norm = argv.map((a) => (/^-var(-file)?(=|$)/.test(a) ? `-${a}` : a));
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

/** Reads and parses a job file (`-` for stdin) into Nomad's API job; problems are an InputError. */
export async function loadJobFile(path: string, args: JobFileArgs, io: CliIO): Promise<{ api: ApiJob; source: string }> {
  const { text, source } = await readInput(path, io.stdin);
  try {
    const api = await parseJobspec(text, { filename: source, vars: args.vars, varFiles: args.varFiles });
    return { api, source };
  } catch (err) {
    if (err instanceof JobspecError) {
      const loc = err.line ? `:${err.line}${err.column ? `:${err.column}` : ''}` : '';
      const message = err.message.startsWith(`${source}${loc}: `) ? err.message.slice(`${source}${loc}: `.length) : err.message;
      throw new InputError(`${source}${loc}`, message, err.issues, { cause: err });
    }
    throw err;
  }
}
