/**
 * A parser for HCL2's expression and template syntax (hashicorp/hcl's hclsyntax spec):
 * literals, quoted templates with `${}` interpolation and `%{ if }`/`%{ for }` directives (with
 * `~` strip markers), operators with HCL's precedence, conditionals, `for` expressions, splats,
 * index and attribute access and function calls with `...` expansion.
 * @module
 */
import type { BinaryOp, Expr, TemplatePart } from './ast.ts';
import { HclDiagnostic } from './errors.ts';
import { nextToken, skipSpace, type Token } from './lexer.ts';

/** Binary operators by precedence level, loosest first (HCL's table; all left-associative). */
const LEVELS: BinaryOp[][] = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>='], ['+', '-'], ['*', '/', '%']];

/**
 * Parses a string as hcl2json leaves it: a template whose literal text is already unescaped
 * (only `$${` and `%%{` are escapes), one `${expr}` alone standing for the expression's own value.
 */
export function parseTemplate(src: string): Expr {
  const p = new Parser(src);
  const { parts } = p.templateParts('eof', false);
  return p.template(parts, 0, src.length);
}

/** Parses one expression (all of `src`). */
export function parseExpression(src: string): Expr {
  const p = new Parser(src);
  const e = p.expression();
  p.expectEnd();
  return e;
}

type Stop = 'eof' | 'quote' | 'directive';

class Parser {
  pos = 0;
  constructor(readonly src: string) {}

  private peek(): Token {
    return nextToken(this.src, this.pos);
  }

  private take(): Token {
    const t = this.peek();
    this.pos = t.end;
    return t;
  }

  private is(text: string): boolean {
    const t = this.peek();
    return (t.type === 'punct' || t.type === 'ident') && t.text === text;
  }

  private expect(text: string, what: string): Token {
    const t = this.peek();
    if (t.text !== text || t.type === 'quote') throw this.error(t, what);
    return this.take();
  }

  private error(t: Token, what: string): HclDiagnostic {
    return new HclDiagnostic(
      t.type === 'eof' ? 'Missing expression' : 'Invalid expression',
      t.type === 'eof' ? `Expected ${what}, but the expression ended.` : `Expected ${what}, found ${JSON.stringify(t.text)}.`,
      t.start,
    );
  }

  expectEnd(): void {
    const t = this.peek();
    if (t.type !== 'eof')
      throw new HclDiagnostic(
        'Extra characters after expression',
        `An expression was successfully parsed, but extra characters were found after it: ${JSON.stringify(t.text)}.`,
        t.start,
      );
  }

  expression(): Expr {
    const cond = this.binary(0);
    if (!this.is('?')) return cond;
    this.take();
    const then = this.expression();
    this.expect(':', 'a colon (:) between the results of the conditional');
    const otherwise = this.expression();
    return { kind: 'conditional', cond, then, else: otherwise, start: cond.start, end: otherwise.end };
  }

  private binary(level: number): Expr {
    if (level === LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      const op = LEVELS[level]!.find((o) => t.type === 'punct' && t.text === o);
      if (!op) return left;
      this.take();
      const right = this.binary(level + 1);
      left = { kind: 'binary', op, left, right, start: left.start, end: right.end };
    }
  }

  private unary(): Expr {
    const t = this.peek();
    if (t.type === 'punct' && (t.text === '!' || t.text === '-')) {
      this.take();
      const operand = this.unary();
      return { kind: 'unary', op: t.text, operand, start: t.start, end: operand.end };
    }
    return this.postfix();
  }

  private postfix(): Expr {
    const primary = this.primary();
    const chained = this.traversal(primary, true);
    return primary.kind === 'variable' && chained !== primary
      ? { kind: 'reference', root: primary.name, expr: chained, start: primary.start, end: chained.end }
      : primary.kind === 'variable'
        ? { kind: 'reference', root: primary.name, expr: primary, start: primary.start, end: primary.end }
        : chained;
  }

