/**
 * Tokens of HCL2's expression syntax. Strings are not tokenised here: the parser reads quoted
 * templates itself, since they nest expressions.
 * @module
 */
import { HclDiagnostic } from './errors.ts';

/** One token. */
export interface Token {
  type: 'ident' | 'number' | 'punct' | 'quote' | 'eof';
  text: string;
  start: number;
  end: number;
}

const PUNCT = [
  '...',
  '~',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '=>',
  '[',
  ']',
  '(',
  ')',
  '{',
  '}',
  ',',
  '.',
  '?',
  ':',
  '=',
  '!',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
];

// Sticky: matched at the offset in the whole text, so a name or number of any length is one token
// and no slice of the text is copied per token.
const IDENT = /[A-Za-z_][\w-]*/y;
const NUMBER = /\d+(\.\d+)?([eE][+-]?\d+)?/y;

/** Reads one token of `src` at `i` (after skipping whitespace and comments). */
export function nextToken(src: string, i: number): Token {
  i = skipSpace(src, i);
  if (i >= src.length) return { type: 'eof', text: '', start: i, end: i };
  const c = src[i]!;
  if (c === '"') return { type: 'quote', text: '"', start: i, end: i + 1 };
  IDENT.lastIndex = i;
  const ident = IDENT.exec(src);
  if (ident) return { type: 'ident', text: ident[0], start: i, end: i + ident[0].length };
  NUMBER.lastIndex = i;
  const num = NUMBER.exec(src);
  if (num) return { type: 'number', text: num[0], start: i, end: i + num[0].length };
  for (const p of PUNCT) if (src.startsWith(p, i)) return { type: 'punct', text: p, start: i, end: i + p.length };
  throw new HclDiagnostic('Invalid character', `This character is not used within the language: ${JSON.stringify(c)}.`, i);
}

/** Skips whitespace, newlines and `#`, `//`, `/* *\/` comments. */
export function skipSpace(src: string, i: number): number {
  for (;;) {
    while (i < src.length && /\s/.test(src[i]!)) i++;
    if (src[i] === '#' || src.startsWith('//', i)) {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl + 1;
    } else if (src.startsWith('/*', i)) {
      const close = src.indexOf('*/', i + 2);
      i = close < 0 ? src.length : close + 2;
    } else return i;
  }
}
