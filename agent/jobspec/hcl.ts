/**
 * HCL2 text to plain JSON with HashiCorp's own parser (`@cdktf/hcl2json`, a wasm build of
 * hashicorp/hcl), plus what that JSON loses: the source order of labelled blocks (it sorts labels)
 * and where each block starts, so errors can name a line and column.
 * @module
 */
import { createRequire } from 'node:module';
import { errorText, JobspecError } from '../../index.ts';
import type { SourceIndex } from './source-index.ts';

const require = createRequire(import.meta.url);

type Hcl2Json = { parse(filename: string, text: string): Promise<Record<string, unknown>> };

let parser: Hcl2Json | undefined;

/** Parses HCL2 text; a syntax error is a JobspecError with the file, line and column the parser gives. */
export async function parseHcl(text: string, filename: string): Promise<Record<string, unknown>> {
  parser ??= require('@cdktf/hcl2json') as Hcl2Json;
  try {
    return await parser.parse(filename, text);
  } catch (err) {
    const msg = errorText(err);
    // "parse config: [file.hcl:3,12-4,1: Invalid expression; Expected the start of an expression ...]"
    // Several errors come joined; the first is the one to fix first. Each starts with the file's
    // own name (which may hold spaces: `<value for var.x>`), so that is what splits them.
    const at = `${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+),(\\d+)(?:-\\d+(?:,\\d+)?)?: `;
    const m = new RegExp(`${at}(.*?)(?= ${at}|\\]$|$)`, 's').exec(msg);
    const more = (msg.match(new RegExp(at, 'g'))?.length ?? 1) - 1;
    if (m)
      throw new JobspecError(`${m[3]!.trim()}${more > 0 ? ` (and ${more} more error${more > 1 ? 's' : ''} after it)` : ''}`, {
        file: filename,
        line: Number(m[1]),
        column: Number(m[2]),
      });
    throw new JobspecError(msg.replace(/^parse config: /, ''), { file: filename });
  }
}

export type { Position } from './source-index.ts';

/**
 * Finds a chain of blocks and finally a key in HCL text, each after the previous: `[['job','web'],
 * ['group','g'],['task','t'],['config']]`. Returns the offset of the last step found (good enough
 * to point a person at the right line; HCL2's JSON carries no positions). Lookups in `index`, no
 * scan of the text.
 */
export function locate(index: SourceIndex, steps: Array<[word: string, label?: string]>): number | undefined {
  let from = 0;
  let found: number | undefined;
  for (const [word, label] of steps) {
    const at = index.find(word, label, from);
    if (at === undefined) return found;
    found = at;
    from = found + 1;
  }
  return found;
}

/** The labels of `word` blocks in the order the text has them (hcl2json sorts them). */
export function labelOrder(index: SourceIndex, word: string, labels: string[]): string[] {
  return labels
    .map((l) => [l, index.firstLabelled(word, l)] as const)
    .sort((a, b) => a[1] - b[1])
    .map(([l]) => l);
}
