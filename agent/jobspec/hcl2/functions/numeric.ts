/**
 * cty's number functions as Nomad registers them: abs, ceil, floor, log, max, min, parseint,
 * pow, signum.
 * @module
 */
import type { Value } from '../values.ts';
import { FunctionArgumentError, FunctionCallError, type FunctionTable } from './call.ts';
import { define } from './define.ts';

const n = (v: Value) => v as number;

/** The number functions. */
export const NUMERIC_FUNCTIONS: FunctionTable = {
  abs: define(['num:number'], ([v]) => Math.abs(n(v))),
  ceil: define(['num:number'], ([v]) => Math.ceil(n(v))),
  floor: define(['num:number'], ([v]) => Math.floor(n(v))),
  log: define(['num:number', 'base:number'], ([v, b]) => Math.log(n(v)) / Math.log(n(b))),
  pow: define(['num:number', 'power:number'], ([v, p]) => n(v) ** n(p)),
  signum: define(['num:number'], ([v]) => Math.sign(n(v))),
  max: define(
    [],
    (vs) => {
      if (vs.length === 0) throw new FunctionCallError('must pass at least one number');
      return Math.max(...vs.map(n));
    },
    'numbers:number',
  ),
  min: define(
    [],
    (vs) => {
      if (vs.length === 0) throw new FunctionCallError('must pass at least one number');
      return Math.min(...vs.map(n));
    },
    'numbers:number',
  ),
  parseint: define(['number:any', 'base:number'], ([v, b]) => {
    if (typeof v !== 'string') throw new FunctionArgumentError(0, 'first argument must be a string, not ' + (v === null ? 'null' : typeof v));
    const base = n(b);
    if (!Number.isInteger(base) || base < 2 || base > 62) throw new FunctionArgumentError(1, 'base must be a whole number between 2 and 62 inclusive');
    const digits = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.slice(0, base);
    const m = /^([+-]?)(.+)$/.exec(v);
    const body = m?.[2] ?? '';
    const lower = base <= 36 ? body.toLowerCase() : body;
    if (!m || [...lower].some((c) => !digits.includes(c))) throw new FunctionCallError(`cannot parse ${JSON.stringify(v)} as a base ${base} integer`);
    const value = [...lower].reduce((acc, c) => acc * base + digits.indexOf(c), 0);
    return m[1] === '-' ? -value : value;
  }),
};
