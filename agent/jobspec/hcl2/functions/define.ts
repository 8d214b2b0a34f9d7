/**
 * A short way to write a function's signature: `define(['str:string'], ([s]) => ...)`.
 * @module
 */
import type { Value } from '../values.ts';
import type { HclFunction, Param, ParamType } from './call.ts';

const param = (spec: string): Param => {
  const [name, type, nullable] = spec.split(':') as [string, ParamType, string?];
  return { name, type, ...(nullable === 'null' ? { allowNull: true } : {}) };
};

/** A function of `params` (`name:type`, `name:type:null` to take null) and an optional variadic one. */
export function define(params: string[], impl: (args: Value[]) => Value, variadic?: string): HclFunction {
  return { params: params.map(param), ...(variadic ? { variadic: param(variadic) } : {}), impl };
}
