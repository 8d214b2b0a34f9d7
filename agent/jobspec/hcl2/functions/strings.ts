/**
 * cty's string functions as Nomad registers them: upper, lower, title, chomp, indent, strlen,
 * strrev, substr, trim, trimprefix, trimsuffix, trimspace, split, join, replace, regex_replace,
 * format, formatlist.
 * @module
 */
import { asString, type Value } from '../values.ts';
import { FunctionArgumentError, FunctionCallError, type FunctionTable } from './call.ts';
import { define } from './define.ts';
import { format, MAX_FORMAT_WIDTH } from './format.ts';

const s = (v: Value) => v as string;
const chars = (v: string) => [...new Intl.Segmenter().segment(v)].map((x) => x.segment);

/** Compiles a Go RE2 pattern as far as JavaScript's RegExp allows (named groups `(?P<n>)`, flags `(?i)`). */
export function goRegExp(pattern: string, flags = ''): RegExp {
  let p = pattern.replace(/\(\?P</g, '(?<');
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    p = p.slice(lead[0].length);
    flags += lead[1]!.replace(/U/g, '');
  }
  try {
    return new RegExp(p, [...new Set(flags)].join(''));
  } catch (e) {
    throw new FunctionArgumentError(1, `invalid regexp pattern: ${(e as Error).message}`);
  }
}

/** The string functions. */
export const STRING_FUNCTIONS: FunctionTable = {
  upper: define(['str:string'], ([v]) => s(v).toUpperCase()),
  lower: define(['str:string'], ([v]) => s(v).toLowerCase()),
  // Go's strings.Title (cty's title): a letter after the start, an ASCII character other than a
  // letter, digit or `_`, or a space begins a word.
  title: define(['str:string'], ([v]) =>
    s(v).replace(/(^|[\0-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]|\s)(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase()),
  ),
  chomp: define(['str:string'], ([v]) => s(v).replace(/(\r\n|\n|\r)+$/, '')),
  indent: define(['spaces:number', 'str:string'], ([n, v]) => {
    if ((n as number) < 0 || (n as number) > MAX_FORMAT_WIDTH) throw new FunctionArgumentError(0, `must be between 0 and ${MAX_FORMAT_WIDTH}`);
    return s(v).replace(/\n/g, `\n${' '.repeat(n as number)}`);
  }),
  strlen: define(['str:string'], ([v]) => chars(s(v)).length),
  strrev: define(['str:string'], ([v]) => chars(s(v)).reverse().join('')),
  substr: define(['str:string', 'offset:number', 'length:number'], ([v, o, l]) => {
    const c = chars(s(v));
    let off = o as number;
    let len = l as number;
    if (off < 0) off = Math.max(c.length + off, 0);
    if (off > c.length) throw new FunctionArgumentError(1, 'offset is greater than the length of the string');
    if (len < 0) len = c.length - off;
    return c.slice(off, off + len).join('');
  }),
  trim: define(['str:string', 'cutset:string'], ([v, cut]) => {
    const set = new Set(chars(s(cut)));
    const c = chars(s(v));
    let a = 0;
    let b = c.length;
    while (a < b && set.has(c[a]!)) a++;
    while (b > a && set.has(c[b - 1]!)) b--;
    return c.slice(a, b).join('');
  }),
  trimprefix: define(['str:string', 'prefix:string'], ([v, p]) => (s(v).startsWith(s(p)) ? s(v).slice(s(p).length) : s(v))),
  trimsuffix: define(['str:string', 'suffix:string'], ([v, p]) => (s(p) !== '' && s(v).endsWith(s(p)) ? s(v).slice(0, -s(p).length) : s(v))),
  trimspace: define(['str:string'], ([v]) => s(v).trim()),
  split: define(['separator:string', 'str:string'], ([sep, v]) => (s(v) === '' ? [] : s(v).split(s(sep)))),
  join: define(
    ['separator:string'],
    ([sep, ...lists]) => {
      if (lists.length === 0) throw new FunctionCallError('at least one list is required');
      const out: string[] = [];
      lists.forEach((l, li) =>
        (l as Value[]).forEach((x, i) => {
          const str = asString(x);
          if (str === undefined) throw new FunctionArgumentError(li + 1, `element ${i} is ${x === null ? 'null' : 'not a string'}`);
          out.push(str);
        }),
      );
      return out.join(s(sep));
    },
    'lists:list',
  ),
  replace: define(['str:string', 'substr:string', 'replace:string'], ([v, f, r]) => s(v).split(s(f)).join(s(r))),
  regex_replace: define(['str:string', 'substr:string', 'replace:string'], ([v, f, r]) =>
    s(v).replace(
      goRegExp(s(f), 'g'),
      s(r).replace(/\$\{?(\w+)\}?/g, (_, n: string) => (/^\d+$/.test(n) ? `$${n}` : `$<${n}>`)),
    ),
  ),
  format: define(['format:string'], ([f, ...args]) => format(s(f), args), 'args:any'),
  formatlist: define(
    ['format:string'],
    ([f, ...args]) => {
      const lengths = args.flatMap((a) => (Array.isArray(a) ? [a.length] : []));
      if (new Set(lengths).size > 1) throw new FunctionCallError('all lists must have the same length');
      const n = lengths[0] ?? 1;
      return Array.from({ length: n }, (_, i) =>
        format(
          s(f),
          args.map((a) => (Array.isArray(a) ? a[i]! : a)),
        ),
      );
    },
    'args:any',
  ),
};
