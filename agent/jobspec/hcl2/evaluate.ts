/**
 * Evaluates HCL2 expressions over berth's cty-like {@link Value}s with HCL's rules: operand
 * conversions (number <-> string, bool <-> string), HCL's equality, `for` expressions over lists
 * and maps (maps in key order), splats, conditionals, templates and function calls. A traversal
 * from a root the file does not define (`NOMAD_*`, `node`, `attr`, `meta`, `env`, ...) stays as
 * written, `${...}`, for the client to fill in at run time, as jobspec2's `UnknownVariable` does.
 * @module
 */
import type { Expr, TemplatePart } from './ast.ts';
import { HclDiagnostic } from './errors.ts';
import type { EvalContext } from './context.ts';
import { callFunction } from './functions/call.ts';
import { asBool, asList, asNumber, asString, equal, exactArithmetic, isObject, sortedKeys, typeName, type ObjectValue, type Value } from './values.ts';

const withScope = (ctx: EvalContext, name: string, v: Value, keyName?: string, k?: Value): EvalContext => {
  const scope = new Map(ctx.scope ?? []);
  scope.set(name, v);
  if (keyName !== undefined) scope.set(keyName, k!);
  return { ...ctx, scope };
};

/** Whether `root` names something the file defines (else it is a runtime reference, kept). */
const knownRoot = (ctx: EvalContext, root: string) => root === 'var' || root === 'local' || (ctx.scope?.has(root) ?? false);

/** Evaluates `e`. @throws HclDiagnostic worded as HCL words it. */
export function evaluate(e: Expr, ctx: EvalContext, item?: Value): Value {
  ctx.step?.();
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'paren':
      return evaluate(e.expr, ctx, item);
    case 'template':
      return renderParts(e.parts, ctx, e.start);
    case 'reference':
      if (!knownRoot(ctx, e.root)) {
        const text = `\${${ctx.src.slice(e.start, e.end)}}`;
        ctx.charge?.(text.length);
        return text;
      }
      return evaluate(e.expr, ctx, item);
    case 'variable':
      return variable(e.name, ctx, e.start);
    case 'splatItem':
      return item ?? null;
    case 'attr':
      if (e.object.kind === 'variable' && e.object.name === 'local' && !ctx.scope?.has('local')) return ctx.local(e.name, e.start);
      if (e.object.kind === 'variable' && e.object.name === 'var' && !ctx.scope?.has('var')) {
        if (!ctx.vars.has(e.name))
          throw new HclDiagnostic('Unsupported attribute', `This object does not have an attribute named ${JSON.stringify(e.name)}.`, e.start);
        return ctx.vars.get(e.name)!;
      }
      return getAttr(evaluate(e.object, ctx, item), e.name, e.start);
    case 'index':
      return getIndex(evaluate(e.object, ctx, item), evaluate(e.key, ctx, item), e.start);
    case 'splat': {
      const source = evaluate(e.source, ctx, item);
      if (source === null) return [];
      const list = Array.isArray(source) ? source : [source];
      return list.map((x) => evaluate(e.each, ctx, x));
    }
    case 'call':
      return callFunction(e, ctx, (x, c = ctx) => evaluate(x, c, item));
    case 'unary': {
      const v = evaluate(e.operand, ctx, item);
      if (e.op === '!') return !operand(asBool(v), v, 'bool', e.operand.start);
      return -operand(asNumber(v), v, 'number', e.operand.start);
    }
    case 'binary':
      return binary(e, ctx, item);
    case 'conditional': {
      const c = evaluate(e.cond, ctx, item);
      const b = asBool(c);
      if (b === undefined)
        throw new HclDiagnostic(
          'Incorrect condition type',
          `The condition expression must be of type bool${c === null ? '; the condition value is null' : ''}.`,
          e.cond.start,
        );
      return evaluate(b ? e.then : e.else, ctx, item);
    }
    case 'tuple':
      return e.items.map((x) => evaluate(x, ctx, item));
    case 'object': {
      const out: ObjectValue = {};
      for (const { key, value } of e.items) {
        const k = asString(evaluate(key, ctx, item));
        if (k === undefined) throw new HclDiagnostic('Incorrect key type', "Can't use this value as a key: string required.", key.start);
        out[k] = evaluate(value, ctx, item);
      }
      return out;
    }
    case 'forTuple': {
      const out: Value[] = [];
      for (const [k, v] of iterate(evaluate(e.collection, ctx, item), e.collection.start)) {
        const inner = withScope(ctx, e.valueVar, v, e.keyVar, k);
        if (e.cond && !forCondition(evaluate(e.cond, inner, item), e.cond.start)) continue;
        out.push(evaluate(e.value, inner, item));
      }
      return out;
    }
    case 'forObject': {
      const out: Record<string, Value> = {};
      for (const [k, v] of iterate(evaluate(e.collection, ctx, item), e.collection.start)) {
        const inner = withScope(ctx, e.valueVar, v, e.keyVar, k);
        if (e.cond && !forCondition(evaluate(e.cond, inner, item), e.cond.start)) continue;
        const kv = evaluate(e.key, inner, item);
        const key = asString(kv);
        if (key === undefined)
          throw new HclDiagnostic('Invalid object key', `Key expression in 'for' expression must be a string: ${typeName(kv)} given.`, e.key.start);
        const value = evaluate(e.value, inner, item);
        if (e.group) ((out[key] ??= []) as Value[]).push(value);
        else if (key in out)
          throw new HclDiagnostic(
            'Duplicate object key',
            `Two different items produced the key ${JSON.stringify(key)} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.`,
            e.key.start,
          );
        else out[key] = value;
      }
      return out;
    }
  }
}

