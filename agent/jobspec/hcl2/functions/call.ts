/**
 * Calling an HCL2 function as hcl/cty do: arity and `...` expansion, each argument converted to
 * its parameter's type, and HashiCorp's error texts (`Call to unknown function`, `Invalid
 * function argument`, `Error in function call`). `try` and `can` take their arguments
 * unevaluated.
 * @module
 */
import type { Expr } from '../ast.ts';
import { HclDiagnostic } from '../errors.ts';
import type { EvalContext } from '../context.ts';
import { asBool, asList, asNumber, asString, isObject, typeName, type Value } from '../values.ts';
import type { Param } from './types.ts';

export type { FunctionTable, HclFunction, Param, ParamType } from './types.ts';

/** A function's own failure: becomes `Error in function call; Call to function "x" failed: ...`. */
export class FunctionCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FunctionCallError';
  }
}

/** A bad argument found by the function itself: `Invalid function argument; Invalid value for "p" parameter: ...`. */
export class FunctionArgumentError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
    this.name = 'FunctionArgumentError';
  }
}

/** Converts an argument to a parameter's type, or says why not (without the parameter's name). */
function convertArg(v: Value, p: Param): Value {
  if (v === null) {
    if (p.allowNull || p.type === 'any') return v;
    throw new Error('argument must not be null');
  }
  switch (p.type) {
    case 'string': {
      const s = asString(v);
      if (s === undefined) throw new Error('string required');
      return s;
    }
    case 'number': {
      const n = asNumber(v);
      if (n === undefined) throw new Error(typeof v === 'string' ? `a number is required` : 'number required');
      return n;
    }
    case 'bool': {
      const b = asBool(v);
      if (b === undefined) throw new Error('bool required');
      return b;
    }
    case 'list':
      if (asList(v)) return v;
      throw new Error('list of any single type required');
    case 'map':
      if (isObject(v)) return v;
      throw new Error(`map of any single type required, got ${typeName(v)}`);
    case 'any':
      return v;
  }
}

/** Evaluates a call expression with the table in `ctx`. */
export function callFunction(e: Extract<Expr, { kind: 'call' }>, ctx: EvalContext, evaluate: (x: Expr, c?: EvalContext) => Value): Value {
  if (e.name === 'try' || e.name === 'can') return tryOrCan(e, evaluate);
  const fn = ctx.functions[e.name];
  if (!fn) throw new HclDiagnostic('Call to unknown function', `There is no function named ${JSON.stringify(e.name)}.`, e.start);
  let args = e.args.map((a) => evaluate(a));
  if (e.expand) {
    const last = args[args.length - 1] ?? null;
    const list = asList(last);
    if (!list)
      throw new HclDiagnostic(
        'Invalid expanding argument value',
        'The expanding argument (indicated by ...) must be of a tuple, list, or set type.',
        e.args[e.args.length - 1]!.start,
      );
    args = [...args.slice(0, -1), ...list];
  }
  const n = fn.params.length;
  if (args.length < n) {
    const missing = fn.params[args.length]!;
    throw new HclDiagnostic(
      'Not enough function arguments',
      `Function ${JSON.stringify(e.name)} expects ${n} argument(s). Missing value for ${JSON.stringify(missing.name)}.`,
      e.start,
    );
  }
  if (args.length > n && !fn.variadic)
    throw new HclDiagnostic('Too many function arguments', `Function ${JSON.stringify(e.name)} expects only ${n} argument(s).`, e.start);
  const at = (i: number) => (e.expand && i >= e.args.length - 1 ? e.args[e.args.length - 1]! : e.args[i])?.start ?? e.start;
  const converted = args.map((v, i) => {
    const p = i < n ? fn.params[i]! : fn.variadic!;
    try {
      return convertArg(v, p);
    } catch (err) {
      throw new HclDiagnostic('Invalid function argument', `Invalid value for ${JSON.stringify(p.name)} parameter: ${(err as Error).message}.`, at(i));
    }
  });
  try {
    return fn.impl(converted);
  } catch (err) {
    if (err instanceof HclDiagnostic) throw err;
    if (err instanceof FunctionArgumentError) {
      const p = err.index < n ? fn.params[err.index]! : fn.variadic!;
      throw new HclDiagnostic('Invalid function argument', `Invalid value for ${JSON.stringify(p.name)} parameter: ${err.message}.`, at(err.index));
    }
    if (err instanceof FunctionCallError)
      throw new HclDiagnostic('Error in function call', `Call to function ${JSON.stringify(e.name)} failed: ${err.message}.`, e.start);
    throw err;
  }
}

/** `try(a, b, ...)`: the first argument that evaluates without error; `can(x)`: whether `x` does. */
function tryOrCan(e: Extract<Expr, { kind: 'call' }>, evaluate: (x: Expr) => Value): Value {
  if (e.name === 'can') {
    if (e.args.length !== 1)
      throw new HclDiagnostic(
        e.args.length ? 'Too many function arguments' : 'Not enough function arguments',
        e.args.length ? 'Function "can" expects only 1 argument(s).' : 'Function "can" expects 1 argument(s). Missing value for "expression".',
        e.start,
      );
    try {
      evaluate(e.args[0]!);
      return true;
    } catch (err) {
      if (err instanceof HclDiagnostic) return false;
      throw err;
    }
  }
  if (e.args.length === 0)
    throw new HclDiagnostic('Invalid function argument', 'Invalid value for "expressions" parameter: at least one argument is required.', e.start);
  const problems: string[] = [];
  for (const a of e.args) {
    try {
      return evaluate(a);
    } catch (err) {
      if (!(err instanceof HclDiagnostic)) throw err;
      problems.push(err.message);
    }
  }
  throw new HclDiagnostic(
    'Error in function call',
    `Call to function "try" failed: no expression succeeded:\n- ${problems.join('\n- ')}\n\nAt least one expression must produce a successful result.`,
    e.start,
  );
}
