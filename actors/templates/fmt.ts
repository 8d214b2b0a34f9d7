/**
 * Go's `fmt` package over berth's template data model: `Sprint`, `Sprintln` and `Sprintf` with
 * Go's verbs, flags, width, precision, argument indexes and its `%!verb(type=value)` error forms.
 * @module
 */
import { GoByte, GoComplex, kindOf, num, sortedKeys, typeName, unwrap } from './values.ts';

interface Flags {
  sharp: boolean;
  zero: boolean;
  plus: boolean;
  minus: boolean;
  space: boolean;
  sharpV: boolean;
  plusV: boolean;
  wid: number;
  widPresent: boolean;
  prec: number;
  precPresent: boolean;
}

/** `%v` takes `#` and `+` as its own (`%#v` Go syntax, `%+v` field names), as Go's doPrintf moves them before printing. */
function takeVerbVFlags(f: Flags): void {
  f.sharpV = f.sharp;
  f.sharp = false;
  f.plusV = f.plus;
  f.plus = false;
}

const newFlags = (): Flags => ({
  sharp: false,
  zero: false,
  plus: false,
  minus: false,
  space: false,
  sharpV: false,
  plusV: false,
  wid: 0,
  widPresent: false,
  prec: 0,
  precPresent: false,
});

const runeCount = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const isPrintRe = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
/** Go's `unicode.IsPrint`. */
export function isPrint(r: number): boolean {
  if (r >= 0xd800 && r <= 0xdfff) return false;
  return isPrintRe.test(String.fromCodePoint(r));
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

function quoteWith(s: string, q: string, ascii: boolean): string {
  let out = q;
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (ch === q || ch === '\\') {
      out += '\\' + ch;
      continue;
    }
    if (ascii ? r < 0x80 && isPrint(r) : isPrint(r)) {
      out += ch;
      continue;
    }
    switch (ch) {
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (r < ' '.charCodeAt(0) || r === 0x7f) out += '\\x' + hex2(r);
    else if (r >= 0xd800 && r <= 0xdfff) out += '\\ufffd';
    else if (r < 0x10000) out += '\\u' + r.toString(16).padStart(4, '0');
    else out += '\\U' + r.toString(16).padStart(8, '0');
  }
  return out + q;
}

/** Go's `strconv.Quote`. */
export const quote = (s: string): string => quoteWith(s, '"', false);

class Printer {
  buf = '';
  f: Flags = newFlags();

  writePadding(n: number): void {
    if (n <= 0) return;
    this.buf += (this.f.zero ? '0' : ' ').repeat(n);
  }
  pad(s: string): void {
    const f = this.f;
    if (!f.widPresent || f.wid === 0) {
      this.buf += s;
      return;
    }
    const width = f.wid - runeCount(s);
    if (!f.minus) {
      this.writePadding(width);
      this.buf += s;
    } else {
      this.buf += s;
      this.writePadding(width);
    }
  }
  truncate(s: string): string {
    if (this.f.precPresent) {
      const runes = [...s];
      if (runes.length > this.f.prec) return runes.slice(0, this.f.prec).join('');
    }
    return s;
  }

  fmtInteger(n: number, base: number, signed: boolean, verb: string, upper: boolean): void {
    const f = this.f;
    const negative = signed && n < 0;
    let u = Math.abs(n);
    let prec = 0;
    if (f.precPresent) {
      prec = f.prec;
      if (prec === 0 && u === 0) {
        const oldZero = f.zero;
        f.zero = false;
        this.writePadding(f.wid);
        f.zero = oldZero;
        return;
      }
    } else if (f.zero && f.widPresent) {
      prec = f.wid;
      if (negative || f.plus || f.space) prec--;
    }
    let digits = u.toString(base);
    if (upper) digits = digits.toUpperCase();
    if (digits.length < prec) digits = '0'.repeat(prec - digits.length) + digits;
    if (f.sharp) {
      if (base === 2) digits = '0b' + digits;
      else if (base === 8) {
        if (digits[0] !== '0') digits = '0' + digits;
      } else if (base === 16) digits = (upper ? '0X' : '0x') + digits;
    }
    if (verb === 'O') digits = '0o' + digits;
    if (negative) digits = '-' + digits;
    else if (f.plus) digits = '+' + digits;
    else if (f.space) digits = ' ' + digits;
    u = 0;
    const oldZero = f.zero;
    f.zero = false;
    this.pad(digits);
    f.zero = oldZero;
  }

  fmtFloat(v: number, verb: string, prec: number): void {
    const f = this.f;
    if (f.precPresent) prec = f.prec;
    let num = formatFloat(v, verb, prec);
    if (num[0] === '-' || num[0] === '+') {
      // keep
    } else num = '+' + num;
    if (f.space && num[0] === '+' && !f.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      const oldZero = f.zero;
      f.zero = false;
      if (num[1] === 'N' && !f.space && !f.plus) num = num.slice(1);
      this.pad(num);
      f.zero = oldZero;
      return;
    }
    if (f.sharp && verb !== 'b') {
      let digits = 0;
      if (verb === 'v' || verb === 'g' || verb === 'G' || verb === 'x') {
        digits = prec;
        if (digits === -1) digits = 6;
      }
      let tail = '';
      let body = num;
      let sawNonzero = false;
      let hasPoint = false;
      for (let i = 1; i < body.length; i++) {
        const c = body[i]!;
        if (c === '.') hasPoint = true;
        else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
          tail = body.slice(i);
          body = body.slice(0, i);
          break;
        } else {
          if (c !== '0') sawNonzero = true;
          if (sawNonzero) digits--;
        }
      }
      if (!hasPoint) {
        if (body.length === 2 && body[1] === '0') digits--;
        body += '.';
      }
      while (digits > 0) {
        body += '0';
        digits--;
      }
      num = body + tail;
    }
    if (f.plus || num[0] !== '+') {
      if (f.zero && f.widPresent && f.wid > num.length) {
        this.buf += num[0];
        this.writePadding(f.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  fmtSbx(s: string, upper: boolean): void {
    const f = this.f;
    const b = Buffer.from(s, 'utf8');
    let length = b.length;
    if (f.precPresent && f.prec < length) length = f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (f.space) {
        if (f.sharp) width *= 2;
        width += length - 1;
      } else if (f.sharp) width += 2;
    } else {
      if (f.widPresent) this.writePadding(f.wid);
      return;
    }
    if (f.widPresent && f.wid > width && !f.minus) this.writePadding(f.wid - width);
    const x = upper ? 'X' : 'x';
    let out = '';
    if (f.sharp) out += '0' + x;
    for (let i = 0; i < length; i++) {
      if (f.space && i > 0) {
        out += ' ';
        if (f.sharp) out += '0' + x;
      }
      const h = hex2(b[i]!);
      out += upper ? h.toUpperCase() : h;
    }
    this.buf += out;
    if (f.widPresent && f.wid > width && f.minus) this.writePadding(f.wid - width);
  }

  fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(quoteWith(s, '"', this.f.plus));
  }

  fmtString(s: string, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(s);
        else this.pad(this.truncate(s));
        return;
      case 's':
        this.pad(this.truncate(s));
        return;
      case 'x':
        this.fmtSbx(s, false);
        return;
      case 'X':
        this.fmtSbx(s, true);
        return;
      case 'q':
        this.fmtQ(s);
        return;
    }
    this.badVerb(verb, arg);
  }

  fmtInt(n: number, signed: boolean, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV && !signed) {
          const sharp = this.f.sharp;
          this.f.sharp = true;
          this.fmtInteger(n, 16, signed, verb, false);
          this.f.sharp = sharp;
          return;
        }
        return this.fmtInteger(n, 10, signed, verb, false);
      case 'd':
        return this.fmtInteger(n, 10, signed, verb, false);
      case 'b':
        return this.fmtInteger(n, 2, signed, verb, false);
      case 'o':
      case 'O':
        return this.fmtInteger(n, 8, signed, verb, false);
      case 'x':
        return this.fmtInteger(n, 16, signed, verb, false);
      case 'X':
        return this.fmtInteger(n, 16, signed, verb, true);
      case 'c':
        return this.pad(String.fromCodePoint(validRune(n)));
      case 'q':
        return this.pad(quoteWith(String.fromCodePoint(validRune(n)), "'", this.f.plus));
      case 'U': {
        const f = this.f;
        let prec = 4;
        if (f.precPresent && f.prec > 4) prec = f.prec;
        let s = 'U+' + BigInt.asUintN(64, BigInt(n)).toString(16).toUpperCase().padStart(prec, '0');
        if (f.sharp && n >= 0 && n <= 0x10ffff && isPrint(n)) s += " '" + String.fromCodePoint(n) + "'";
        const oldZero = f.zero;
        f.zero = false;
        this.pad(s);
        f.zero = oldZero;
        return;
      }
    }
    this.badVerb(verb, arg);
  }

  badVerb(verb: string, arg: unknown): void {
    this.buf += '%!' + verb + '(';
    if (arg === null || arg === undefined) this.buf += '<nil>';
    else {
      this.buf += typeName(arg) + '=';
      this.printArg(arg, 'v', 0);
    }
    this.buf += ')';
  }

  printArg(arg: unknown, verb: string, depth: number): void {
    arg = unwrap(arg);
    if (arg === null || arg === undefined) {
      if (depth > 0) {
        this.buf += this.f.sharpV ? 'interface {}(nil)' : '<nil>';
        return;
      }
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, arg);
      return;
    }
    if (verb === 'T' && depth === 0) {
      this.pad(this.truncate(typeName(arg)));
      return;
    }
    const k = kindOf(arg);
    switch (k) {
      case 'bool':
        if (verb === 't' || verb === 'v') this.pad(arg ? 'true' : 'false');
        else this.badVerb(verb, arg);
        return;
      case 'int':
        return this.fmtInt(num(arg), true, verb, arg);
      case 'uint':
        return this.fmtInt(num(arg), false, verb, arg);
      case 'float':
        switch (verb) {
          case 'v':
            return this.fmtFloat(num(arg), 'g', -1);
          case 'g':
          case 'G':
          case 'x':
          case 'X':
            return this.fmtFloat(num(arg), verb, -1);
          case 'f':
          case 'F':
          case 'e':
          case 'E':
            return this.fmtFloat(num(arg), verb, 6);
        }
        return this.badVerb(verb, arg);
      case 'complex': {
        // Go's fmtComplex: (re±imi), each part as a float of the verb, the imaginary always signed.
        const c = arg as GoComplex;
        const [fv, prec] = verb === 'v' ? ['g', -1] : 'gGxX'.includes(verb) ? [verb, -1] : 'fFeE'.includes(verb) ? [verb, 6] : ['', 0];
        if (!fv) return this.badVerb(verb, arg);
        const oldPlus = this.f.plus;
        this.buf += '(';
        this.fmtFloat(c.re, fv, prec as number);
        this.f.plus = true;
        this.fmtFloat(c.im, fv, prec as number);
        this.buf += 'i)';
        this.f.plus = oldPlus;
        return;
      }
      case 'string':
        return this.fmtString(arg as string, verb, arg);
      case 'slice': {
        const sv = this.f.sharpV;
        this.buf += sv ? '[]interface {}{' : '[';
        (arg as unknown[]).forEach((e, i) => {
          if (i > 0) this.buf += sv ? ', ' : ' ';
          this.printArg(e, verb, depth + 1);
        });
        this.buf += sv ? '}' : ']';
        return;
      }
      case 'map': {
        const sv = this.f.sharpV;
        this.buf += sv ? 'map[string]interface {}{' : 'map[';
        const m = arg as Record<string, unknown>;
        sortedKeys(m).forEach((key, i) => {
          if (i > 0) this.buf += sv ? ', ' : ' ';
          this.printArg(key, verb, depth + 1);
          this.buf += ':';
          this.printArg(m[key], verb, depth + 1);
        });
        this.buf += sv ? '}' : ']';
        return;
      }
      default:
        this.buf += '0x1';
    }
  }
}

