/**
 * The parser of Go's `text/template` (Go 1.19's `text/template/parse/parse.go`): the same
 * look-ahead, the same checks and the same error texts.
 * @module
 */
import { TemplateParseError } from './errors.ts';
import { itemString, lex, T, type Item } from './lex.ts';
import type { BranchNode, CommandNode, ElseNode, EndNode, ListNode, Node, NumberNode, PipeNode, TemplateNode, VariableNode } from './nodes.ts';
import { nodeString } from './nodes.ts';
import { SyntaxErr, unquote, unquoteChar } from './unquote.ts';

/** One parsed template body. */
export interface Tree {
  /** The template's name. */
  name: string;
  /** The name of the top-level template whose text held this one (used in error locations). */
  parseName: string;
  /** The body. */
  root: ListNode;
  /** The full text that was parsed (for line/column of exec errors). */
  text: string;
}

class Fail {
  constructor(readonly message: string) {}
}

interface Lexer {
  items: Item[];
  i: number;
}

class Parser {
  token: Item[] = [];
  peekCount = 0;
  vars: string[] = ['$'];
  actionLine = 0;
  rangeDepth = 0;
  root!: ListNode;
  name: string;

  constructor(
    name: string,
    readonly parseName: string,
    readonly text: string,
    readonly lx: Lexer,
    readonly treeSet: Map<string, Tree>,
    readonly hasFunction: (name: string) => boolean,
  ) {
    this.name = name;
  }

