/**
 * The code blocks of berth's Markdown docs, and which of them the test suite runs.
 *
 * The convention (also in docs/code-blocks.md): a fenced block's language decides.
 * - `ts`, `typescript`, `js`, `javascript`, `mjs`: a complete ES module, run on plain Node
 *   against the packed package (`import ... from 'berth-runtime'`); TypeScript is stripped of its
 *   types first, not type-checked.
 * - `sh`, `bash`, `shell`: run with `bash -euo pipefail` in a project where the packed package is
 *   installed (`npx berth` is its bin). The blocks of one file share a directory, in order.
 * - anything else (`console` for transcripts with `$ ` prompts, `text` for output and synopses,
 *   `hcl`, `json`, or no language at all): shown only, never run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How a block is run, or `undefined` when it is shown only. */
export type BlockKind = 'script' | 'shell' | undefined;

/** One fenced code block. */
export interface CodeBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word, lower-cased ('' when none). */
  lang: string;
  code: string;
  kind: BlockKind;
}

const SCRIPT = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const SHELL = new Set(['sh', 'bash', 'shell']);

/** Which kind of block a language makes. */
export function kindOf(lang: string): BlockKind {
  if (SCRIPT.has(lang)) return 'script';
  if (SHELL.has(lang)) return 'shell';
  return undefined;
}

/** Every fenced block in `text` (``` or ~~~ fences, up to three spaces of indentation). */
export function extractBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const out: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const lang = open[2]!.toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
      if (close.test(lines[j]!)) break;
      body.push(lines[j]!);
    }
    out.push({ file, line: i + 1, lang, code: body.join('\n') + '\n', kind: kindOf(lang) });
    i = j;
  }
  return out;
}

/** README.md and every docs/*.md of the repository at `root`, in a stable order. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** Every block of every doc file of the repository at `root`. */
export function repoBlocks(root: string): CodeBlock[] {
  return docFiles(root).flatMap((f) => extractBlocks(f, readFileSync(join(root, f), 'utf8')));
}