function variable(name: string, ctx: EvalContext, at: number): Value {
  if (ctx.scope?.has(name)) return ctx.scope.get(name)!;
  if (name === 'var') return Object.fromEntries(ctx.vars);
  if (name === 'local') return Object.fromEntries(ctx.localNames().map((n) => [n, ctx.local(n, at)]));
  throw new HclDiagnostic('Unknown variable', `There is no variable named ${JSON.stringify(name)}.`, at);
}

function operand<T>(v: T | undefined, raw: Value, type: string, at: number): T {
  if (v === undefined)
    throw new HclDiagnostic(
      'Invalid operand',
      `Unsuitable value for unary operand: ${raw === null ? `a ${type} is required, not null` : `a ${type} is required`}.`,
      at,
    );
  return v;
}

function binary(e: Extract<Expr, { kind: 'binary' }>, ctx: EvalContext, item?: Value): Value {
  const l = evaluate(e.left, ctx, item);
  // `&&` and `||` evaluate both sides in HCL (no short-circuit): an error on the right still shows.
  const r = evaluate(e.right, ctx, item);
  const side = (v: Value, which: 'left' | 'right', type: 'number' | 'bool') => {
    const c = type === 'number' ? asNumber(v) : asBool(v);
    if (c === undefined)
      throw new HclDiagnostic(
        'Invalid operand',
        `Unsuitable value for ${which} operand: ${v === null ? `a ${type} is required, not null` : `a ${type} is required`}.`,
        which === 'left' ? e.left.start : e.right.start,
      );
    return c;
  };
  const n = (v: Value, w: 'left' | 'right') => side(v, w, 'number') as number;
  switch (e.op) {
    case '==':
      return equal(l, r);
    case '!=':
      return !equal(l, r);
    case '&&':
    case '||': {
      // Both operands are checked before combining: `true || 0` is an error, as in HCL.
      const [a, b] = [side(l, 'left', 'bool') as boolean, side(r, 'right', 'bool') as boolean];
      return e.op === '&&' ? a && b : a || b;
    }
    case '<':
      return n(l, 'left') < n(r, 'right');
    case '<=':
      return n(l, 'left') <= n(r, 'right');
    case '>':
      return n(l, 'left') > n(r, 'right');
    case '>=':
      return n(l, 'left') >= n(r, 'right');
    case '+':
    case '-':
    case '*':
      return exactArithmetic(e.op, n(l, 'left'), n(r, 'right'));
    case '/': {
      const d = n(r, 'right');
      const x = n(l, 'left');
      if (d === 0) throw new HclDiagnostic('Error in operator', 'Call to function "divide" failed: can\'t divide by zero.', e.start);
      return x / d;
    }
    case '%': {
      const d = n(r, 'right');
      const x = n(l, 'left');
      if (d === 0) throw new HclDiagnostic('Error in operator', 'Call to function "modulo" failed: can\'t use modulo by zero.', e.start);
      return x % d;
    }
  }
}

