/**
 * The executor of Go's `text/template` (Go 1.19's `text/template/exec.go`) over berth's data
 * model (see `values.ts`): the same evaluation order, scoping, truth and error texts.
 * @module
 */
import { TemplateExecError, TemplateFuncError } from './errors.ts';
import { quote, sprint } from './fmt.ts';
import { BUILTINS, type FuncSpec, type ParamKind, truthOf } from './funcs.ts';
import type {
  BranchNode,
  ChainNode,
  CommandNode,
  FieldNode,
  IdentifierNode,
  ListNode,
  Node,
  NumberNode,
  PipeNode,
  TemplateNode,
  VariableNode,
} from './nodes.ts';
import { nodeString } from './nodes.ts';
import type { Tree } from './parse.ts';
import { GoComplex, GoFloat, Iface, isTrue, kindOf, sortedKeys, typeName, unwrap } from './values.ts';

/** What `missingkey=` asks for when a map has no entry for a key. */
export type MissingKey = 'default' | 'zero' | 'error';

/** The view of a template the executor needs. */
export interface ExecTemplate {
  /** The template's name. */
  readonly name: string;
  /** Its parse tree, or null when it was never parsed. */
  readonly tree: Tree | null;
  /** Looks up an associated template. */
  lookup(name: string): ExecTemplate | undefined;
  /** Looks up a user function. */
  func(name: string): FuncSpec | undefined;
  /** The missingkey option. */
  readonly missingKey: MissingKey;
}

const MISSING = Symbol('missingVal');
type Final = unknown;

class Abort {
  constructor(readonly err: TemplateExecError) {}
}
const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');
const MAX_EXEC_DEPTH = 100000;

interface Variable {
  name: string;
  value: unknown;
}

function byteCol(text: string, pos: number): { line: number; col: number } {
  const before = text.slice(0, pos);
  const nl = before.lastIndexOf('\n');
  const line = 1 + (before.split('\n').length - 1);
  const col = nl === -1 ? Buffer.byteLength(before) : Buffer.byteLength(before.slice(nl + 1));
  return { line, col };
}

class State {
  node: Node | null = null;
  constructor(
    public tmpl: ExecTemplate,
    readonly out: string[],
    public vars: Variable[],
    public depth: number,
  ) {}

  at(n: Node) {
    this.node = n;
  }

  errorf(msg: string): never {
    const name = this.tmpl.name;
    let full: string;
    if (!this.node || !this.tmpl.tree) full = `template: ${name}: ${msg}`;
    else {
      const tree = this.tmpl.tree;
      const { line, col } = byteCol(tree.text, this.node.pos);
      full = `template: ${tree.parseName}:${line}:${col}: executing ${quote(name)} at <${nodeString(this.node)}>: ${msg}`;
    }
    throw new Abort(new TemplateExecError(full, name));
  }

  push(name: string, value: unknown) {
    this.vars.push({ name, value });
  }
  setTopVar(n: number, value: unknown) {
    this.vars[this.vars.length - n]!.value = value;
  }
  setVar(name: string, value: unknown) {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }
  varValue(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.errorf(`undefined variable: ${name}`);
  }

