/**
 * cty's `format` verbs (Go's fmt, as cty reads it): `%s %q %d %f %e %g %t %v %#v %x %X %o %b %%`,
 * with flags, width, precision and explicit argument indexes `%[2]s`.
 * @module
 */
import { asBool, asNumber, asString, type Value } from '../values.ts';
import { FunctionCallError } from './call.ts';

const pad = (s: string, width: number | undefined, left: boolean, zero: boolean) => {
  if (width === undefined || s.length >= width) return s;
  if (left) return s + ' '.repeat(width - s.length);
  if (zero) {
    const sign = /^[+-]/.test(s) ? s[0]! : '';
    return sign + '0'.repeat(width - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(width - s.length) + s;
};

/** The largest width or precision a verb may ask for (1 MiB). */
/**
 * Go's `%g` (strconv's 'g' format): the shortest digits (or `prec` significant ones, trailing zeros
 * dropped), as `%e` when the exponent is below -4 or at least the precision (6 for the shortest),
 * else as a plain decimal: `1e+06`, `123456`, `0.0001`, `1e-05`.
 */
function goG(n: number, prec: number | undefined): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return '0';
  const want = prec === undefined ? undefined : Math.max(prec, 1);
  const [mantissa, exponent] = Math.abs(n)
    .toExponential(want === undefined ? undefined : want - 1)
    .split('e') as [string, string];
  const digits = mantissa.replace('.', '').replace(/0+$/, '');
  const dp = Number(exponent) + 1;
  let p = want ?? digits.length;
  const eprec = want === undefined ? 6 : p > digits.length && digits.length >= dp ? digits.length : p;
  const exp = dp - 1;
  let body: string;
  if (exp < -4 || exp >= eprec) {
    p = Math.min(p, digits.length);
    const e = Math.abs(exp);
    body = `${digits[0]}${p > 1 ? `.${digits.slice(1, p)}` : ''}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  } else {
    if (p > dp) p = digits.length;
    const frac = Math.max(p - dp, 0);
    const at = (i: number) => (i >= 0 && i < digits.length ? digits[i]! : '0');
    const whole = dp > 0 ? Array.from({ length: dp }, (_, i) => at(i)).join('') : '0';
    body = frac ? `${whole}.${Array.from({ length: frac }, (_, i) => at(dp + i)).join('')}` : whole;
  }
  return n < 0 ? `-${body}` : body;
}

export const MAX_FORMAT_WIDTH = 1024 * 1024;

/** Formats `args` by `spec` as cty's format function does. */
export function format(spec: string, args: Value[]): string {
  let out = '';
  let next = 0;
  const re = /%([-+# 0]*)(?:\[(\d+)\])?(\d+|\*)?(?:\.(\d+))?([a-zA-Z%])/g;
  let last = 0;
  for (const m of spec.matchAll(re)) {
    out += spec.slice(last, m.index);
    last = m.index + m[0].length;
    const [, flags = '', index, widthText, precText, verb] = m;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (index) next = Number(index) - 1;
    if (next >= args.length) throw new FunctionCallError(`not enough arguments for %${verb} at ${m.index}`);
    const arg = args[next++]!;
    const width = widthText ? Number(widthText) : undefined;
    const prec = precText !== undefined ? Number(precText) : undefined;
    // A width or precision no string of a job can have is refused before it is padded out.
    if ((width ?? 0) > MAX_FORMAT_WIDTH || (prec ?? 0) > MAX_FORMAT_WIDTH)
      throw new FunctionCallError(`width or precision over ${MAX_FORMAT_WIDTH} at ${m.index}`);
    const plus = flags.includes('+');
    const num = () => {
      const n = asNumber(arg);
      if (n === undefined) throw new FunctionCallError(`unsupported value for "%${verb}" at ${m.index}: number required`);
      return n;
    };
    const signed = (n: number, body: string) => (n >= 0 && plus ? '+' : n >= 0 && flags.includes(' ') ? ' ' : '') + body;
    let text: string;
    switch (verb) {
      case 's': {
        const str = asString(arg);
        if (str === undefined) throw new FunctionCallError(`unsupported value for "%s" at ${m.index}: string required`);
        text = prec !== undefined ? str.slice(0, prec) : str;
        break;
      }
      case 'q': {
        const str = asString(arg);
        if (str === undefined) throw new FunctionCallError(`unsupported value for "%q" at ${m.index}: string required`);
        text = JSON.stringify(str);
        break;
      }
      case 'v':
        text =
          typeof arg === 'string' && !flags.includes('#')
            ? arg
            : arg === null
              ? 'null'
              : typeof arg === 'object' || flags.includes('#')
                ? JSON.stringify(arg)
                : asString(arg)!;
        break;
      case 't': {
        const b = asBool(arg);
        if (b === undefined) throw new FunctionCallError(`unsupported value for "%t" at ${m.index}: bool required`);
        text = String(b);
        break;
      }
      case 'd': {
        const n = num();
        if (!Number.isInteger(n)) throw new FunctionCallError(`unsupported value for "%d" at ${m.index}: an integer is required`);
        text = signed(n, n.toFixed(0));
        break;
      }
      case 'f':
      case 'F':
        text = signed(num(), num().toFixed(prec ?? 6));
        break;
      case 'e':
      case 'E': {
        const e = num()
          .toExponential(prec ?? 6)
          .replace(/e([+-])(\d)$/, 'e$10$2');
        text = signed(num(), verb === 'E' ? e.toUpperCase() : e);
        break;
      }
      case 'g':
        text = signed(num(), goG(num(), prec));
        break;
      case 'x':
      case 'X':
      case 'o':
      case 'b': {
        const n = num();
        const base = verb === 'o' ? 8 : verb === 'b' ? 2 : 16;
        const body = Math.trunc(n).toString(base);
        text = signed(n, verb === 'X' ? body.toUpperCase() : body);
        break;
      }
      default:
        throw new FunctionCallError(`unsupported format verb %${verb}`);
    }
    out += pad(text, width, flags.includes('-'), flags.includes('0'));
  }
  out += spec.slice(last);
  if (next < args.length && !/%\[\d+\]/.test(spec)) throw new FunctionCallError(`too many arguments; only ${next} used by format string`);
  return out;
}