  /** `.name`, `.0`, `[key]`, `[*]`, `.*` after `e`; `splats` false inside a splat's `each`. */
  private traversal(e: Expr, splats: boolean, attrOnly = false): Expr {
    for (;;) {
      const t = this.peek();
      if (t.type === 'punct' && t.text === '.') {
        const after = nextToken(this.src, t.end);
        if (after.type === 'punct' && after.text === '*') {
          if (!splats) return e;
          this.pos = after.end;
          e = this.splat(e, true);
          continue;
        }
        if (after.type !== 'ident' && after.type !== 'number') throw this.error(after, 'an attribute name');
        this.pos = after.end;
        // `.0` is HCL's legacy index syntax: the same as `[0]`.
        e =
          after.type === 'ident'
            ? { kind: 'attr', object: e, name: after.text, start: e.start, end: after.end }
            : {
                kind: 'index',
                object: e,
                key: { kind: 'literal', value: Number(after.text), start: after.start, end: after.end },
                start: e.start,
                end: after.end,
              };
        continue;
      }
      if (!attrOnly && t.type === 'punct' && t.text === '[') {
        const after = nextToken(this.src, t.end);
        if (after.type === 'punct' && after.text === '*') {
          if (!splats) return e;
          this.pos = after.end;
          this.expect(']', 'a closing bracket after the splat');
          e = this.splat(e, false);
          continue;
        }
        this.take();
        const key = this.expression();
        const close = this.expect(']', 'a closing bracket (])');
        e = { kind: 'index', object: e, key, start: e.start, end: close.end };
        continue;
      }
      return e;
    }
  }

  private splat(source: Expr, attrOnly: boolean): Expr {
    const item: Expr = { kind: 'splatItem', start: this.pos, end: this.pos };
    const each = this.traversal(item, false, attrOnly);
    return { kind: 'splat', source, each, start: source.start, end: Math.max(each.end, this.pos) };
  }

  private primary(): Expr {
    const t = this.peek();
    if (t.type === 'number') {
      this.take();
      return { kind: 'literal', value: Number(t.text), start: t.start, end: t.end };
    }
    if (t.type === 'quote') {
      this.take();
      const { parts, end } = this.templateParts('quote', true);
      return this.template(parts, t.start, end);
    }
    if (t.type === 'ident') {
      this.take();
      if (t.text === 'true' || t.text === 'false') return { kind: 'literal', value: t.text === 'true', start: t.start, end: t.end };
      if (t.text === 'null') return { kind: 'literal', value: null, start: t.start, end: t.end };
      if (this.is('(')) return this.call(t);
      return { kind: 'variable', name: t.text, start: t.start, end: t.end };
    }
    if (t.type === 'punct' && t.text === '(') {
      this.take();
      const expr = this.expression();
      const close = this.expect(')', 'a closing parenthesis');
      return { kind: 'paren', expr, start: t.start, end: close.end };
    }
    if (t.type === 'punct' && t.text === '[') return this.tuple();
    if (t.type === 'punct' && t.text === '{') return this.object();
    if (t.type === 'punct' && t.text === '<' && this.src.startsWith('<<', t.start)) return this.heredoc(t);
    throw this.error(t, 'the start of an expression');
  }

  private call(name: Token): Expr {
    this.take();
    const args: Expr[] = [];
    let expand = false;
    while (!this.is(')')) {
      args.push(this.expression());
      if (this.is('...')) {
        this.take();
        expand = true;
        if (!this.is(')')) throw this.error(this.peek(), 'the closing parenthesis after the expanded argument (...)');
        break;
      }
      if (!this.is(',')) break;
      this.take();
    }
    const close = this.expect(')', 'a comma or the closing parenthesis of the function call');
    return { kind: 'call', name: name.text, args, expand, start: name.start, end: close.end };
  }

  /** `for k, v in collection` (of a for expression or a %{ for } directive): the variables and the collection. */
  private forHead(): { keyVar?: string; valueVar: string; collection: Expr } {
    this.take(); // for
    const first = this.take();
    if (first.type !== 'ident') throw this.error(first, 'an iterator variable name');
    let keyVar: string | undefined;
    let valueVar = first.text;
    if (this.is(',')) {
      this.take();
      const second = this.take();
      if (second.type !== 'ident') throw this.error(second, 'a second iterator variable name');
      keyVar = first.text;
      valueVar = second.text;
    }
    this.expect('in', 'the "in" keyword');
    return { keyVar, valueVar, collection: this.expression() };
  }

  private isFor(): boolean {
    const t = this.peek();
    if (t.type !== 'ident' || t.text !== 'for') return false;
    return nextToken(this.src, t.end).type === 'ident';
  }

  private forCond(): Expr | undefined {
    if (!this.is('if')) return undefined;
    this.take();
    return this.expression();
  }