  nextItem(): Item {
    const it = this.lx.items[this.lx.i];
    if (it === undefined) return this.lx.items[this.lx.items.length - 1]!;
    this.lx.i++;
    return it;
  }
  next(): Item {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.nextItem();
    return this.token[this.peekCount]!;
  }
  backup() {
    this.peekCount++;
  }
  backup2(t1: Item) {
    this.token[1] = t1;
    this.peekCount = 2;
  }
  backup3(t2: Item, t1: Item) {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }
  peek(): Item {
    if (this.peekCount > 0) return this.token[this.peekCount - 1]!;
    this.peekCount = 1;
    this.token[0] = this.nextItem();
    return this.token[0];
  }
  nextNonSpace(): Item {
    let t: Item;
    do t = this.next();
    while (t.typ === T.Space);
    return t;
  }
  peekNonSpace(): Item {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }
  errorf(msg: string): never {
    throw new Fail(`template: ${this.parseName}:${this.token[0]!.line}: ${msg}`);
  }
  expect(expected: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== expected) this.unexpected(t, context);
    return t;
  }
  expectOneOf(e1: T, e2: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== e1 && t.typ !== e2) this.unexpected(t, context);
    return t;
  }
  unexpected(token: Item, context: string): never {
    if (token.typ === T.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in ${context}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in '.length);
      }
      this.errorf(`${itemString(token)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`);
  }
  unq(s: string): string {
    try {
      return unquote(s);
    } catch (e) {
      if (e instanceof SyntaxErr) this.errorf(e.message);
      throw e;
    }
  }

  add() {
    const tree = this.treeSet.get(this.name);
    if (!tree || isEmpty(tree.root)) {
      this.treeSet.set(this.name, { name: this.name, parseName: this.parseName, root: this.root, text: this.text });
      return;
    }
    if (!isEmpty(this.root)) this.errorf(`template: multiple definition of template ${JSON.stringify(this.name)}`);
  }

  sub(name: string): Parser {
    const p = new Parser(name, this.parseName, this.text, this.lx, this.treeSet, this.hasFunction);
    p.token = this.token;
    p.peekCount = this.peekCount;
    return p;
  }
  syncFrom(p: Parser) {
    this.token = p.token;
    this.peekCount = p.peekCount;
  }

  parse() {
    this.root = { type: 'list', pos: this.peek().pos, nodes: [] };
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === T.Define) {
          const p = this.sub('definition');
          p.parseDefinition();
          this.syncFrom(p);
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      this.root.nodes.push(n);
    }
  }

  parseDefinition() {
    const context = 'define clause';
    const name = this.expectOneOf(T.String, T.RawString, context);
    this.name = this.unq(name.val);
    this.expect(T.RightDelim, context);
    const [root, end] = this.itemList();
    this.root = root;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  itemList(): [ListNode, Node] {
    const list: ListNode = { type: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Text:
        return { type: 'text', pos: token.pos, text: token.val };
      case T.LeftDelim: {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
    }
    this.unexpected(token, 'input');
  }

  action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Block:
        return this.blockControl();
      case T.Break:
      case T.Continue: {
        const word = token.typ === T.Break ? 'break' : 'continue';
        const t = this.nextNonSpace();
        if (t.typ !== T.RightDelim) this.unexpected(t, `{{${word}}}`);
        if (this.rangeDepth === 0) this.errorf(`{{${word}}} outside {{range}}`);
        return { type: word, pos: token.pos, line: token.line };
      }
      case T.Else:
        return this.elseControl();
      case T.End:
        return { type: 'end', pos: this.expect(T.RightDelim, 'end').pos } satisfies EndNode;
      case T.If:
        return this.control('if', true);
      case T.Range:
        return this.control('range', false);
      case T.Template:
        return this.templateControl();
      case T.With:
        return this.control('with', false);
    }
    this.backup();
    const t = this.peek();
    return { type: 'action', pos: t.pos, line: t.line, pipe: this.pipeline('command', T.RightDelim) };
  }

  elseControl(): ElseNode {
    const peek = this.peekNonSpace();
    if (peek.typ === T.If) return { type: 'else', pos: peek.pos, line: peek.line };
    const token = this.expect(T.RightDelim, 'else');
    return { type: 'else', pos: token.pos, line: token.line };
  }

  control(context: 'if' | 'range' | 'with', allowElseIf: boolean): BranchNode {
    const nvars = this.vars.length;
    try {
      const pipe = this.pipeline(context, T.RightDelim);
      if (context === 'range') this.rangeDepth++;
      const [list, first] = this.itemList();
      let next = first;
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        if (allowElseIf && this.peek().typ === T.If) {
          this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.control('if', true)] };
        } else {
          [elseList, next] = this.itemList();
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { type: context, pos: pipe.pos, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = nvars;
    }
  }

  parseTemplateName(token: Item, context: string): string {
    if (token.typ === T.String || token.typ === T.RawString) return this.unq(token.val);
    this.unexpected(token, context);
  }

  templateControl(): TemplateNode {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, T.RightDelim);
    }
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  blockControl(): TemplateNode {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    const pipe = this.pipeline(context, T.RightDelim);
    const block = this.sub(name);
    const [root, end] = block.itemList();
    block.root = root;
    this.syncFrom(block);
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    block.add();
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  pipeline(context: string, end: T): PipeNode {
    const token = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: token.pos, line: token.line, isAssign: false, decl: [], cmds: [] };
    decls: for (;;) {
      const v = this.peekNonSpace();
      if (v.typ === T.Variable) {
        this.next();
        const tokenAfterVariable = this.peek();
        const next = this.peekNonSpace();
        if (next.typ === T.Assign || next.typ === T.Declare) {
          pipe.isAssign = next.typ === T.Assign;
          this.nextNonSpace();
          pipe.decl.push(newVariable(v.pos, v.val));
          this.vars.push(v.val);
        } else if (next.typ === T.Char && next.val === ',') {
          this.nextNonSpace();
          pipe.decl.push(newVariable(v.pos, v.val));
          this.vars.push(v.val);
          if (context === 'range' && pipe.decl.length < 2) {
            const t = this.peekNonSpace().typ;
            if (t === T.Variable || t === T.RightDelim || t === T.RightParen) continue decls;
            this.errorf('range can only initialize variables');
          }
          this.errorf(`too many declarations in ${context}`);
        } else if (tokenAfterVariable.typ === T.Space) this.backup3(v, tokenAfterVariable);
        else this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      switch (token.typ) {
        case end:
          this.checkPipeline(pipe, context);
          return pipe;
        case T.Bool:
        case T.CharConstant:
        case T.Complex:
        case T.Dot:
        case T.Field:
        case T.Identifier:
        case T.Number:
        case T.Nil:
        case T.RawString:
        case T.String:
        case T.Variable:
        case T.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string) {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]!.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') this.errorf(`non executable command in pipeline stage ${i + 2}`);
    });
  }

  command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === T.Space) continue;
      if (token.typ === T.RightDelim || token.typ === T.RightParen) this.backup();
      else if (token.typ !== T.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  operand(): Node | null {
    let node = this.term();
    if (!node) return null;
    if (this.peek().typ === T.Field) {
      const chainPos = this.peek().pos;
      const fields: string[] = [];
      while (this.peek().typ === T.Field) fields.push(this.next().val.slice(1));
      const chainString = nodeString({ type: 'chain', pos: chainPos, node, field: fields });
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos: chainPos, ident: chainString.slice(1).split('.') };
          break;
        case 'variable':
          node = newVariable(chainPos, chainString);
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${JSON.stringify(nodeString(node))}`);
          break;
        default:
          node = { type: 'chain', pos: chainPos, node, field: fields };
      }
    }
    return node;
  }

  term(): Node | null {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Identifier:
        if (!this.hasFunction(token.val)) this.errorf(`function ${JSON.stringify(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, ident: token.val };
      case T.Dot:
        return { type: 'dot', pos: token.pos };
      case T.Nil:
        return { type: 'nil', pos: token.pos };
      case T.Variable: {
        const v = newVariable(token.pos, token.val);
        if (!this.vars.includes(v.ident[0]!)) this.errorf(`undefined variable ${JSON.stringify(v.ident[0])}`);
        return v;
      }
      case T.Field:
        return { type: 'field', pos: token.pos, ident: token.val.slice(1).split('.') };
      case T.Bool:
        return { type: 'bool', pos: token.pos, value: token.val === 'true' };
      case T.CharConstant:
      case T.Complex:
      case T.Number:
        return this.newNumber(token.pos, token.val, token.typ);
      case T.LeftParen:
        return this.pipeline('parenthesized pipeline', T.RightParen);
      case T.String:
      case T.RawString:
        return { type: 'string', pos: token.pos, quoted: token.val, text: this.unq(token.val) };
    }
    this.backup();
    return null;
  }

  newNumber(pos: number, text: string, typ: T): NumberNode {
    const n: NumberNode = { type: 'number', pos, text, isInt: false, isUint: false, isFloat: false, isComplex: false, int64: 0, float64: 0 };
    if (typ === T.CharConstant) {
      let r: number, tail: string;
      try {
        [r, , tail] = unquoteChar(text.slice(1), text[0]!);
      } catch (e) {
        if (e instanceof SyntaxErr) this.errorf(e.message);
        throw e;
      }
      if (tail !== "'") this.errorf(`malformed character constant: ${text}`);
      return { ...n, isInt: true, isUint: true, isFloat: true, int64: r, float64: r };
    }
    if (typ === T.Complex) {
      // `1+2i`, `1.5e3-2i`: the sign that splits the parts is the last one not in an exponent.
      const m = /^(.*[^eEpP+-])([+-].*)i$/.exec(text);
      const re = m ? parseGoFloat(m[1]!) : undefined;
      const im = m ? parseGoFloat(m[2]!) : undefined;
      if (re === undefined || im === undefined) this.errorf(`illegal number syntax: ${JSON.stringify(text)}`);
      return simplifyComplex({ ...n, isComplex: true, complex128: [re!, im!] });
    }
    if (text.endsWith('i')) {
      const im = parseGoFloat(text.slice(0, -1));
      if (im !== undefined) return simplifyComplex({ ...n, isComplex: true, complex128: [0, im] });
    }
    const i = parseGoInt(text);
    if (i !== undefined) {
      n.isInt = true;
      n.int64 = i;
      n.isUint = i >= 0;
      n.isFloat = true;
      n.float64 = i;
    } else {
      const f = parseGoFloat(text);
      if (f !== undefined) {
        if (!/[.eEpP]/.test(text)) this.errorf(`integer overflow: ${JSON.stringify(text)}`);
        n.isFloat = true;
        n.float64 = f;
        if (Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
          n.isInt = true;
          n.int64 = f;
        }
      }
    }
    if (!n.isInt && !n.isUint && !n.isFloat) this.errorf(`illegal number syntax: ${JSON.stringify(text)}`);
    return n;
  }
}