const validRune = (n: number): number => (n < 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) ? 0xfffd : n);

function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (ch === '`' || ch === '\ufeff') return false;
    if (r < 0x20 && ch !== '\t') return false;
    if (r === 0x7f) return false;
  }
  return true;
}

// ---- float formatting (Go's strconv.FormatFloat) ----

interface Decimal {
  d: string; // digits, no leading/trailing zeros
  dp: number; // decimal point position
}

function shortest(v: number): Decimal {
  if (v === 0) return { d: '', dp: 0 };
  const [m, e] = Math.abs(v).toExponential().split('e') as [string, string];
  const d = m.replace('.', '').replace(/0+$/, '');
  return { d, dp: Number(e) + 1 };
}

function exact(v: number): Decimal {
  if (v === 0) return { d: '', dp: 0 };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(v));
  const bits = buf.getBigUint64(0);
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp = 1;
  else mant |= 1n << 52n;
  exp -= 1075;
  let digits: string;
  let dp: number;
  if (exp >= 0) {
    digits = (mant << BigInt(exp)).toString();
    dp = digits.length;
  } else {
    const k = -exp;
    digits = (mant * 5n ** BigInt(k)).toString();
    dp = digits.length - k;
  }
  const lead = digits.match(/^0*/)![0].length;
  digits = digits.slice(lead);
  return { d: digits.replace(/0+$/, ''), dp };
}