  private tuple(): Expr {
    const open = this.take();
    if (this.isFor()) {
      const head = this.forHead();
      this.expect(':', 'a colon (:) after the collection of the for expression');
      const value = this.expression();
      const cond = this.forCond();
      const close = this.expect(']', 'the closing bracket of the for expression');
      return { kind: 'forTuple', ...head, value, cond, start: open.start, end: close.end };
    }
    const items: Expr[] = [];
    while (!this.is(']')) {
      items.push(this.expression());
      if (!this.is(',')) break;
      this.take();
    }
    const close = this.expect(']', 'a comma or the closing bracket of the tuple');
    return { kind: 'tuple', items, start: open.start, end: close.end };
  }

  private object(): Expr {
    const open = this.take();
    if (this.isFor()) {
      const head = this.forHead();
      this.expect(':', 'a colon (:) after the collection of the for expression');
      const key = this.expression();
      this.expect('=>', 'the => between the key and value of the for expression');
      const value = this.expression();
      const group = this.is('...');
      if (group) this.take();
      const cond = this.forCond();
      const close = this.expect('}', 'the closing brace of the for expression');
      return { kind: 'forObject', ...head, key, value, group, cond, start: open.start, end: close.end };
    }
    const items: Array<{ key: Expr; value: Expr }> = [];
    while (!this.is('}')) {
      const t = this.peek();
      const after = t.type === 'ident' ? nextToken(this.src, t.end) : undefined;
      let key: Expr;
      // A bare name before `=` or `:` is the key itself, not a variable.
      if (after && after.type === 'punct' && (after.text === '=' || after.text === ':')) {
        this.take();
        key = { kind: 'literal', value: t.text, start: t.start, end: t.end };
      } else key = this.expression();
      const sep = this.peek();
      if (sep.type !== 'punct' || (sep.text !== '=' && sep.text !== ':'))
        throw this.error(sep, 'an equals sign (=) to mark the beginning of the attribute value');
      this.take();
      items.push({ key, value: this.expression() });
      if (this.is(',')) this.take();
    }
    const close = this.expect('}', 'the closing brace of the object');
    return { kind: 'object', items, start: open.start, end: close.end };
  }