function underscoreOK(s: string): boolean {
  // Go's rule: underscores only between digits (or after a base prefix).
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && /[xXbBoO]/.test(s[1]!)) {
    i = 2;
    saw = '0';
    hex = /[xX]/.test(s[1]!);
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

function parseGoInt(text: string): number | undefined {
  let s = text;
  let neg = false;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  let base = 10;
  if (/^0[xX]/.test(s)) {
    base = 16;
    s = s.slice(2);
  } else if (/^0[bB]/.test(s)) {
    base = 2;
    s = s.slice(2);
  } else if (/^0[oO]/.test(s)) {
    base = 8;
    s = s.slice(2);
  } else if (/^0./.test(s)) {
    base = 8;
    s = s.slice(1);
  }
  if (s.includes('_')) {
    if (!underscoreOK(text)) return undefined;
    s = s.replace(/_/g, '');
  }
  const digits = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!digits.test(s)) return undefined;
  const v = BigInt((base === 16 ? '0x' : base === 8 ? '0o' : base === 2 ? '0b' : '') + s) * (neg ? -1n : 1n);
  if (v >= 2n ** 63n || v < -(2n ** 63n)) return undefined;
  return Number(v);
}

function parseGoFloat(text: string): number | undefined {
  let s = text;
  if (s.includes('_')) {
    if (!underscoreOK(s)) return undefined;
    s = s.replace(/_/g, '');
  }
  if (/^[+-]?0[xX]/.test(s)) {
    const m = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/.exec(s);
    if (!m || (m[2] === '' && !m[3])) return undefined;
    const mant = parseInt((m[2] || '0') + (m[3] ?? ''), 16) / 16 ** (m[3]?.length ?? 0);
    return (m[1] === '-' ? -1 : 1) * mant * 2 ** Number(m[4]);
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  const f = Number(s);
  if (!Number.isFinite(f)) return undefined;
  return f;
}

const newVariable = (pos: number, ident: string): VariableNode => ({ type: 'variable', pos, ident: ident.split('.') });

const isEmpty = (n: ListNode) => n.nodes.every((x) => (x.type === 'text' ? x.text.replace(/[\s\u0085]/g, '') === '' : false));

/**
 * Parses `text` as the template `name`: returns every tree it defines (the template itself and
 * each `define`/`block`), or throws {@link TemplateParseError} with Go's message.
 */
/** Go's simplifyComplex: a complex constant with no imaginary part is also a float (and an int when integral). */
function simplifyComplex(n: NumberNode): NumberNode {
  const [re, im] = n.complex128!;
  if (im !== 0) return n;
  const isInt = Number.isInteger(re) && Math.abs(re) < 2 ** 63;
  return { ...n, isFloat: true, float64: re, ...(isInt ? { isInt: true, int64: re, isUint: re >= 0 } : {}) };
}

export function parseTrees(name: string, text: string, hasFunction: (name: string) => boolean, delims?: readonly [string, string]): Map<string, Tree> {
  const treeSet = new Map<string, Tree>();
  const items = lex(text, { breakOK: !hasFunction('break'), continueOK: !hasFunction('continue'), ...(delims ? { delims } : {}) });
  const p = new Parser(name, name, text, { items, i: 0 }, treeSet, hasFunction);
  try {
    p.parse();
    p.add();
  } catch (e) {
    if (e instanceof Fail) throw new TemplateParseError(e.message);
    throw e;
  }
  return treeSet;
}