function round(a: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= a.d.length) return nd < 0 ? { d: '', dp: 0 } : a;
  const c = a.d[nd]!;
  let up: boolean;
  if (c === '5' && nd + 1 === a.d.length) up = nd > 0 && (Number(a.d[nd - 1]) & 1) === 1;
  else up = c >= '5';
  if (!up) {
    const d = a.d.slice(0, nd).replace(/0+$/, '');
    return { d, dp: d.length === 0 ? 0 : a.dp };
  }
  let i = nd - 1;
  while (i >= 0 && a.d[i] === '9') i--;
  if (i < 0) return { d: '1', dp: a.dp + 1 };
  const d = a.d.slice(0, i) + String(Number(a.d[i]) + 1);
  return { d, dp: a.dp };
}

function fmtE(neg: boolean, d: Decimal, prec: number, fmt: string): string {
  let s = neg ? '-' : '';
  s += d.d.length === 0 ? '0' : d.d[0];
  if (prec > 0) {
    s += '.';
    let i = 1;
    const m = Math.min(d.d.length, prec + 1);
    if (i < m) {
      s += d.d.slice(i, m);
      i = m;
    }
    for (; i <= prec; i++) s += '0';
  }
  s += fmt;
  let exp = d.dp - 1;
  if (d.d.length === 0) exp = 0;
  if (exp < 0) {
    s += '-';
    exp = -exp;
  } else s += '+';
  s += exp < 10 ? '0' + exp : String(exp);
  return s;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let s = neg ? '-' : '';
  if (d.dp > 0) {
    const m = Math.min(d.d.length, d.dp);
    s += d.d.slice(0, m) + '0'.repeat(d.dp - m);
  } else s += '0';
  if (prec > 0) {
    s += '.';
    for (let i = 1; i <= prec; i++) {
      const j = d.dp + i - 1;
      s += j >= 0 && j < d.d.length ? d.d[j] : '0';
    }
  }
  return s;
}

