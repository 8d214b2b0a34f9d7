/**
 * Reads a doc's behavioural claims and the specs they name. A claim is a paragraph or a list item
 * (headings, front matter and code blocks are not); it names its backing spec as the spec file in
 * backticks followed by one or more quoted pieces of test titles in that file:
 * `` `spec/actors/gc/collector.spec.ts` "over gcMaxAllocs", "gcIntervalMs 0" ``.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One paragraph or list item of a doc, with where it starts. */
export interface Claim {
  line: number;
  text: string;
  cites: Array<{ file: string; titles: string[] }>;
  /** Why the paragraph claims no behaviour (an introduction, a pointer, a how-to), when it says so. */
  notAClaim?: string;
}

/** A paragraph that claims no behaviour says so, and why: `<!-- not a claim: a pointer to cli.md -->`. */
const NOT_A_CLAIM = /<!--\s*not a claim:\s*([^]*?)\s*-->/;

const CITE = /`(spec\/[\w./-]+\.spec\.ts)`((?:\s*,?\s*"[^"]+")+)/g;

/** The claims of a markdown text, whitespace folded so a quoted title may wrap. */
export function claimsOf(markdown: string): Claim[] {
  const lines = markdown.split('\n');
  const out: Claim[] = [];
  let cur: { line: number; parts: string[] } | undefined;
  const end = () => {
    if (!cur) return;
    const text = cur.parts.join(' ').replace(/\s+/g, ' ').trim();
    const cites = [...text.matchAll(CITE)].map((m) => ({ file: m[1]!, titles: [...m[2]!.matchAll(/"([^"]+)"/g)].map((t) => t[1]!) }));
    const why = NOT_A_CLAIM.exec(text)?.[1];
    out.push({ line: cur.line, text, cites, ...(why !== undefined && { notAClaim: why }) });
    cur = undefined;
  };
  let i = 0;
  if (lines[0] === '---') {
    i = lines.indexOf('---', 1) + 1;
  }
  let fenced = false;
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^\s*(```|~~~)/.test(l)) {
      end();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (l.trim() === '' || l.startsWith('#')) {
      end();
      continue;
    }
    if (/^\s*([-*]|\d+\.)\s/.test(l)) end();
    if (!cur) cur = { line: i + 1, parts: [] };
    cur.parts.push(l.replace(/^\s*([-*]|\d+\.)\s/, ''));
  }
  end();
  return out;
}

/** The literal test titles (`it('…')`) of a spec's source, whitespace folded. */
export function testTitles(source: string): string[] {
  const titles: string[] = [];
  for (const m of source.matchAll(/\bit\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)) titles.push(m[2]!.replace(/\\(.)/g, '$1').replace(/\s+/g, ' '));
  return titles;
}

/** What is wrong with a doc's citations, one line per problem (none: every claim is backed). */
export function claimProblems(doc: string, markdown: string, root: string): string[] {
  const problems: string[] = [];
  for (const c of claimsOf(markdown)) {
    const at = `${doc}:${c.line}`;
    if (c.notAClaim !== undefined) {
      if (c.notAClaim === '') problems.push(`${at}: "not a claim" must say why`);
      continue;
    }
    if (c.cites.length === 0) problems.push(`${at}: names no spec: ${c.text.slice(0, 80)}…`);
    for (const { file, titles } of c.cites) {
      const path = join(root, file);
      if (!existsSync(path)) {
        problems.push(`${at}: ${file} does not exist`);
        continue;
      }
      const have = testTitles(readFileSync(path, 'utf8'));
      for (const t of titles) if (!have.some((h) => h.includes(t))) problems.push(`${at}: no test in ${file} has "${t}" in its title`);
    }
  }
  return problems;
}
