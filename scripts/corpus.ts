/**
 * `npm run corpus`: reads every job file of the shared corpus of real Nomad job files (outside
 * the repository: `BERTH_CORPUS`, default `../shared/corpus/jobs`) through `parseJobspec` and the
 * agent's decode (`jobFromApi`), and prints one line per file: `parsed`, `refused: <every refused
 * stanza>` or `error: <the first problem>`, then the totals. A `<file>.vars` beside a job file holds
 * the command-line arguments its source runs it with (`-var` then `name=value`, a line each), given
 * as `vars`. With `--run`, every file that parses is also registered on a real agent and watched
 * (scripts/corpus-run.ts). Not part of `npm test`.
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JobspecError } from '../index.ts';
import { jobFromApi, parseJobspec } from '../agent/jobspec/index.ts';
import { cliVars, runOnAgent } from './corpus-run.ts';

/** One file's outcome. */
export interface CorpusResult {
  file: string;
  outcome: 'parsed' | 'refused' | 'error';
  detail: string;
}

/** The corpus directory: `BERTH_CORPUS`, or `../shared/corpus/jobs` beside the checkout. */
export function corpusDir(): string {
  return resolve(process.env.BERTH_CORPUS ?? resolve(import.meta.dirname, '..', '..', 'shared', 'corpus', 'jobs'));
}

/** The job files of a corpus directory (not its `.vars` files, templates or data files). */
export function corpusFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.(nomad|hcl)$/.test(f) || /\.nomad\.hcl$/.test(f))
    .sort();
}

/** Parses and decodes one corpus file. */
export async function runCorpusFile(dir: string, file: string): Promise<CorpusResult> {
  const path = join(dir, file);
  const vars = existsSync(`${path}.vars`) ? cliVars(readFileSync(`${path}.vars`, 'utf8')) : {};
  try {
    const api = await parseJobspec(readFileSync(path, 'utf8'), { filename: path, vars });
    jobFromApi(api);
    return { file, outcome: 'parsed', detail: '' };
  } catch (e) {
    if (e instanceof JobspecError && e.unsupported.length) {
      const stanzas = [...new Set(e.unsupported.map((u) => u.stanza))];
      const others = e.issues.length - e.unsupported.length;
      return { file, outcome: 'refused', detail: `${stanzas.join(', ')}${others > 0 ? ` (and ${others} other problem${others > 1 ? 's' : ''})` : ''}` };
    }
    const first = e instanceof JobspecError && e.issues.length ? e.issues[0]! : (e as Error).message.split('\n')[0]!;
    return { file, outcome: 'error', detail: first.replace(`${path}:`, '') };
  }
}

/** Runs the whole corpus; undefined when the directory is absent. */
export async function runCorpus(dir: string): Promise<CorpusResult[] | undefined> {
  if (!existsSync(dir)) return undefined;
  const out: CorpusResult[] = [];
  for (const f of corpusFiles(dir)) out.push(await runCorpusFile(dir, f));
  return out;
}

async function main(): Promise<void> {
  const dir = corpusDir();
  const results = await runCorpus(dir);
  if (!results) {
    console.log(`corpus: ${dir} is absent (set BERTH_CORPUS); skipped`);
    return;
  }
  const width = Math.max(...results.map((r) => r.file.length));
  for (const r of results) console.log(`${r.file.padEnd(width)}  ${r.outcome}${r.detail ? `: ${r.detail}` : ''}`);
  const count = (o: CorpusResult['outcome']) => results.filter((r) => r.outcome === o).length;
  console.log(`\n${results.length} files: ${count('parsed')} parsed, ${count('refused')} refused, ${count('error')} errors`);
  if (!process.argv.includes('--run')) return;
  console.log(`\nOn a berth agent -dev (each parsed file registered, watched up to 20 s, purged):`);
  const runs = await runOnAgent(dir, results, { log: (r) => console.log(`${r.file.padEnd(width)}  ${r.outcome}${r.detail ? `: ${r.detail}` : ''}`) });
  const n = (o: string) => runs.filter((r) => r.outcome === o).length;
  console.log(
    `\n${runs.length} parsed files: ${n('ran')} ran, ${n('waits')} wait for a launch, ${n('failed')} failed, ${n('queued')} queued, ${n('pending')} pending`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