function fmtX(v: number, prec: number, fmt: string, neg: boolean): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(v));
  const bits = view.getBigUint64(0);
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp++;
  else mant |= 1n << 52n;
  exp -= 1023;
  if (mant === 0n) exp = 0;
  mant <<= 60n - 52n;
  while (mant !== 0n && (mant & (1n << 60n)) === 0n) {
    mant <<= 1n;
    exp--;
  }
  const M60 = (1n << 60n) - 1n;
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & M60;
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const hex = fmt === 'X' ? '0123456789ABCDEF' : '0123456789abcdef';
  let s = (neg ? '-' : '') + '0' + fmt + String((mant >> 60n) & 1n);
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  if (prec < 0 && mant !== 0n) {
    s += '.';
    while (mant !== 0n) {
      s += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  } else if (prec > 0) {
    s += '.';
    for (let i = 0; i < prec; i++) {
      s += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  }
  s += fmt === 'X' ? 'P' : 'p';
  if (exp < 0) {
    s += '-';
    exp = -exp;
  } else s += '+';
  return s + (exp < 100 ? String(exp).padStart(2, '0') : String(exp));
}

/** Go's `strconv.FormatFloat(v, fmt, prec, 64)` for fmt in e E f F g G x X. */
export function formatFloat(v: number, fmt: string, prec: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const neg = v < 0 || Object.is(v, -0);
  if (fmt === 'x' || fmt === 'X') return fmtX(v, prec, fmt, neg);
  if (fmt === 'F') fmt = 'f';
  const isShortest = prec < 0;
  let d: Decimal;
  if (isShortest) {
    d = shortest(v);
    switch (fmt) {
      case 'e':
      case 'E':
        prec = Math.max(d.d.length - 1, 0);
        break;
      case 'f':
        prec = Math.max(d.d.length - d.dp, 0);
        break;
      default:
        prec = d.d.length;
    }
  } else {
    d = exact(v);
    if (fmt === 'f') d = round(d, d.dp + prec);
    else {
      let digits = prec;
      if (fmt === 'e' || fmt === 'E') digits++;
      else {
        if (prec === 0) prec = 1;
        digits = prec;
      }
      d = round(d, digits);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, d, prec, fmt);
    case 'f':
      return fmtF(neg, d, prec);
    default: {
      let eprec = prec;
      if (eprec > d.d.length && d.d.length >= d.dp) eprec = d.d.length;
      if (isShortest) eprec = 6;
      const exp = d.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > d.d.length) prec = d.d.length;
        return fmtE(neg, d, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > d.dp) prec = d.d.length;
      return fmtF(neg, d, Math.max(prec - d.dp, 0));
    }
  }
}

