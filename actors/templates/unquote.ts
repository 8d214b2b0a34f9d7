/**
 * Go's `strconv.Unquote` and `strconv.UnquoteChar` for template string and character constants.
 * @module
 */

/** Thrown for a malformed literal; Go's message is `invalid syntax`. */
export class SyntaxErr extends Error {
  constructor() {
    super('invalid syntax');
  }
}

/** Reads one (possibly escaped) character of a quoted literal: [code point, rest]. */
export function unquoteChar(s: string, q: string): [number, boolean, string] {
  const c = s.codePointAt(0);
  if (c === undefined) throw new SyntaxErr();
  const ch = String.fromCodePoint(c);
  if (ch === q && (q === "'" || q === '"')) throw new SyntaxErr();
  if (ch !== '\\') return [c, c >= 0x80, s.slice(ch.length)];
  if (s.length <= 1) throw new SyntaxErr();
  const e = s[1]!;
  s = s.slice(2);
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };
  if (e in simple) return [simple[e]!, false, s];
  if (e === 'x' || e === 'u' || e === 'U') {
    const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
    if (s.length < n || !/^[0-9a-fA-F]+$/.test(s.slice(0, n))) throw new SyntaxErr();
    const v = parseInt(s.slice(0, n), 16);
    s = s.slice(n);
    if (e === 'x') return [v, false, s];
    if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) throw new SyntaxErr();
    return [v, true, s];
  }
  if (e >= '0' && e <= '7') {
    const t = e + s.slice(0, 2);
    if (!/^[0-7]{3}$/.test(t)) throw new SyntaxErr();
    const v = parseInt(t, 8);
    if (v > 255) throw new SyntaxErr();
    return [v, false, s.slice(2)];
  }
  if (e === "'" || e === '"') {
    if (e !== q) throw new SyntaxErr();
    return [e.charCodeAt(0), false, s];
  }
  throw new SyntaxErr();
}

/** Go's `strconv.Unquote` for `"..."`, `` `...` `` and `'.'`. Byte escapes become Latin-1-free raw bytes. */
export function unquote(s: string): string {
  const n = s.length;
  if (n < 2) throw new SyntaxErr();
  const q = s[0]!;
  if (q !== s[n - 1]) throw new SyntaxErr();
  s = s.slice(1, n - 1);
  if (q === '`') {
    if (s.includes('`')) throw new SyntaxErr();
    return s.replace(/\r/g, '');
  }
  if (q !== '"' && q !== "'") throw new SyntaxErr();
  if (s.includes('\n')) throw new SyntaxErr();
  const bytes: number[] = [];
  let out = '';
  const flush = () => {
    if (bytes.length) {
      out += Buffer.from(bytes).toString('utf8');
      bytes.length = 0;
    }
  };
  let count = 0;
  while (s.length > 0) {
    const [c, multibyte, rest] = unquoteChar(s, q);
    s = rest;
    count++;
    if (c < 0x80 || multibyte) {
      flush();
      out += String.fromCodePoint(c);
    } else bytes.push(c);
    if (q === "'" && s.length > 0) throw new SyntaxErr();
  }
  flush();
  if (q === "'" && count !== 1) throw new SyntaxErr();
  return out;
}
