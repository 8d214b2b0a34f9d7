/**
 * `berth var put [-check-index=N] [-force] [-in=json] [-out=none|json|table] [-verbose]
 * <path|-|@spec.json> [<-|@spec.json>] [KEY=VALUE ...]`: creates or updates a variable, as
 * `nomad var put` does. Without `-force` the write is a check-and-set on the index the spec (or
 * `-check-index`) names, 0 (must not exist yet) when none does; a conflict prints nomad's message
 * and exits 1. Values may be `@file` (the file's contents) or `-` (stdin); `KEY=` removes an item.
 * @module
 */
import type { Readable } from 'node:stream';
import { apiCommand } from '../nomad/api-command.ts';
import { readInput, parseJsonText } from '../alloc-file.ts';
import { InputError, UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import {
  casConflictOf,
  checkIndexFlag,
  cleanPath,
  isTerminal,
  refuseWildcard,
  variableJson,
  variableTable,
  varUrl,
  writeCasConflict,
  type ApiVariable,
} from './common.ts';

const NAME = 'var put';
const HELP = `usage: berth var put [options] <path> [<-|@spec.json>] [KEY=VALUE ...]
       berth var put [options] <-|@spec.json> [KEY=VALUE ...]

Creates or updates a variable. Items come from a JSON variable specification (- for stdin,
@file), from KEY=VALUE arguments, or both (arguments win). A value may be @file (the file's
contents), - (stdin) or \\@text (a literal @); KEY= removes the item.

  -check-index N   write only if the variable's modify index is N (0: only if it does not exist);
                   a spec's ModifyIndex is used when this is not given
  -force           write whatever the variable's index
  -in json         the format of a spec read from stdin (berth reads JSON only)
  -out FORMAT      none (the default on a terminal: "Created variable ..."), json (the default
                   otherwise), table
  -verbose         say what is done on stderr

Exit codes: 0 written; 1 a check-and-set conflict or an error; 2 usage or input error.`;

/** Reads stdin once (nomad: "stdin already consumed" the second time). */
function stdinOnce(stdin: Readable): () => Promise<string> {
  let used = false;
  return async () => {
    if (used) throw new UsageError('stdin already consumed', NAME);
    used = true;
    return (await readInput('-', stdin)).text;
  };
}

/** A variable specification's fields (JSON), checked. */
function parseSpec(text: string, source: string): Partial<ApiVariable> {
  const v = parseJsonText(text, source);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError(source, 'a variable specification is a JSON object');
  return v as Partial<ApiVariable>;
}

/** A spec file's text, by its extension (or `-in`). */
async function readSpecFile(ref: string, inFmt: string | undefined, stdin: Readable): Promise<{ text: string; source: string }> {
  const file = ref.slice(1);
  if (file.endsWith('.hcl')) throw new UsageError(`${file}: berth reads JSON variable specifications only (nomad's -in=hcl is not supported)`, NAME);
  if (!file.endsWith('.json') && inFmt !== 'json') throw new UsageError(`Unable to determine format of ${ref}; Use the -in flag to specify it.`, NAME);
  return readInput(file, stdin);
}

/** nomad's KVBuilder: `KEY=VALUE`, `KEY=@file`, `KEY=-`, `KEY=\@text`, and `-` or `@file` alone for a JSON object of items. */
async function kvItems(args: string[], stdin: () => Promise<string>, read: (file: string) => Promise<string>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const add = (k: string, v: unknown, arg: string) => {
    if (typeof v !== 'string') throw new UsageError(`Failed to parse K=V data: invalid key/value pair ${JSON.stringify(arg)}: ${k} is not a string`, NAME);
    if (k in out) throw new UsageError(`Failed to parse K=V data: key ${JSON.stringify(k)} given twice`, NAME);
    out[k] = v;
  };
  for (const arg of args) {
    if (arg === '') continue;
    const eq = arg.indexOf('=');
    if (eq < 0) {
      if (arg !== '-' && !arg.startsWith('@'))
        throw new UsageError(`Failed to parse K=V data: invalid key/value pair ${JSON.stringify(arg)}: format must be key=value`, NAME);
      const source = arg === '-' ? '<stdin>' : arg.slice(1);
      const obj = parseJsonText(arg === '-' ? await stdin() : await read(arg.slice(1)), source);
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new InputError(source, 'items are a JSON object');
      for (const [k, v] of Object.entries(obj)) add(k, v, arg);
      continue;
    }
    const key = arg.slice(0, eq);
    let value = arg.slice(eq + 1);
    if (value.startsWith('@')) value = await read(value.slice(1));
    else if (value.startsWith('\\@')) value = value.slice(1);
    else if (value === '-') value = await stdin();
    add(key, value, arg);
  }
  return out;
}

/** An item key a template can only reach with `index` (nomad warns of it). */
const awkwardKey = (k: string) => {
  const bad = [...new Set(k.match(/[^_\p{N}\p{L}]/gu) ?? [])].sort();
  return bad.length
    ? `"${k}" contains characters [${bad.map((c) => `"${c}"`).join(',')}] that require the 'index' function for direct access in templates`
    : undefined;
};

/** `berth var put`. */
export const varPutCommand = apiCommand(
  { command: NAME, summary: 'create or update a variable', help: HELP },
  { 'check-index': 'string', force: 'boolean', in: 'string', out: 'string', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const verbose = (line: string) => flags.verbose && writeLine(io.stderr, line);
    const checkIndex = checkIndexFlag(NAME, flags['check-index']);
    refuseWildcard(NAME, flags.namespace);
    const inFmt = flags.in as string | undefined;
    if (inFmt !== undefined && inFmt !== 'json') throw new UsageError(`Invalid value for "-in"; berth reads json only, not ${JSON.stringify(inFmt)}`, NAME);
    const out = (flags.out as string | undefined) ?? (isTerminal(io.stdout) ? 'none' : 'json');
    if (!['none', 'json', 'table'].includes(out)) throw new UsageError('Invalid value for "-out"; valid values are [json, none, table]', NAME);
    if (positionals.length < 1) throw new UsageError(`Not enough arguments (expected >1, got ${positionals.length})`, NAME);
    const isRef = (a: string | undefined) => a === '-' || (a?.startsWith('@') ?? false);
    if (positionals.length === 1 && !isRef(positionals[0])) throw new UsageError('Must supply data', NAME);

    const stdin = stdinOnce(io.stdin);
    const readFileText = async (file: string) => (await readInput(file, io.stdin)).text;
    let spec: { text: string; source: string } | undefined;
    let path = '';
    const [first, ...more] = positionals;
    let rest = more;
    if (first === '-') spec = { text: await stdin(), source: '<stdin>' };
    else if (first!.startsWith('@')) spec = await readSpecFile(first!, inFmt, io.stdin);
    else {
      path = cleanPath(first!);
      verbose(`Writing to path "${path}"`);
      if (rest[0] === '-') spec = { text: await stdin(), source: '<stdin>' };
      else if (rest[0]?.startsWith('@')) spec = await readSpecFile(rest[0], inFmt, io.stdin);
      if (spec) rest = rest.slice(1);
    }

    const v: Partial<ApiVariable> = spec ? parseSpec(spec.text, spec.source) : {};
    const items: Record<string, string> = { ...(v.Items ?? {}) };
    const namespace = (flags.namespace as string | undefined) || process.env.NOMAD_NAMESPACE || '';
    // A namespace or path other than the spec's makes a copy: its indexes start again.
    let reset = false;
    if (namespace && namespace !== v.Namespace) [v.Namespace, reset] = [namespace, true];
    if (path && path !== v.Path) [v.Path, reset] = [path, true];
    if (reset) Object.assign(v, { CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0 });
    if (!v.Path) throw new UsageError('the variable needs a path (give one, or a spec with Path)', NAME);
    const warnings: string[] = [];
    for (const [k, value] of Object.entries(await kvItems(rest, stdin, readFileText))) {
      if (value === '') {
        verbose(k in items ? `Removed item "${k}"` : `Item "${k}" does not exist, continuing...`);
        delete items[k];
        continue;
      }
      const w = awkwardKey(k);
      if (w) warnings.push(w);
      items[k] = value;
    }
    const cas = checkIndex ?? v.ModifyIndex ?? 0;
    const body = { Namespace: v.Namespace ?? '', Path: v.Path, Items: items };
    let written: ApiVariable;
    try {
      written = (await api.json<ApiVariable>('PUT', varUrl(v.Path, flags.force ? '' : `?cas=${cas}`), body)).body;
    } catch (e) {
      const conflict = casConflictOf(e);
      if (!conflict) throw e;
      writeCasConflict(io.stderr, cas, conflict);
      return 1;
    }
    const done = `Created variable "${written.Path}" with modify index ${written.ModifyIndex}`;
    if (warnings.length) writeLine(io.stderr, `\nVariable Warnings:\n${warnings.map((w) => `* ${w}`).join('\n')}\n`);
    if (out === 'none') writeLine(io.stdout, done);
    else {
      verbose(done);
      writeLine(io.stdout, out === 'json' ? variableJson(written) : variableTable(written));
    }
    return 0;
  },
);