// ---- Sprint family ----

const isStringArg = (a: unknown) => typeof unwrap(a) === 'string';

/** Go's `fmt.Sprint`: a space between operands when neither is a string. */
export function sprint(args: unknown[]): string {
  const p = new Printer();
  let prevString = false;
  args.forEach((a, i) => {
    const isString = isStringArg(a);
    if (i > 0 && !isString && !prevString) p.buf += ' ';
    p.f = newFlags();
    p.printArg(a, 'v', 0);
    prevString = isString;
  });
  return p.buf;
}

/** Go's `fmt.Sprintln`: spaces between all operands and a newline after. */
export function sprintln(args: unknown[]): string {
  const p = new Printer();
  args.forEach((a, i) => {
    if (i > 0) p.buf += ' ';
    p.f = newFlags();
    p.printArg(a, 'v', 0);
  });
  return p.buf + '\n';
}

const tooLarge = (x: number) => x > 1e6 || x < -1e6;

function parsenum(s: string, start: number, end: number): [number, boolean, number] {
  if (start >= end) return [0, false, end];
  let num = 0;
  let isnum = false;
  let i = start;
  for (; i < end && s[i]! >= '0' && s[i]! <= '9'; i++) {
    if (tooLarge(num)) return [0, false, end];
    num = num * 10 + Number(s[i]);
    isnum = true;
  }
  return [num, isnum, i];
}

