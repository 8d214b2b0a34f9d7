/** Types of scripts/survivors.mjs, for the spec that runs its check. */

/** What a survivor and an entry both say of a mutant: where it is and what it does. */
export interface Mutant {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  mutator: string;
  replacement: string;
}
/** A surviving (or uncovered) mutant of a report, with its source line. */
export interface Survivor extends Mutant {
  status: 'Survived' | 'NoCoverage';
  original: string;
}
/** One entry of docs/mutation-survivors.md. */
export interface Entry extends Mutant {
  kind: 'equivalent' | 'untestable' | 'gap' | 'TODO';
  why: string;
  lineNo: number;
  /** The mutated source line written under the entry (cut short with `…` when long). */
  original: string;
}
/** Path of docs/mutation-survivors.md. */
export const DOC: string;
/** The kinds an entry may have. */
export const KINDS: readonly string[];
/** A replacement as the doc shows it. */
export function shown(replacement: string): string;
/** Where a mutant is: `line:column-endColumn`, or `line:column-endLine:endColumn`. */
export function spanOf(m: { line: number; column: number; endLine: number; endColumn: number }): string;
/** The key an entry and a report mutant share: file, span, mutator, replacement. */
export function keyOf(file: string, span: string, mutator: string, replacement: string): string;
/** Whether the line written under an entry is this source line (or, cut short with `…`, its start). */
export function sameLine(written: string, source: string): boolean;
/** References in whys to a `line:column` that is not an entry of the same file. */
export function danglingRefs(entries: Map<string, Entry>): { lineNo: number; ref: string }[];
/** A source line as shown under an entry. */
export function shownLine(line: string): string;
/** One entry line, without its why. */
export function entryHead(m: Pick<Survivor, 'line' | 'column' | 'endLine' | 'endColumn' | 'mutator' | 'replacement'>): string;
/** The survivors of some reports, by key. */
export function survivorsOf(reports: unknown[]): Map<string, Survivor>;
/** The committed reports, or the given paths. */
export function loadReports(paths: string[]): unknown[];
/** The doc's entries, by key; throws on a malformed entry. */
export function parseDoc(text: string): Map<string, Entry>;
/** Unlisted survivors and stale entries (matched by key and by the source line under the entry). */
export function compare(survivors: Map<string, Survivor>, entries: Map<string, Entry>): { unlisted: Survivor[]; stale: (Entry & { key: string })[] };
/** Moves stale entries to the line:column their code moved to; references in whys follow. */
export function rekey(text: string, unlisted: Survivor[], stale: (Entry & { key: string })[]): { text: string; moved: number };
/** The doc text without the stale entries and the lines under them. */
export function prune(text: string, stale: (Entry & { key: string })[]): string;
