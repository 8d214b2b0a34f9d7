/**
 * Nomad job files for berth: `parseJobspec` reads HCL2 (with `variable` blocks, `-var` and
 * `-var-file` values) or JSON into Nomad's API `Job` (PascalCase, nanoseconds, canonical defaults
 * filled in: what `nomad job run -output` prints and `/v1/jobs/parse` returns); `jobFromApi` turns
 * that into berth's {@link Job} through the one schema, `jobToApi` goes back. Pure but for reading
 * the text (and `-var-file`s named by path).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { checkJob, JobspecError, jobToNomad, type Job, type UnsupportedStanza, errorText } from '../../index.ts';
import { groupAloneTasks } from './alone-tasks.ts';
import { canonicalizeJob } from './canonicalize.ts';
import { decodeBlock, type DecodeContext } from './decode.ts';
import { fillDecodeDefaults } from './decode-defaults.ts';
import { labelOrder, parseHcl, type Position } from './hcl.ts';
import { SourceIndex } from './source-index.ts';
import { locateBerthPath } from './locate.ts';
import { dirname, resolve } from 'node:path';
import { evaluateJobTree, type ExpressionProblem } from './hcl2/job.ts';
import { declaredVariables, MAX_SUBSTITUTED_STRING, MAX_SUBSTITUTED_TOTAL, resolveVariables, type VarFile, type VarValue } from './variables.ts';

export type { VarFile, VarValue } from './variables.ts';

/**
 * Nomad's API `Job` JSON: PascalCase fields, durations in nanoseconds (see Nomad's `api.Job`).
 * Typed loosely on purpose: it is data on its way in or out, checked by {@link jobFromApi}.
 */
