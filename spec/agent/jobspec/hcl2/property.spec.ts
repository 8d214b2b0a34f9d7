/**
 * A property spec of berth's HCL2 evaluator (issue #36): a generated expression tree, printed to
 * HCL text, parses and evaluates to what a direct reading of the tree gives (a small reference
 * interpreter here), with HCL's precedence deciding where the printer may leave parentheses out.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { evaluate } from '../../../../agent/jobspec/hcl2/evaluate.ts';
import { nomadFunctions } from '../../../../agent/jobspec/hcl2/functions/index.ts';
import { parseTemplate } from '../../../../agent/jobspec/hcl2/parser.ts';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';

type Tree =
  | { t: 'num'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'bin'; op: '+' | '-' | '*' | '==' | '!=' | '<' | '>=' | '&&' | '||'; l: Tree; r: Tree }
  | { t: 'not'; x: Tree }
  | { t: 'cond'; c: Tree; a: Tree; b: Tree }
  | { t: 'tuple'; xs: Tree[] }
  | { t: 'len'; x: Tree };

const PREC: Record<string, number> = { '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 4, '>=': 4, '+': 5, '-': 5, '*': 6 };

const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: 0, max: 50 }).map((v): Tree => ({ t: 'num', v })),
    fc.boolean().map((v): Tree => ({ t: 'bool', v })),
    fc.stringMatching(/^[a-z ]{0,4}$/).map((v): Tree => ({ t: 'str', v })),
    fc
      .record({ op: fc.constantFrom('+', '-', '*', '==', '!=', '<', '>=', '&&', '||'), l: tie('tree'), r: tie('tree') })
      .map((x) => ({ t: 'bin', ...x }) as Tree),
    tie('tree').map((x): Tree => ({ t: 'not', x })),
    fc.record({ c: tie('tree'), a: tie('tree'), b: tie('tree') }).map((x) => ({ t: 'cond', ...x }) as Tree),
    fc.array(tie('tree'), { maxLength: 3 }).map((xs): Tree => ({ t: 'tuple', xs })),
    tie('tree').map((x): Tree => ({ t: 'len', x })),
  ),
})).tree;

/** The reference reading: undefined where HCL reports an error. */
function direct(n: Tree): Value | undefined {
  const num = (v: Value | undefined) => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined);
  const bool = (v: Value | undefined) => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : undefined);
  switch (n.t) {
    case 'num':
    case 'bool':
    case 'str':
      return n.v;
    case 'not': {
      const b = bool(direct(n.x));
      return b === undefined ? undefined : !b;
    }
    case 'cond': {
      const c = bool(direct(n.c));
      return c === undefined ? undefined : direct(c ? n.a : n.b);
    }
    case 'tuple': {
      const xs = n.xs.map(direct);
      return xs.some((x) => x === undefined) ? undefined : (xs as Value[]);
    }
    case 'len': {
      const x = direct(n.x);
      if (Array.isArray(x)) return x.length;
      if (typeof x === 'string') return x.length;
      // cty's length takes strings and collections only.
      return undefined;
    }
    case 'bin': {
      const l = direct(n.l);
      const r = direct(n.r);
      if (l === undefined || r === undefined) return undefined;
      if (n.op === '==' || n.op === '!=') return (JSON.stringify(l) === JSON.stringify(r)) === (n.op === '==');
      if (n.op === '&&' || n.op === '||') {
        const [a, b] = [bool(l), bool(r)];
        return a === undefined || b === undefined ? undefined : n.op === '&&' ? a && b : a || b;
      }
      const [a, b] = [num(l), num(r)];
      if (a === undefined || b === undefined) return undefined;
      return n.op === '+' ? a + b : n.op === '-' ? a - b : n.op === '*' ? a * b : n.op === '<' ? a < b : a >= b;
    }
  }
}