  private heredoc(t: Token): Expr {
    const m = /^<<(-?)([A-Za-z_][\w-]*)\r?\n/.exec(this.src.slice(t.start, t.start + 300));
    if (!m) throw this.error(t, 'the start of an expression');
    const bodyStart = t.start + m[0].length;
    const endRe = new RegExp(`^[ \\t]*${m[2]}[ \\t]*$`, 'm');
    const rest = this.src.slice(bodyStart);
    const close = endRe.exec(rest);
    if (!close) throw new HclDiagnostic('Unterminated template string', `No closing marker was found for the string "${m[2]}".`, t.start);
    let body = rest.slice(0, close.index);
    if (m[1] === '-') {
      const lines = body.split('\n');
      const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length));
      body = lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
    }
    const inner = new Parser(body);
    const { parts } = inner.templateParts('eof', false);
    this.pos = bodyStart + close.index + close[0].length;
    return this.template(parts, t.start, this.pos);
  }

  /** A template node, or the one interpolated expression when that is all it holds. */
  template(parts: TemplatePart[], start: number, end: number): Expr {
    if (parts.length === 1 && parts[0]!.kind === 'interp') return parts[0]!.expr;
    if (parts.every((p) => p.kind === 'text')) return { kind: 'literal', value: parts.map((p) => (p as { text: string }).text).join(''), start, end };
    return { kind: 'template', parts, start, end };
  }

  /**
   * Template parts up to `stop`: the end of the text, a closing quote, or a directive keyword
   * (`else`, `endif`, `endfor`, returned in `directive`). `quoted` processes backslash escapes.
   */
  templateParts(stop: Stop, quoted: boolean): { parts: TemplatePart[]; end: number; directive?: string; stripAfter?: boolean } {
    const parts: TemplatePart[] = [];
    let text = '';
    const flush = () => {
      if (text) parts.push({ kind: 'text', text });
      text = '';
    };
    const stripPrev = () => {
      flush();
      const last = parts[parts.length - 1];
      if (last?.kind === 'text') last.text = last.text.replace(/\s+$/, '');
    };
    const src = this.src;
    while (this.pos < src.length) {
      const c = src[this.pos]!;
      if (quoted && c === '"') {
        this.pos++;
        flush();
        return { parts, end: this.pos };
      }
      if (quoted && c === '\\') {
        text += this.escape();
        continue;
      }
      if ((c === '$' || c === '%') && src[this.pos + 1] === c && src[this.pos + 2] === '{') {
        text += `${c}{`;
        this.pos += 3;
        continue;
      }
      if ((c === '$' || c === '%') && src[this.pos + 1] === '{') {
        const open = this.pos;
        this.pos += 2;
        if (src[this.pos] === '~') {
          this.pos++;
          stripPrev();
        }
        flush();
        if (c === '$') {
          const expr = this.expression();
          parts.push({ kind: 'interp', expr });
          if (this.closeTemplateSequence()) this.skipWhite();
          continue;
        }
        const word = this.peek();
        if (word.type === 'ident' && (word.text === 'else' || word.text === 'endif' || word.text === 'endfor')) {
          if (stop !== 'directive')
            throw new HclDiagnostic('Unexpected directive', `The ${JSON.stringify(word.text)} directive has no matching opening directive.`, open);
          this.take();
          const strip = this.closeTemplateSequence();
          if (strip) this.skipWhite();
          return { parts, end: this.pos, directive: word.text, stripAfter: strip };
        }
        parts.push(this.directive(word, open, quoted));
        if (this.lastStrip) this.skipWhite();
        continue;
      }
      text += c;
      this.pos++;
    }
    if (quoted) throw new HclDiagnostic('Unterminated template string', 'No closing marker was found for the string.', this.pos);
    if (stop === 'directive')
      throw new HclDiagnostic('Unterminated template directive', 'A template directive (if or for) has no end (endif or endfor).', this.pos);
    flush();
    return { parts, end: this.pos };
  }

  /** After a `~}`: the literal text that follows loses its leading whitespace. */
  private skipWhite(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++;
  }

  /** Whether the sequence closing here had a `~` strip marker. */
  private lastStrip = false;

  private closeTemplateSequence(): boolean {
    this.pos = skipSpace(this.src, this.pos);
    let strip = false;
    if (this.src[this.pos] === '~') {
      strip = true;
      this.pos++;
    }
    if (this.src[this.pos] !== '}') throw this.error(this.peek(), 'the end of the template sequence (})');
    this.pos++;
    return strip;
  }

  private directive(word: Token, open: number, quoted: boolean): TemplatePart {
    if (word.type === 'ident' && word.text === 'if') {
      this.take();
      const cond = this.expression();
      if (this.closeTemplateSequence()) this.skipWhite();
      const first = this.templateParts('directive', quoted);
      let otherwise: TemplatePart[] = [];
      let last = first;
      if (first.directive === 'else') {
        last = this.templateParts('directive', quoted);
        otherwise = last.parts;
      }
      if (last.directive !== 'endif') throw new HclDiagnostic('Unexpected directive', `Expected an endif directive, found ${last.directive}.`, open);
      this.lastStrip = last.stripAfter ?? false;
      return { kind: 'if', cond, then: first.parts, else: otherwise };
    }
    if (word.type === 'ident' && word.text === 'for') {
      const { keyVar, valueVar, collection } = this.forHead();
      if (this.closeTemplateSequence()) this.skipWhite();
      const body = this.templateParts('directive', quoted);
      if (body.directive !== 'endfor') throw new HclDiagnostic('Unexpected directive', `Expected an endfor directive, found ${body.directive}.`, open);
      this.lastStrip = body.stripAfter ?? false;
      return { kind: 'for', keyVar, valueVar, collection, body: body.parts };
    }
    throw new HclDiagnostic(
      'Invalid template directive',
      'A template directive keyword ("if", "for", etc) is expected at the beginning of a %{ sequence.',
      open,
    );
  }

  private escape(): string {
    const s = this.src;
    const n = s[this.pos + 1];
    const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };
    if (n !== undefined && simple[n] !== undefined) {
      this.pos += 2;
      return simple[n];
    }
    const hex = n === 'u' ? 4 : n === 'U' ? 8 : 0;
    const digits = hex ? s.slice(this.pos + 2, this.pos + 2 + hex) : '';
    if (hex && /^[0-9A-Fa-f]+$/.test(digits) && digits.length === hex) {
      this.pos += 2 + hex;
      return String.fromCodePoint(parseInt(digits, 16));
    }
    throw new HclDiagnostic('Invalid escape sequence', `The symbol ${JSON.stringify(n ?? '')} is not a valid escape sequence selector.`, this.pos);
  }
}
