/**
 * The lexer of Go's `text/template` (Go 1.19's `text/template/parse/lex.go`), token for token.
 * @module
 */
import { quote } from './fmt.ts';

/** Token types. */
export enum T {
  Error,
  Bool,
  Char,
  CharConstant,
  Comment,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  Keyword,
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

/** One token: its type, byte offset, text and line. */
export interface Item {
  typ: T;
  pos: number;
  val: string;
  line: number;
}

const KEY: Record<string, T> = {
  '.': T.Dot,
  block: T.Block,
  break: T.Break,
  continue: T.Continue,
  define: T.Define,
  else: T.Else,
  end: T.End,
  if: T.If,
  range: T.Range,
  nil: T.Nil,
  template: T.Template,
  with: T.With,
};

/** Go's `item.String()`, used in parse errors. */
export function itemString(i: Item): string {
  if (i.typ === T.EOF) return 'EOF';
  if (i.typ === T.Error) return i.val;
  if (i.typ > T.Keyword) return `<${i.val}>`;
  const runes = [...i.val];
  if (runes.length > 10) return quote(runes.slice(0, 10).join('')) + '...';
  return quote(i.val);
}

const isSpace = (r: string) => r === ' ' || r === '\t' || r === '\r' || r === '\n';
const isAlphaNumeric = (r: string) => r === '_' || /^[\p{L}\p{Nd}]$/u.test(r);
const SPACE = ' \t\r\n';
const hasLeftTrimMarker = (s: string) => s.length >= 2 && s[0] === '-' && isSpace(s[1]!);
const hasRightTrimMarker = (s: string) => s.length >= 2 && isSpace(s[0]!) && s[1] === '-';
const countNl = (s: string) => s.split('\n').length - 1;
const rightTrimLength = (s: string) => {
  let n = 0;
  while (n < s.length && SPACE.includes(s[s.length - 1 - n]!)) n++;
  return n;
};
const leftTrimLength = (s: string) => {
  let n = 0;
  while (n < s.length && SPACE.includes(s[n]!)) n++;
  return n;
};
const EOFR = '';

function goU(r: string): string {
  const c = r.codePointAt(0)!;
  const h = 'U+' + c.toString(16).toUpperCase().padStart(4, '0');
  return h + " '" + r + "'";
}

/** Lexes a whole template; stops after the first error item. Positions are JS string indexes. */
export function lex(input: string, opts: { breakOK: boolean; continueOK: boolean; delims?: readonly [string, string] }): Item[] {
  const items: Item[] = [];
  // Go's Delims: an empty delimiter means the default.
  const L = opts.delims?.[0] || '{{',
    R = opts.delims?.[1] || '}}';
  let pos = 0,
    start = 0,
    width = 0,
    line = 1,
    startLine = 1,
    parenDepth = 0;
  const next = (): string => {
    if (pos >= input.length) {
      width = 0;
      return EOFR;
    }
    const cp = input.codePointAt(pos)!;
    const r = String.fromCodePoint(cp);
    width = r.length;
    pos += width;
    if (r === '\n') line++;
    return r;
  };
  const backup = () => {
    pos -= width;
    if (width === 1 && input[pos] === '\n') line--;
  };
  const peek = () => {
    const r = next();
    backup();
    return r;
  };
  const emit = (t: T) => {
    items.push({ typ: t, pos: start, val: input.slice(start, pos), line: startLine });
    start = pos;
    startLine = line;
  };
  const ignore = () => {
    line += countNl(input.slice(start, pos));
    start = pos;
    startLine = line;
  };
  const errorf = (msg: string): null => {
    items.push({ typ: T.Error, pos: start, val: msg, line: startLine });
    return null;
  };
  const accept = (valid: string) => {
    const r = next();
    if (r !== EOFR && valid.includes(r)) return true;
    backup();
    return false;
  };
  const acceptRun = (valid: string) => {
    for (;;) {
      const r = next();
      if (r === EOFR || !valid.includes(r)) break;
    }
    backup();
  };
  const atRightDelim = (): [boolean, boolean] => {
    const rest = input.slice(pos);
    if (hasRightTrimMarker(rest) && rest.slice(2).startsWith(R)) return [true, true];
    if (rest.startsWith(R)) return [true, false];
    return [false, false];
  };
  const atTerminator = () => {
    const r = peek();
    if (isSpace(r)) return true;
    if (r === EOFR || '.,|:)('.includes(r)) return true;
    return r === R[0];
  };
  type State = (() => State) | null;

  const lexText = (): State => {
    width = 0;
    const x = input.indexOf(L, pos);
    if (x >= 0) {
      pos = x;
      let trimLength = 0;
      if (hasLeftTrimMarker(input.slice(pos + L.length))) trimLength = rightTrimLength(input.slice(start, pos));
      pos -= trimLength;
      if (pos > start) {
        line += countNl(input.slice(start, pos));
        emit(T.Text);
      }
      pos += trimLength;
      ignore();
      return lexLeftDelim;
    }
    pos = input.length;
    if (pos > start) {
      line += countNl(input.slice(start, pos));
      emit(T.Text);
    }
    emit(T.EOF);
    return null;
  };
  const lexLeftDelim = (): State => {
    pos += L.length;
    const trimSpace = hasLeftTrimMarker(input.slice(pos));
    const afterMarker = trimSpace ? 2 : 0;
    if (input.startsWith('/*', pos + afterMarker)) {
      pos += afterMarker;
      ignore();
      return lexComment;
    }
    emit(T.LeftDelim);
    pos += afterMarker;
    ignore();
    parenDepth = 0;
    return lexInsideAction;
  };
  const lexComment = (): State => {
    pos += 2;
    const x = input.indexOf('*/', pos);
    if (x < 0) return errorf('unclosed comment');
    pos = x + 2;
    const [delim, trimSpace] = atRightDelim();
    if (!delim) return errorf('comment ends before closing delimiter');
    if (trimSpace) pos += 2;
    pos += R.length;
    if (trimSpace) pos += leftTrimLength(input.slice(pos));
    ignore();
    return lexText;
  };
  const lexRightDelim = (): State => {
    const trimSpace = hasRightTrimMarker(input.slice(pos));
    if (trimSpace) {
      pos += 2;
      ignore();
    }
    pos += R.length;
    emit(T.RightDelim);
    if (trimSpace) {
      pos += leftTrimLength(input.slice(pos));
      ignore();
    }
    return lexText;
  };
  const lexInsideAction = (): State => {
    const [delim] = atRightDelim();
    if (delim) {
      if (parenDepth === 0) return lexRightDelim;
      return errorf('unclosed left paren');
    }
    const r = next();
    if (r === EOFR) return errorf('unclosed action');
    if (isSpace(r)) {
      backup();
      return lexSpace;
    }
    switch (r) {
      case '=':
        emit(T.Assign);
        return lexInsideAction;
      case ':':
        if (next() !== '=') return errorf('expected :=');
        emit(T.Declare);
        return lexInsideAction;
      case '|':
        emit(T.Pipe);
        return lexInsideAction;
      case '"':
        return lexQuote;
      case '`':
        return lexRawQuote;
      case '$':
        return lexVariable;
      case "'":
        return lexChar;
      case '(':
        emit(T.LeftParen);
        parenDepth++;
        return lexInsideAction;
      case ')':
        emit(T.RightParen);
        parenDepth--;
        if (parenDepth < 0) return errorf(`unexpected right paren ${goU(r)}`);
        return lexInsideAction;
    }
    if (r === '.') {
      if (pos < input.length) {
        const c = input[pos]!;
        if (c < '0' || c > '9') return lexField;
      }
      backup();
      return lexNumber;
    }
    if (r === '+' || r === '-' || (r >= '0' && r <= '9')) {
      backup();
      return lexNumber;
    }
    if (isAlphaNumeric(r)) {
      backup();
      return lexIdentifier;
    }
    const c = r.codePointAt(0)!;
    if (c <= 0x7f && c >= 0x20 && c !== 0x7f) {
      emit(T.Char);
      return lexInsideAction;
    }
    return errorf(`unrecognized character in action: ${goU(r)}`);
  };
  const lexSpace = (): State => {
    let numSpaces = 0;
    for (;;) {
      const r = peek();
      if (!isSpace(r)) break;
      next();
      numSpaces++;
    }
    if (hasRightTrimMarker(input.slice(pos - 1)) && input.startsWith(R, pos - 1 + 2)) {
      backup();
      if (numSpaces === 1) return lexRightDelim;
    }
    emit(T.Space);
    return lexInsideAction;
  };
  const lexIdentifier = (): State => {
    for (;;) {
      const r = next();
      if (r !== EOFR && isAlphaNumeric(r)) continue;
      backup();
      const word = input.slice(start, pos);
      if (!atTerminator()) return errorf(`bad character ${goU(r)}`);
      const k = KEY[word];
      if (k !== undefined && k > T.Keyword) {
        if ((k === T.Break && !opts.breakOK) || (k === T.Continue && !opts.continueOK)) emit(T.Identifier);
        else emit(k);
      } else if (word[0] === '.') emit(T.Field);
      else if (word === 'true' || word === 'false') emit(T.Bool);
      else emit(T.Identifier);
      return lexInsideAction;
    }
  };
  const lexFieldOrVariable = (typ: T): State => {
    if (atTerminator()) {
      emit(typ === T.Variable ? T.Variable : T.Dot);
      return lexInsideAction;
    }
    let r: string;
    for (;;) {
      r = next();
      if (r === EOFR || !isAlphaNumeric(r)) {
        backup();
        break;
      }
    }
    if (!atTerminator()) return errorf(`bad character ${goU(r)}`);
    emit(typ);
    return lexInsideAction;
  };
  const lexField = () => lexFieldOrVariable(T.Field);
  const lexVariable = (): State => {
    if (atTerminator()) {
      emit(T.Variable);
      return lexInsideAction;
    }
    return lexFieldOrVariable(T.Variable);
  };
  /** A constant up to its closing `close`, a backslash escaping the next rune; `what` is unterminated at a newline or the end. */
  const lexEscaped = (close: string, type: T, what: string) => (): State => {
    for (;;) {
      let r = next();
      if (r === '\\') {
        r = next();
        if (r !== EOFR && r !== '\n') continue;
        return errorf(`unterminated ${what}`);
      }
      if (r === EOFR || r === '\n') return errorf(`unterminated ${what}`);
      if (r === close) break;
    }
    emit(type);
    return lexInsideAction;
  };
  const lexChar = lexEscaped("'", T.CharConstant, 'character constant');
  const scanNumber = (): boolean => {
    accept('+-');
    let digits = '0123456789_';
    if (accept('0')) {
      if (accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (accept('oO')) digits = '01234567_';
      else if (accept('bB')) digits = '01_';
    }
    acceptRun(digits);
    if (accept('.')) acceptRun(digits);
    if (digits.length === 11 && accept('eE')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    if (digits.length === 23 && accept('pP')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    accept('i');
    const p = peek();
    if (p !== EOFR && isAlphaNumeric(p)) {
      next();
      return false;
    }
    return true;
  };
  const lexNumber = (): State => {
    if (!scanNumber()) return errorf(`bad number syntax: ${quote(input.slice(start, pos))}`);
    const sign = peek();
    if (sign === '+' || sign === '-') {
      if (!scanNumber() || input[pos - 1] !== 'i') return errorf(`bad number syntax: ${quote(input.slice(start, pos))}`);
      emit(T.Complex);
    } else emit(T.Number);
    return lexInsideAction;
  };
  const lexQuote = lexEscaped('"', T.String, 'quoted string');
  const lexRawQuote = (): State => {
    for (;;) {
      const r = next();
      if (r === EOFR) return errorf('unterminated raw quoted string');
      if (r === '`') break;
    }
    emit(T.RawString);
    return lexInsideAction;
  };

  let state: State = lexText;
  while (state) state = state();
  return items;
}