/** Go's `fmt.Sprintf`. */
export function sprintf(format: string, a: unknown[]): string {
  const p = new Printer();
  const end = format.length;
  let argNum = 0;
  let afterIndex = false;
  let reordered = false;
  let goodArgNum = true;

  const argNumber = (argNum: number, i: number, numArgs: number): [number, number, boolean] => {
    if (format.length <= i || format[i] !== '[') return [argNum, i, false];
    reordered = true;
    const sub = format.slice(i);
    let index = 0,
      wid = 1,
      ok = false;
    if (sub.length >= 3) {
      for (let j = 1; j < sub.length; j++) {
        if (sub[j] === ']') {
          const [width, ok2, newi] = parsenum(sub, 1, j);
          if (!ok2 || newi !== j) {
            index = 0;
            wid = j + 1;
            ok = false;
          } else {
            index = width - 1;
            wid = j + 1;
            ok = true;
          }
          break;
        }
      }
    }
    if (ok && 0 <= index && index < numArgs) return [index, i + wid, true];
    goodArgNum = false;
    return [argNum, i + wid, ok];
  };
  const intFromArg = (argNum: number): [number, boolean, number] => {
    let n = 0,
      isInt = false,
      newArgNum = argNum;
    if (argNum < a.length) {
      const v = unwrap(a[argNum]);
      const k = kindOf(v);
      if (k === 'int' || k === 'uint') {
        n = num(v);
        isInt = true;
      }
      newArgNum = argNum + 1;
      if (tooLarge(n)) {
        n = 0;
        isInt = false;
      }
    }
    return [n, isInt, newArgNum];
  };

  let i = 0;
  formatLoop: while (i < end) {
    goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.buf += format.slice(lasti, i);
    if (i >= end) break;
    i++;
    p.f = newFlags();
    const f = p.f;
    simple: for (; i < end; i++) {
      const c = format[i]!;
      switch (c) {
        case '#':
          f.sharp = true;
          break;
        case '0':
          f.zero = !f.minus;
          break;
        case '+':
          f.plus = true;
          break;
        case '-':
          f.minus = true;
          f.zero = false;
          break;
        case ' ':
          f.space = true;
          break;
        default:
          if (c >= 'a' && c <= 'z' && argNum < a.length) {
            if (c === 'v') takeVerbVFlags(f);
            p.printArg(a[argNum], c, 0);
            argNum++;
            i++;
            continue formatLoop;
          }
          break simple;
      }
    }
    [argNum, i, afterIndex] = argNumber(argNum, i, a.length);
    if (i < end && format[i] === '*') {
      i++;
      [f.wid, f.widPresent, argNum] = intFromArg(argNum);
      if (!f.widPresent) p.buf += '%!(BADWIDTH)';
      if (f.wid < 0) {
        f.wid = -f.wid;
        f.minus = true;
        f.zero = false;
      }
      afterIndex = false;
    } else {
      [f.wid, f.widPresent, i] = parsenum(format, i, end);
      if (afterIndex && f.widPresent) goodArgNum = false;
    }
    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      [argNum, i, afterIndex] = argNumber(argNum, i, a.length);
      if (i < end && format[i] === '*') {
        i++;
        [f.prec, f.precPresent, argNum] = intFromArg(argNum);
        if (f.prec < 0) {
          f.prec = 0;
          f.precPresent = false;
        }
        if (!f.precPresent) p.buf += '%!(BADPREC)';
        afterIndex = false;
      } else {
        [f.prec, f.precPresent, i] = parsenum(format, i, end);
        if (!f.precPresent) {
          f.prec = 0;
          f.precPresent = true;
        }
      }
    }
    if (!afterIndex) [argNum, i, afterIndex] = argNumber(argNum, i, a.length);
    if (i >= end) {
      p.buf += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') p.buf += '%';
    else if (!goodArgNum) p.buf += '%!' + verb + '(BADINDEX)';
    else if (argNum >= a.length) p.buf += '%!' + verb + '(MISSING)';
    else {
      if (verb === 'v') takeVerbVFlags(f);
      p.printArg(a[argNum], verb, 0);
      argNum++;
    }
  }
  if (!reordered && argNum < a.length) {
    p.f = newFlags();
    p.buf += '%!(EXTRA ';
    a.slice(argNum).forEach((arg, j) => {
      if (j > 0) p.buf += ', ';
      const v = unwrap(arg);
      if (v === null || v === undefined) p.buf += '<nil>';
      else {
        p.buf += typeName(v) + '=';
        p.printArg(v, 'v', 0);
      }
    });
    p.buf += ')';
  }
  return p.buf;
}

/** The byte value of a {@link GoByte}, for callers that need it. */
export const byteOf = (b: GoByte): number => b.value;