function getAttr(v: Value, name: string, at: number): Value {
  if (v === null) throw new HclDiagnostic('Attempt to get attribute from null value', 'This value is null, so it does not have any attributes.', at);
  if (isObject(v)) {
    if (!Object.hasOwn(v, name)) throw new HclDiagnostic('Unsupported attribute', `This object does not have an attribute named ${JSON.stringify(name)}.`, at);
    return v[name]!;
  }
  throw new HclDiagnostic('Unsupported attribute', `Can't access attributes on a primitive-typed value (${typeName(v)}).`, at);
}

function getIndex(v: Value, key: Value, at: number): Value {
  if (v === null) throw new HclDiagnostic('Attempt to index null value', 'This value is null, so it does not have any indices.', at);
  if (Array.isArray(v)) {
    const i = asNumber(key);
    if (i === undefined || !Number.isInteger(i))
      throw new HclDiagnostic('Invalid index', 'The given key does not identify an element in this collection value: a number is required.', at);
    if (i < 0 || i >= v.length)
      throw new HclDiagnostic(
        'Invalid index',
        'The given key does not identify an element in this collection value: the given index is greater than or equal to the length of the collection.',
        at,
      );
    return v[i]!;
  }
  if (isObject(v)) {
    const k = asString(key);
    if (k === undefined) throw new HclDiagnostic('Invalid index', 'The given key does not identify an element in this collection value: string required.', at);
    if (!Object.hasOwn(v, k)) throw new HclDiagnostic('Invalid index', 'The given key does not identify an element in this collection value.', at);
    return v[k]!;
  }
  throw new HclDiagnostic('Invalid index', `This value does not have any indices.`, at);
}

/** Key/value pairs of a collection for `for`: lists by index, maps and objects in key order. */
export function iterate(v: Value, at: number): Array<[Value, Value]> {
  const list = asList(v);
  if (list) return list.map((x, i) => [i, x]);
  if (isObject(v)) return sortedKeys(v).map((k) => [k, v[k]!]);
  throw new HclDiagnostic('Iteration over non-iterable value', `A value of type ${typeName(v)} cannot be used as the collection in a 'for' expression.`, at);
}

function forCondition(v: Value, at: number): boolean {
  const b = asBool(v);
  if (b === undefined) throw new HclDiagnostic("Invalid 'for' condition", `The 'if' clause value is invalid: bool required.`, at);
  return b;
}

/** One interpolated value as template text. */
function interpolated(v: Value, at: number): string {
  if (v === null)
    throw new HclDiagnostic('Invalid template interpolation value', 'The expression result is null. Cannot include a null value in a string template.', at);
  const s = asString(v);
  if (s === undefined)
    throw new HclDiagnostic('Invalid template interpolation value', `Cannot include the given value in a string template: string required.`, at);
  return s;
}

function renderParts(parts: TemplatePart[], ctx: EvalContext, at: number): string {
  let out = '';
  const add = (s: string) => {
    ctx.charge?.(s.length);
    out += s;
  };
  for (const p of parts) {
    if (p.kind === 'text') add(p.text);
    else if (p.kind === 'interp') add(interpolated(evaluate(p.expr, ctx), p.expr.start));
    else if (p.kind === 'if') {
      const c = asBool(evaluate(p.cond, ctx));
      if (c === undefined) throw new HclDiagnostic('Incorrect condition type', 'The condition expression must be of type bool.', p.cond.start);
      // Nested parts charge their own pieces.
      out += renderParts(c ? p.then : p.else, ctx, at);
    } else
      for (const [k, v] of iterate(evaluate(p.collection, ctx), p.collection.start)) out += renderParts(p.body, withScope(ctx, p.valueVar, v, p.keyVar, k), at);
  }
  return out;
}

export type { EvalContext } from './context.ts';
