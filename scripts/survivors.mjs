// The surviving mutants, one by one: every mutant the last `npm run mutate` left alive (survived or
// not covered) must be named in docs/mutation-survivors.md with why, and every entry there must
// still be a survivor. Reads the committed incremental reports (reports/mutation/<group>.incremental.json).
//
//   node scripts/survivors.mjs                 check: exit 1 on an unlisted survivor, a stale entry, or
//                                              a why naming a line:column that is not an entry
//   node scripts/survivors.mjs todo [file…]    the unlisted ones, as entries to fill in (with the
//                                              original line under each)
//   node scripts/survivors.mjs rekey           move entries whose code moved to its new line:column
//   node scripts/survivors.mjs prune           drop entries whose mutant no longer survives
//   --report <path>                            read this report (repeatable) instead of the committed ones
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUPS } from './mutate-groups.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DOC = join(root, 'docs', 'mutation-survivors.md');
/** The kinds an entry may have: the first word after the colon. */
export const KINDS = ['equivalent', 'untestable', 'gap'];

/** A mutant's replacement as the doc shows it: one line, at most 60 characters. */
export function shown(replacement) {
  const one = String(replacement ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

/**
 * Where a mutant is: `line:column-endColumn`, or `line:column-endLine:endColumn` over several
 * lines. The end tells apart mutants that start at the same place (`a && b` and `a` made `true`).
 */
export function spanOf(m) {
  return `${m.line}:${m.column}-${m.endLine === m.line ? m.endColumn : `${m.endLine}:${m.endColumn}`}`;
}

/** The key an entry and a report mutant share: file, span, mutator and replacement. */
export function keyOf(file, span, mutator, replacement) {
  return `${file} ${span} ${mutator} ${shown(replacement)}`;
}

/** A source line as `todo` shows it under an entry: trimmed, at most 110 characters. */
export function shownLine(line) {
  const t = line.trim();
  return t.length > 110 ? `${t.slice(0, 109)}…` : t;
}

/**
 * Whether the line written under an entry is this source line: equal, or (cut short with `…`)
 * its beginning.
 */
export function sameLine(written, source) {
  const t = source.trim();
  return written.endsWith('…') ? t.startsWith(written.slice(0, -1)) : written === t;
}

/** Markdown code span for a text that may itself hold backticks. */
function code(text) {
  const runs = text.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  return fence.length > 1 || text.startsWith('`') || text.endsWith('`') ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/** One entry line (without its why). */
export function entryHead(m) {
  return `- ${spanOf(m)} ${m.mutator} → ${code(shown(m.replacement))}`;
}

/** The survivors (survived or no coverage) of one or more reports. */
export function survivorsOf(reports) {
  const out = new Map();
  for (const report of reports) {
    for (const [file, { source, mutants }] of Object.entries(report.files)) {
      const lines = source.split('\n');
      for (const m of mutants) {
        if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue;
        const { line, column } = m.location.start;
        const { line: endLine, column: endColumn } = m.location.end;
        const s = {
          file,
          line,
          column,
          endLine,
          endColumn,
          mutator: m.mutatorName,
          replacement: m.replacement ?? '',
          status: m.status,
          original: lines[line - 1] ?? '',
        };
        out.set(keyOf(file, spanOf(s), s.mutator, s.replacement), s);
      }
    }
  }
  return out;
}

/** The committed reports (or the given paths). */
export function loadReports(paths) {
  const files = paths.length ? paths : Object.keys(GROUPS).map((g) => join(root, 'reports', 'mutation', `${g}.incremental.json`));
  return files.filter((f) => existsSync(f)).map((f) => JSON.parse(readFileSync(f, 'utf8')));
}

const ENTRY = /^- (\d+):(\d+)-(?:(\d+):)?(\d+) (\w+) → (`+) ?(.*?) ?\6(?::\s*(.*))?$/;
const SECTION = /^## `([^`]+)`\s*$/;
/** An entry's span, as the line begins. */
const HEAD = /^- \d+:\d+-(?:\d+:)?\d+ /;

/** The doc's entries: key → { file, line, kind, why, lineNo }. Throws on a malformed entry. */
export function parseDoc(text) {
  const entries = new Map();
  let file;
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const sec = SECTION.exec(raw);
    if (sec) {
      file = sec[1];
      return;
    }
    if (!raw.startsWith('- ') || !file) return;
    const e = ENTRY.exec(raw);
    if (!e) throw new Error(`docs/mutation-survivors.md:${i + 1}: not an entry ("- line:col-endCol Mutator → \`replacement\`: kind: why")`);
    const [, line, column, endLine = line, endColumn, mutator, , replacement, why = ''] = e;
    const kind = why.split(/[:\s]/)[0].trim();
    // TODO marks an entry not triaged yet: allowed in the file, but the check fails on it.
    if (kind !== 'TODO' && (!KINDS.includes(kind) || why.length < kind.length + 8))
      throw new Error(`docs/mutation-survivors.md:${i + 1}: the why must start with one of ${KINDS.join(', ')} and say why`);
    const at = { line: Number(line), column: Number(column), endLine: Number(endLine), endColumn: Number(endColumn) };
    const key = keyOf(file, spanOf(at), mutator, replacement);
    if (entries.has(key)) throw new Error(`docs/mutation-survivors.md:${i + 1}: listed twice`);
    // The original source line, as `todo` wrote it under the entry (used to re-key moved code).
    const under = /^ {2}(`+) ?(.*?) ?\1\s*$/.exec(lines[i + 1] ?? '');
    if (!under) throw new Error(`docs/mutation-survivors.md:${i + 2}: the mutated source line must be written under the entry (indented code span)`);
    entries.set(key, { file, kind, why, lineNo: i + 1, ...at, mutator, replacement, original: under[2] });
  });
  return entries;
}

/**
 * Unlisted survivors and stale entries. An entry matches a survivor by key and by the source line
 * written under it: the same mutant on a line whose code changed is a different mutant (its why
 * may no longer hold), so it is both unlisted and stale until re-keyed or triaged again.
 */
export function compare(survivors, entries) {
  const matches = (k) => {
    const s = survivors.get(k);
    const e = entries.get(k);
    return s !== undefined && e !== undefined && sameLine(e.original, s.original);
  };
  const unlisted = [...survivors.entries()].filter(([k]) => !matches(k)).map(([, s]) => s);
  const stale = [...entries.entries()].filter(([k]) => !matches(k)).map(([k, e]) => ({ key: k, ...e }));
  return { unlisted, stale };
}

/**
 * Code moved (an edit above it): a stale entry whose file, mutator, replacement and original line
 * match an unlisted survivor (the nearest in the same column, when several lines read the same)
 * takes its line:column. Returns the new doc text and how many entries moved.
 */
export function rekey(text, unlisted, stale) {
  const out = text.split('\n');
  let moved = 0;
  const taken = new Set();
  const moves = new Map();
  for (const e of stale) {
    const same = unlisted.filter(
      (u) => !taken.has(u) && u.file === e.file && u.mutator === e.mutator && shown(u.replacement) === shown(e.replacement) && sameLine(e.original, u.original),
    );
    const near = same.filter((u) => u.column === e.column).sort((a, b) => Math.abs(a.line - e.line) - Math.abs(b.line - e.line));
    const pick =
      same.length === 1
        ? same[0]
        : near.length && (near.length === 1 || Math.abs(near[0].line - e.line) < Math.abs(near[1].line - e.line))
          ? near[0]
          : undefined;
    if (!pick) continue;
    taken.add(pick);
    out[e.lineNo - 1] = out[e.lineNo - 1].replace(HEAD, `- ${spanOf(pick)} `);
    moves.set(`${e.file} ${e.line}:${e.column}`, `${pick.line}:${pick.column}`);
    moved++;
  }
  // References in whys (`as 315:7`) follow the entries they name, all in one pass (moves may swap).
  let file;
  out.forEach((raw, i) => {
    const sec = SECTION.exec(raw);
    if (sec) file = sec[1];
    const head = HEAD.exec(raw);
    if (!head || !file) return;
    out[i] = head[0] + raw.slice(head[0].length).replace(REF, (ref) => moves.get(`${file} ${ref}`) ?? ref);
  });
  return { text: out.join('\n'), moved };
}

/** `line:column` references inside a why (to another entry of the same file). */
const REF = /(?<![\w:.])(\d+):(\d+)(?![\w:])/g;

/**
 * References in whys to an entry that is not in the same file's list (its code moved and the
 * reference did not follow, or its mutant was killed): the why then points at nothing.
 */
export function danglingRefs(entries) {
  const at = new Set([...entries.values()].map((e) => `${e.file} ${e.line}:${e.column}`));
  const out = [];
  for (const e of entries.values()) for (const [ref] of e.why.matchAll(REF)) if (!at.has(`${e.file} ${ref}`)) out.push({ lineNo: e.lineNo, ref });
  return out;
}

/** The doc text without the stale entries (each with the original line written under it). */
export function prune(text, stale) {
  const lines = text.split('\n');
  const drop = new Set(stale.flatMap((s) => (/^ {2}`/.test(lines[s.lineNo] ?? '') ? [s.lineNo, s.lineNo + 1] : [s.lineNo])));
  return lines.filter((_, i) => !drop.has(i + 1)).join('\n');
}

function main() {
  const argv = process.argv.slice(2);
  const reports = [];
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--report') reports.push(argv[++i]);
    else rest.push(argv[i]);
  }
  const [cmd = 'check', ...files] = rest;
  const survivors = survivorsOf(loadReports(reports));
  const text = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const entries = parseDoc(text);
  const { unlisted, stale } = compare(survivors, entries);
  if (cmd === 'todo') {
    const byFile = new Map();
    for (const s of unlisted) if (!files.length || files.some((f) => s.file.startsWith(f))) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s]);
    for (const [file, list] of byFile) {
      console.log(`\n## \`${file}\`\n`);
      for (const s of list.sort((a, b) => a.line - b.line || a.column - b.column)) {
        console.log(`${entryHead(s)}: TODO${s.status === 'NoCoverage' ? ' (no coverage)' : ''}`);
        console.log(`  ${code(shownLine(s.original))}`);
      }
    }
    return;
  }
  if (cmd === 'rekey') {
    const { text: next, moved } = rekey(text, unlisted, stale);
    writeFileSync(DOC, next);
    console.log(`re-keyed ${moved} entries whose code moved`);
    return;
  }
  if (cmd === 'prune') {
    writeFileSync(DOC, prune(text, stale));
    console.log(`dropped ${stale.length} entries whose mutant no longer survives`);
    return;
  }
  const kinds = Object.fromEntries([...KINDS, 'TODO'].map((k) => [k, 0]));
  for (const e of entries.values()) kinds[e.kind]++;
  console.log(`${survivors.size} surviving mutants; listed: ${[...KINDS, 'TODO'].map((k) => `${kinds[k]} ${k}`).join(', ')}`);
  for (const e of entries.values()) if (e.kind === 'TODO') console.log(`not triaged: docs/mutation-survivors.md:${e.lineNo}`);
  for (const s of unlisted) console.log(`unlisted: ${s.file} ${entryHead(s).slice(2)}`);
  for (const s of stale) console.log(`stale (no longer survives): docs/mutation-survivors.md:${s.lineNo} ${s.key}`);
  const dangling = danglingRefs(entries);
  for (const d of dangling) console.log(`docs/mutation-survivors.md:${d.lineNo}: the why names ${d.ref}, which is not an entry of its file`);
  if (unlisted.length || stale.length || kinds.TODO || dangling.length) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
