/**
 * One pass over HCL text that records where every `word` and `word "label"` starts, and where
 * every line starts, so that ordering labelled blocks and locating a problem are lookups instead of
 * a scan of the whole text each (a file of 4,000 groups was quadratic before).
 * @module
 */

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** One `word` (optionally `word "label"`) followed by `=`, `{` or `"`, at offset `at`. */
interface Occurrence {
  at: number;
  label?: string;
}

/**
 * A word that starts a block or an attribute: after the start of the text, whitespace or `{`,
 * then an optional quoted label, then `=`, `{` or `"`. The lookbehind leaves the `{` of one block to
 * start the next match.
 */
const WORD = /(?<=^|[\s{])([A-Za-z_][\w-]*)(?:\s+"([^"\n]*)")?(?=\s*[={"])/g;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let scans = 0;

/** How many whole-text scans the jobspec has made since the process started (for the linearity spec). */
export function textScans(): number {
  return scans;
}

/** Where words, labels and lines start in one text; built once per parse. */
export class SourceIndex {
  private readonly words = new Map<string, Occurrence[]>();
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    scans++;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.lineStarts.push(i + 1);
    for (const m of text.matchAll(WORD)) {
      const list = this.words.get(m[1]!) ?? [];
      if (list.length === 0) this.words.set(m[1]!, list);
      list.push({ at: m.index, label: m[2] });
    }
  }

  /** Position of character offset `i`. */
  positionOf(i: number): Position {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= i) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: i - this.lineStarts[lo]! + 1 };
  }

  /** The first offset >= `from` of `word` (with `label`, when given). */
  find(word: string, label: string | undefined, from: number): number | undefined {
    const list = this.words.get(word);
    if (!list) return /^[A-Za-z_][\w-]*$/.test(word) ? undefined : this.scan(word, label, from);
    // Binary search for the first occurrence at or after `from`, then the first with the label.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.at < from) lo = mid + 1;
      else hi = mid;
    }
    if (label === undefined) return list[lo]?.at;
    for (let i = lo; i < list.length; i++) if (list[i]!.label === label) return list[i]!.at;
    return undefined;
  }

  /** A word that is not an HCL identifier (a quoted map key, say): found the slow way, rarely. */
  private scan(word: string, label: string | undefined, from: number): number | undefined {
    scans++;
    const re = new RegExp(`(^|[\\s{])${escapeRe(word)}${label !== undefined ? `\\s+"${escapeRe(label)}"` : ''}\\s*[={"]`, 'gm');
    re.lastIndex = from;
    const m = re.exec(this.text);
    return m ? m.index + m[1]!.length : undefined;
  }

  /** The offset of the first `word "label"` (Infinity when absent), for ordering labels. */
  firstLabelled(word: string, label: string): number {
    return this.firstOf(word).get(label) ?? Infinity;
  }

  /**
   * Places a `word "label"` block that a `dynamic` block at offset `at` generated (it is not in the
   * text), so labelled blocks keep the file's order with it where the `dynamic` block is.
   */
  placeGenerated(word: string, label: string, at: number): void {
    const first = this.firstOf(word);
    if (!first.has(label)) first.set(label, at);
  }

  private firstOf(word: string): Map<string, number> {
    let first = this.labelFirst.get(word);
    if (!first) {
      first = new Map();
      for (const o of this.words.get(word) ?? []) if (o.label !== undefined && !first.has(o.label)) first.set(o.label, o.at);
      this.labelFirst.set(word, first);
    }
    return first;
  }

  private readonly labelFirst = new Map<string, Map<string, number>>();
}
