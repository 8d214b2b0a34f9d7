/**
 * Reading an allocation file for `run` and `validate`: the file (or stdin for `-`), its JSON, and
 * berth's validation, every failure as an {@link InputError} that names the file.
 *
 * Conveniences for hand-written files: `id` and `nodeId` may be left out (a random UUID and the
 * node `local` are filled in, by `parseAllocation`), `createTime` is now unless given, and a
 * task's driver must be one berth has.
 * @module
 */
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { InvalidAllocationError } from '../../model/errors.ts';
import { parseAllocation } from '../../model/parse.ts';
import type { Allocation } from '../../model/types.ts';
import { InputError } from './errors.ts';
import { errorText } from '../../model/error-text.ts';

/** The drivers a CLI client has (createClient's defaults). */
export const CLI_DRIVERS = ['raw_exec', 'exec', 'mock_driver'] as const;

/** The node id filled in when a file gives none. */
export const DEFAULT_NODE_ID = 'local';

/** A loaded allocation and where it came from. */
export interface LoadedAlloc {
  alloc: Allocation;
  /** The path as given, or `<stdin>`. */
  source: string;
}

/** Reads `path` (`-`: all of stdin) as text. */
export async function readInput(path: string, stdin: Readable): Promise<{ text: string; source: string }> {
  if (path === '-') {
    let text = '';
    stdin.setEncoding('utf8');
    for await (const chunk of stdin) text += chunk as string;
    return { text, source: '<stdin>' };
  }
  try {
    return { text: await readFile(path, 'utf8'), source: path };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : errorText(err);
    throw new InputError(path, `cannot read: ${why}`, [], { cause: err });
  }
}

/** JSON.parse with the file's name and the line and column of a syntax error. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const msg = errorText(err);
    const pos = /position (\d+)/.exec(msg);
    let where = '';
    if (pos) {
      const before = text.slice(0, Number(pos[1]));
      const line = before.split('\n').length;
      where = ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
    }
    // A job file given where an allocation is expected: say which command reads it.
    const hint = /^\s*(job|variable)\s+"/m.test(text) ? '; this looks like a Nomad job file: check it with berth job validate' : '';
    throw new InputError(source, `invalid JSON: ${msg.replace(/ in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, '')}${where}${hint}`, [], {
      cause: err,
    });
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Fills a missing create time (what a server would have set), in nanoseconds when the file is
 * Nomad API JSON; `parseAllocation` fills the id and node id.
 */
function withCreateTime(json: unknown, now: number): unknown {
  if (!isObj(json)) return json;
  const nomad = 'ID' in json || 'Job' in json || 'TaskGroup' in json || 'NodeID' in json;
  const created = nomad ? 'CreateTime' : 'createTime';
  if (json[created] !== undefined && json[created] !== null && json[created] !== 0) return json;
  return { ...json, [created]: nomad ? now * 1e6 : now };
}

/**
 * Every `field.path: problem` line of `json` as an allocation (none: `alloc` is set), from the one
 * schema `parseAllocation` uses, with the CLI's drivers: driver configs, unknown keys and refused
 * stanzas included, so `validate` approves exactly what `run` runs.
 */
export function allocIssues(json: unknown, now = Date.now()): { alloc?: Allocation; issues: string[] } {
  try {
    return { alloc: parseAllocation(withCreateTime(json, now), { nodeId: DEFAULT_NODE_ID, drivers: CLI_DRIVERS }), issues: [] };
  } catch (err) {
    if (err instanceof InvalidAllocationError) return { issues: err.issues };
    throw err;
  }
}

/**
 * Why `berth run` cannot run `alloc` on its own, or undefined. Waiting for a previous or preempted
 * allocation needs either that allocation in the same data dir (`local`: the ids stored there,
 * which the run restores and watches locally) or the servers (a `ServerRPC`), which a one-shot
 * command does not have.
 */
export function standaloneProblem(alloc: Allocation, local: ReadonlySet<string> = new Set()): string | undefined {
  const remote = (ids: string[]) => ids.some((id) => !local.has(id));
  const fields = [
    alloc.previousAllocation && remote([alloc.previousAllocation]) ? 'previousAllocation' : '',
    alloc.preemptedAllocations?.length && remote(alloc.preemptedAllocations) ? 'preemptedAllocations' : '',
  ].filter(Boolean);
  if (!fields.length) return undefined;
  const one = fields.length === 1;
  return (
    `${fields.join(' and ')} ${one ? 'makes' : 'make'} the allocation wait for others that are not in this data dir, and berth run cannot ask any ` +
    `servers about them; run it with the --data-dir where ${one ? 'that allocation' : 'those allocations'} ran, or remove ${one ? 'it' : 'them'} to run the allocation on its own`
  );
}

/** Reads, parses and validates an allocation file; throws an InputError listing every problem. */
export async function loadAllocation(path: string, stdin: Readable): Promise<LoadedAlloc> {
  const { text, source } = await readInput(path, stdin);
  const { alloc, issues } = allocIssues(parseJsonText(text, source));
  if (!alloc) throw new InputError(source, `invalid allocation (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n  ${issues.join('\n  ')}`, issues);
  return { alloc, source };
}