/** HCL text for a tree; `minimal` leaves out the parentheses precedence makes unnecessary. */
function print(n: Tree, minimal: boolean, parent = 0, right = false): string {
  switch (n.t) {
    case 'num':
    case 'bool':
      return String(n.v);
    case 'str':
      return JSON.stringify(n.v);
    case 'not':
      return `!${print(n.x, minimal, 7)}`;
    case 'cond': {
      const s = `${print(n.c, minimal, 1)} ? ${print(n.a, minimal)} : ${print(n.b, minimal)}`;
      return minimal && parent === 0 ? s : `(${s})`;
    }
    case 'tuple':
      return `[${n.xs.map((x) => print(x, minimal)).join(', ')}]`;
    case 'len':
      return `length(${print(n.x, minimal)})`;
    case 'bin': {
      const p = PREC[n.op]!;
      const s = `${print(n.l, minimal, p)} ${n.op} ${print(n.r, minimal, p, true)}`;
      // Left-associative: a right operand of the same level keeps its parentheses.
      return minimal && (p > parent || (p === parent && !right)) ? s : `(${s})`;
    }
  }
}

const functions = nomadFunctions({ basedir: '/nonexistent', allowFs: false });
const run = (text: string): Value | undefined => {
  const src = `\${${text}}`;
  try {
    return evaluate(parseTemplate(src), { src, vars: new Map(), local: () => null, localNames: () => [], functions });
  } catch (e) {
    if ((e as Error).name === 'HclDiagnostic') return undefined;
    throw e;
  }
};

/** A template: literal text (which may hold `${` and `%{`, escaped when printed) and interpolations. */
type Part = { text: string } | { expr: Tree };
const part: fc.Arbitrary<Part> = fc.oneof(
  fc.stringMatching(/^[a-z ${}%]{1,5}$/).map((text): Part => ({ text })),
  tree.map((expr): Part => ({ expr })),
);

/** The template's value read directly: text as is, each interpolation's value as a string. */
function directTemplate(parts: Part[]): Value | undefined {
  if (parts.length === 1 && 'expr' in parts[0]!) return direct(parts[0].expr);
  let out = '';
  for (const p of parts) {
    if ('text' in p) out += p.text;
    else {
      const v = direct(p.expr);
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined;
      out += String(v);
    }
  }
  return out;
}

/**
 * HCL text for a template: adjacent texts joined, `${`/`%{` in text escaped, and a `$` or `%` just
 * before an interpolation written as `${"$"}` (`$${` would be an escape).
 */
function printTemplate(parts: Part[]): string {
  const merged: Part[] = [];
  for (const p of parts) {
    const last = merged[merged.length - 1];
    if ('text' in p && last && 'text' in last) merged[merged.length - 1] = { text: last.text + p.text };
    else merged.push(p);
  }
  return merged
    .map((p, i) => {
      if ('expr' in p) return `\${${print(p.expr, true)}}`;
      const text = p.text.replace(/([$%])\{/g, '$1$1{');
      return i + 1 < merged.length && /[$%]$/.test(text) ? `${text.slice(0, -1)}\${${JSON.stringify(text.slice(-1))}}` : text;
    })
    .join('');
}

describe('hcl2: property: printed and parsed expressions evaluate as their trees do', () => {
  it('a printed template (escapes, interpolations) evaluates to its parts read directly', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const src = printTemplate(parts);
        let got: Value | undefined;
        try {
          got = evaluate(parseTemplate(src), { src, vars: new Map(), local: () => null, localNames: () => [], functions });
        } catch (e) {
          if ((e as Error).name !== 'HclDiagnostic') throw e;
        }
        expect(got).to.deep.equal(directTemplate(parts));
      }),
      { numRuns: 300, seed: 38 },
    );
  });

  it('fully parenthesised text evaluates to the tree read directly', () => {
    fc.assert(
      fc.property(tree, (t) => {
        expect(run(print(t, false))).to.deep.equal(direct(t));
      }),
      { numRuns: 1000, seed: 36 },
    );
  });

  it('text with only the parentheses precedence needs evaluates the same (HCL precedence and associativity)', () => {
    fc.assert(
      fc.property(tree, (t) => {
        expect(run(print(t, true))).to.deep.equal(run(print(t, false)));
      }),
      { numRuns: 1000, seed: 37 },
    );
  });
});