export interface ApiJob {
  ID?: string;
  Name?: string;
  Type?: string;
  Priority?: number;
  TaskGroups?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/** Options of {@link parseJobspec}. */
export interface ParseJobspecOptions {
  /** The file name, for errors (`web.nomad.hcl:12:5: ...`); a `.json` name means JSON. */
  filename?: string;
  /** `-var name=value` values (strings are converted to the variable's declared type). */
  vars?: Record<string, string | VarValue>;
  /** `-var-file` files: paths (read here) or `{ filename, text }`; HCL or `.json`. */
  varFiles?: VarFile[];
  /** A stanza berth does not run: refused (default) or left out with a warning. */
  unsupported?: 'refuse' | 'warn';
  /** Called for each stanza left out in `'warn'` mode. */
  onWarning?: (w: UnsupportedStanza) => void;
  /** Reads a `-var-file` path (default: fs). */
  readFile?: (path: string) => Promise<string>;
  /**
   * Fill in Nomad's canonical defaults (default true). With false the job comes back as the file
   * has it (what `/v1/jobs/parse` answers without `Canonicalize`), still checked as canonicalised.
   */
  canonicalize?: boolean;
  /**
   * Whether `file`, `fileexists` and the other filesystem functions may read (Nomad's `AllowFS`:
   * true for the CLI, false for a server's `/v1/jobs/parse`). Default true.
   */
  allowFs?: boolean;
  /** The directory `file()` reads relative to (default: the job file's directory). */
  basedir?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses a Nomad job file (HCL2, or JSON as `{"Job": {...}}` or the bare job) into Nomad's API
 * Job, canonicalised, and checks it with berth's schema.
 * @throws JobspecError with file, line and column where known, the field path, a did-you-mean for
 *   unknown keys, and "<stanza> is not supported by berth (<path>)" refusals.
 * @example
 * const api = await parseJobspec(await readFile('web.nomad.hcl', 'utf8'), { filename: 'web.nomad.hcl', vars: { count: '3' } });
 * const job = jobFromApi(api);
 */
export async function parseJobspec(text: string, opts: ParseJobspecOptions = {}): Promise<ApiJob> {
  const filename = opts.filename ?? 'job.nomad.hcl';
  const json = filename.endsWith('.json') || text.trimStart().startsWith('{') ? parseJsonText(text, filename) : undefined;
  // HCL's JSON syntax ({"job": {"web": {...}}}) is a job file like any other; otherwise the API job.
  const hclJson = isObj(json) && ('job' in json || 'variable' in json);
  const hcl = json === undefined || hclJson;
  // Built once: every label order and every problem's line is a lookup in it.
  const source = hcl ? new SourceIndex(text) : undefined;
  const { api, problems } = source
    ? await fromHcl(source, filename, opts, hclJson ? json : undefined)
    : { api: apiJobOf(json, filename), problems: [] as Problem[] };
  const raw = opts.canonicalize === false ? structuredClone(api) : undefined;
  canonicalizeJob(api);
  // One validation: the same schema as parseAllocation, through the same Nomad mapping.
  try {
    checkJob(api, { unsupported: opts.unsupported, onWarning: opts.onWarning });
  } catch (e) {
    if (!(e instanceof JobspecError)) throw e;
    for (const line of e.issues) {
      const u = e.unsupported.find((x) => line.startsWith(`${x.stanza} is not supported`));
      const path = u?.path ?? line.split(': ')[0]!;
      // A refusal the decoder already reported (HCL input) is not repeated.
      if (problems.some((p) => p.line.endsWith(line) || (u && p.path === u.path))) continue;
      problems.push({ line, path, at: source ? locateBerthPath(source, api, path) : undefined, unsupported: u });
    }
  }
  if (problems.length) throw problemsError(afterExpressions(problems), filename);
  return raw ?? api;
}

/** One problem of a job file, with where it is when known. */
interface Problem {
  line: string;
  path: string;
  at?: Position;
  unsupported?: UnsupportedStanza;
  /** An expression that failed (its text is kept as written, so the decoder may complain of it too). */
  expression?: boolean;
}

/** Leaves out what the decoder or schema says of a value whose expression already failed there. */
function afterExpressions(problems: Problem[]): Problem[] {
  const failed = new Set(problems.filter((p) => p.expression && p.at).map((p) => `${p.at!.line}:${p.at!.column}`));
  return problems.filter((p) => p.expression || p.unsupported || !p.at || !failed.has(`${p.at.line}:${p.at.column}`));
}

function problemsError(unsorted: Problem[], filename: string): JobspecError {
  // In the order of the file (those without a position last), so the first is the first to fix.
  const problems = [...unsorted].sort((a, b) => (a.at?.line ?? Infinity) - (b.at?.line ?? Infinity) || (a.at?.column ?? 0) - (b.at?.column ?? 0));
  const lines = problems.map((p) => `${at(p.at)}${p.line}`);
  const first = problems[0]!;
  return new JobspecError(problems.length === 1 ? first.line : `invalid job (${problems.length} problems):\n  ${lines.join('\n  ')}`, {
    file: filename,
    line: first.at?.line,
    column: first.at?.column,
    path: first.path,
    issues: lines,
    unsupported: problems.flatMap((p) => (p.unsupported ? [p.unsupported] : [])),
  });
}

function parseJsonText(text: string, filename: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(errorText(e));
    const at = pos ? text.slice(0, Number(pos[1])) : undefined;
    throw new JobspecError(`invalid JSON: ${errorText(e).replace(/ in JSON at position \d+.*$/s, '')}`, {
      file: filename,
      ...(at !== undefined ? { line: at.split('\n').length, column: at.length - at.lastIndexOf('\n') } : {}),
    });
  }
}

function apiJobOf(json: unknown, filename: string): ApiJob {
  const job = isObj(json) && isObj(json.Job) && Object.keys(json).length === 1 ? json.Job : json;
  if (!isObj(job)) throw new JobspecError('a JSON job file holds {"Job": {...}} or the job object itself', { file: filename });
  return structuredClone(job) as ApiJob;
}

/** Where a top-level block starts. */
function blockAt(source: SourceIndex, word: string): Position | undefined {
  const i = source.find(word, undefined, 0);
  return i === undefined ? undefined : source.positionOf(i);
}

/**
 * Where an hcl2json path (`job.group.web[0].task.app[0].config[0].command`) is in the text:
 * each word found after the last, with its label when the next part is one.
 */
function hclPathAt(source: SourceIndex, path: string): Position | undefined {
  const found = hclPathOffset(source, path);
  return found === undefined ? undefined : source.positionOf(found);
}

/** The offset {@link hclPathAt} finds. */
function hclPathOffset(source: SourceIndex, path: string): number | undefined {
  const parts = path.split('.').map((p) => p.replace(/\[\d+\]$/, ''));
  let from = 0;
  let found: number | undefined;
  for (let i = 0; i < parts.length; i++) {
    const labelled = i + 1 < parts.length ? source.find(parts[i]!, parts[i + 1], from) : undefined;
    const at = labelled ?? source.find(parts[i]!, undefined, from);
    if (at === undefined) continue;
    if (labelled !== undefined) i++;
    from = found = at;
  }
  return found;
}

async function fromHcl(
  source: SourceIndex,
  filename: string,
  opts: ParseJobspecOptions,
  jsonRoot?: Record<string, unknown>,
): Promise<{ api: ApiJob; problems: Problem[] }> {
  const root = jsonRoot ?? (await parseHcl(source.text, filename));
  const known = ['job', 'variable', 'variables', 'locals'];
  // Every problem of the file is told in one pass: these join the decoder's and the schema's.
  const early: Problem[] = [];
  for (const k of Object.keys(root)) {
    if (!known.includes(k))
      early.push({ line: `unknown top-level block "${k}" (a job file holds one job block and variable blocks)`, path: k, at: blockAt(source, k) });
  }
  const declared = declaredVariables(root, filename);
  const values = await resolveVariables(declared, filename, opts.vars, opts.varFiles, opts.readFile ?? ((p) => readFile(p, 'utf8')));
  const jobs = root.job;
  const labels = isObj(jobs) ? labelOrder(source, 'job', Object.keys(jobs)) : [];
  if (labels.length !== 1)
    throw new JobspecError(labels.length ? `a job file holds one job; found ${labels.length}: ${labels.join(', ')}` : 'no job block (job "name" { ... })', {
      file: filename,
    });
  const id = labels[0]!;
  const bodies = (jobs as Record<string, unknown>)[id];
  const body = Array.isArray(bodies) ? bodies[0] : bodies;
  const whereOf = (path: string) => ({ path, file: filename });
  const unevaluated: ExpressionProblem[] = [];
  const substituted = evaluateJobTree(
    root,
    body,
    'job',
    {
      vars: values,
      basedir: opts.basedir ?? dirname(resolve(filename)),
      allowFs: opts.allowFs ?? true,
      bounds: { maxString: MAX_SUBSTITUTED_STRING, maxTotal: MAX_SUBSTITUTED_TOTAL },
      where: whereOf,
      generated: (type, label, path) => {
        const at = hclPathOffset(source, path);
        if (at !== undefined) source.placeGenerated(type, label, at);
      },
    },
    unevaluated,
  ) as Record<string, unknown>;
  for (const u of unevaluated) early.push({ line: `${u.path}: ${u.message}`, path: u.path, at: hclPathAt(source, u.path), expression: true });
  const ctx: DecodeContext = { source, issues: [], unsupported: [] };
  const api = decodeBlock('job', substituted, 'job', ctx, [['job', id]]) as ApiJob;
  groupAloneTasks(api, ctx);
  api.ID ??= id;
  api.Name ??= id;
  // What jobspec2 fills while decoding, so the non-canonical parse has it as Nomad's does.
  fillDecodeDefaults(api);
  const refused = opts.unsupported === 'warn' ? [] : ctx.unsupported;
  if (opts.unsupported === 'warn') for (const u of ctx.unsupported) opts.onWarning?.({ stanza: u.stanza, path: u.path });
  const problems: Problem[] = [
    ...early,
    ...refused.map((u) => ({
      line: `${u.stanza} is not supported by berth (${u.path})`,
      path: u.path,
      at: u.at,
      unsupported: { stanza: u.stanza, path: u.path },
    })),
    ...ctx.issues.map((i) => ({ line: `${i.path}: ${i.problem}`, path: i.path, at: i.at })),
  ];
  return { api, problems };
}

const at = (p: Position | undefined) => (p ? `${p.line}:${p.column}: ` : '');

/**
 * Nomad's API Job to berth's {@link Job}, through the one schema (unknown keys, refused stanzas and
 * bad values are a JobspecError naming the path).
 */
export function jobFromApi(apiJob: ApiJob, opts: Pick<ParseJobspecOptions, 'unsupported' | 'onWarning'> = {}): Job {
  return checkJob(apiJob, opts).job;
}

/** berth's {@link Job} as Nomad's API Job (PascalCase, nanoseconds). */
export function jobToApi(job: Job): ApiJob {
  return jobToNomad(job) as ApiJob;
}