  walk(dot: unknown, node: Node): void {
    this.at(node);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
      case 'if':
      case 'with':
        return this.walkIfOrWith(node, dot);
      case 'list':
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case 'range':
        return this.walkRange(dot, node);
      case 'template':
        return this.walkTemplate(dot, node);
      case 'text':
        this.out.push(node.text);
        return;
    }
    this.errorf(`unknown node: ${nodeString(node)}`);
  }

  walkIfOrWith(n: BranchNode, dot: unknown) {
    const mark = this.vars.length;
    try {
      const val = this.evalPipeline(dot, n.pipe);
      const { truth, ok } = isTrue(unwrap(val));
      if (!ok) this.errorf(`if/with can't use ${sprint([val])}`);
      if (truth) this.walk(n.type === 'with' ? val : dot, n.list);
      else if (n.elseList) this.walk(dot, n.elseList);
    } finally {
      this.vars.length = mark;
    }
  }

  walkRange(dot: unknown, r: BranchNode) {
    this.at(r);
    const outer = this.vars.length;
    try {
      const val = unwrap(this.evalPipeline(dot, r.pipe));
      const mark = this.vars.length;
      const one = (index: unknown, elem: unknown) => {
        if (r.pipe.decl.length > 0) this.setTopVar(1, elem);
        if (r.pipe.decl.length > 1) this.setTopVar(2, index);
        try {
          this.walk(elem, r.list);
        } catch (e) {
          if (e !== CONTINUE) throw e;
        } finally {
          this.vars.length = mark;
        }
      };
      switch (kindOf(val)) {
        case 'slice': {
          const a = val as unknown[];
          if (a.length === 0) break;
          for (let i = 0; i < a.length; i++) one(i, new Iface(a[i] ?? null));
          return;
        }
        case 'map': {
          const m = val as Record<string, unknown>;
          const keys = sortedKeys(m);
          if (keys.length === 0) break;
          for (const k of keys) one(k, new Iface(m[k] ?? null));
          return;
        }
        case 'invalid':
        case 'nil':
          break;
        default:
          this.errorf(`range can't iterate over ${sprint([val])}`);
      }
      if (r.elseList) this.walk(dot, r.elseList);
    } catch (e) {
      if (e !== BREAK) throw e;
    } finally {
      this.vars.length = outer;
    }
  }

  walkTemplate(dot: unknown, t: TemplateNode) {
    this.at(t);
    const tmpl = this.tmpl.lookup(t.name);
    if (!tmpl) this.errorf(`template ${quote(t.name)} not defined`);
    if (this.depth === MAX_EXEC_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    dot = this.evalPipeline(dot, t.pipe);
    const s = new State(tmpl, this.out, [{ name: '$', value: dot }], this.depth + 1);
    const tree = tmpl.tree;
    if (!tree) return s.errorf(`${quote(tmpl.name)} is an incomplete or empty template`);
    s.walk(dot, tree.root);
  }

  evalPipeline(dot: unknown, pipe: PipeNode | null): unknown {
    if (!pipe) return undefined;
    this.at(pipe);
    let value: unknown = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      if (value instanceof Iface) value = value.v === null ? undefined : value.v;
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0]!, value);
      else this.push(v.ident[0]!, value);
    }
    return value;
  }

  notAFunction(args: Node[] | null, final: Final) {
    if ((args && args.length > 1) || final !== MISSING) this.errorf(`can't give argument to non-function ${nodeString(args![0]!)}`);
  }

  evalCommand(dot: unknown, cmd: CommandNode, final: Final): unknown {
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
        break;
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
    this.errorf(`can't evaluate command ${quote(nodeString(first))}`);
  }

  idealConstant(c: NumberNode): unknown {
    this.at(c);
    const isHexInt = c.text.length > 2 && c.text[0] === '0' && (c.text[1] === 'x' || c.text[1] === 'X') && !/[pP]/.test(c.text);
    const isRuneInt = c.text[0] === "'";
    if (c.isComplex) return new GoComplex(c.complex128![0], c.complex128![1]);
    if (c.isFloat && !isHexInt && !isRuneInt && /[.eEpP]/.test(c.text)) return Number.isInteger(c.float64) ? new GoFloat(c.float64) : c.float64;
    if (c.isInt) return c.int64;
    if (c.isUint) this.errorf(`${c.text} overflows int`);
    return undefined;
  }

  evalFieldNode(dot: unknown, field: FieldNode, args: Node[] | null, final: Final): unknown {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  evalChainNode(dot: unknown, chain: ChainNode, args: Node[] | null, final: Final): unknown {
    this.at(chain);
    if (chain.field.length === 0) this.errorf('internal error: no fields in evalChainNode');
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, chain, chain.field, args, final);
  }

  evalVariableNode(dot: unknown, v: VariableNode, args: Node[] | null, final: Final): unknown {
    this.at(v);
    const value = this.varValue(v.ident[0]!);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, v, v.ident.slice(1), args, final);
  }

  evalFieldChain(dot: unknown, receiver: unknown, node: Node, ident: string[], args: Node[] | null, final: Final): unknown {
    const n = ident.length;
    for (let i = 0; i < n - 1; i++) receiver = this.evalField(dot, ident[i]!, node, null, MISSING, receiver);
    return this.evalField(dot, ident[n - 1]!, node, args, final, receiver);
  }

  evalField(_dot: unknown, fieldName: string, _node: Node, args: Node[] | null, final: Final, receiver: unknown): unknown {
    if (receiver === undefined) {
      if (this.tmpl.missingKey === 'error') this.errorf(`nil data; no entry for key ${quote(fieldName)}`);
      return undefined;
    }
    const typ = typeName(receiver);
    let r: unknown = receiver;
    if (r instanceof Iface) {
      if (r.v === null) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
      r = r.v;
    }
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    if (kindOf(r) === 'map') {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      const m = r as Record<string, unknown>;
      if (Object.hasOwn(m, fieldName) && m[fieldName] !== undefined) return new Iface(m[fieldName]);
      switch (this.tmpl.missingKey) {
        case 'zero':
          return new Iface(null);
        case 'error':
          this.errorf(`map has no entry for key ${quote(fieldName)}`);
      }
      return undefined;
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typ}`);
  }

  evalFunction(dot: unknown, node: IdentifierNode, cmd: Node, args: Node[] | null, final: Final): unknown {
    this.at(node);
    const name = node.ident;
    const user = this.tmpl.func(name);
    const fn = user ?? BUILTINS.get(name);
    if (!fn) this.errorf(`${quote(name)} is not a defined function`);
    return this.evalCall(dot, fn, !user, cmd, name, args, final);
  }

  evalCall(dot: unknown, fun: FuncSpec, isBuiltin: boolean, node: Node, name: string, argNodes: Node[] | null, final: Final): unknown {
    const args = argNodes ? argNodes.slice(1) : [];
    const nparams = fun.params.length + (fun.variadic ? 1 : 0);
    let numIn = args.length;
    if (final !== MISSING) numIn++;
    let numFixed = args.length;
    if (fun.variadic) {
      numFixed = fun.params.length;
      if (numIn < numFixed) this.errorf(`wrong number of args for ${name}: want at least ${numFixed} got ${args.length}`);
    } else if (numIn !== nparams) this.errorf(`wrong number of args for ${name}: want ${nparams} got ${numIn}`);

    if (isBuiltin && (name === 'and' || name === 'or')) {
      let v: unknown = undefined;
      for (const arg of args) {
        v = this.evalArg(dot, 'value', arg);
        if (truthOf(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validateType(final, 'value');
      return v;
    }
    const argv: unknown[] = [];
    let i = 0;
    for (; i < numFixed && i < args.length; i++) argv.push(this.evalArg(dot, fun.params[i]!, args[i]!));
    if (fun.variadic) for (; i < args.length; i++) argv.push(this.evalArg(dot, fun.variadic, args[i]!));
    if (final !== MISSING) {
      let t: ParamKind;
      if (fun.variadic) t = numIn - 1 < numFixed ? fun.params[numIn - 1]! : fun.variadic;
      else t = fun.params[fun.params.length - 1]!;
      argv.push(this.validateType(final, t));
    }
    try {
      return fun.fn(argv);
    } catch (e) {
      if (e instanceof Abort) throw e;
      this.at(node);
      const msg = e instanceof TemplateFuncError || e instanceof Error ? e.message : String(e);
      this.errorf(`error calling ${name}: ${msg}`);
    }
  }

  validateType(value: unknown, kind: ParamKind | null): unknown {
    if (value === undefined) {
      if (kind === null || kind === 'value') return undefined;
      if (kind === 'any') return null;
      this.errorf(`invalid value; expected ${kind}`);
    }
    if (kind === null || kind === 'value') return value;
    if (kind === 'any') return value instanceof Iface ? value.v : value;
    if (typeof value === 'string') return value;
    if (value instanceof Iface && value.v !== null) {
      if (typeof value.v === 'string') return value.v;
      this.errorf(`wrong type for value; expected string; got ${typeName(value.v)}`);
    }
    this.errorf(`wrong type for value; expected string; got ${typeName(value)}`);
  }

  evalArg(dot: unknown, kind: ParamKind | null, n: Node): unknown {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, kind);
      case 'nil':
        if (kind === 'any') return null;
        if (kind === 'value') return undefined;
        this.errorf(`cannot assign nil to ${kind}`);
        break;
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), kind);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, null, MISSING), kind);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), kind);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), kind);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), kind);
    }
    if (kind === 'string') {
      if (n.type === 'string') return n.text;
      this.errorf(`expected string; found ${nodeString(n)}`);
    }
    this.at(n);
    switch (n.type) {
      case 'bool':
        return n.value;
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return n.text;
    }
    this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
  }

  printValue(n: Node, v: unknown) {
    this.at(n);
    if (v === undefined || v === null) {
      this.out.push('<no value>');
      return;
    }
    if (typeof v === 'function') this.errorf(`can't print ${nodeString(n)} of type ${typeName(v)}`);
    this.out.push(sprint([v]));
  }
}

/**
 * Executes `tmpl` with `data` as dot; returns the output. Throws {@link TemplateExecError}
 * (with `output` set to what was written before the error).
 */
export function execute(tmpl: ExecTemplate, data: unknown): string {
  const out: string[] = [];
  const value = data === null ? undefined : data;
  const s = new State(tmpl, out, [{ name: '$', value }], 0);
  try {
    const tree = tmpl.tree;
    if (!tree) return s.errorf(`${quote(tmpl.name)} is an incomplete or empty template`);
    s.walk(value, tree.root as ListNode);
  } catch (e) {
    if (e instanceof Abort) {
      e.err.output = out.join('');
      throw e.err;
    }
    throw e;
  }
  return out.join('');
}
