/**
 * The shape of an HCL2 function: parameters with the types arguments are converted to, and what it does.
 * @module
 */
import type { Value } from '../values.ts';

/** A parameter's type: what an argument is converted to before the function sees it. */
export type ParamType = 'string' | 'number' | 'bool' | 'list' | 'map' | 'any';

/** One parameter. */
export interface Param {
  name: string;
  type: ParamType;
  /** The function takes null here (most refuse it, as cty does). */
  allowNull?: boolean;
}

/** One function: its parameters, an optional variadic one, and what it does. */
export interface HclFunction {
  params: Param[];
  variadic?: Param;
  impl(args: Value[]): Value;
}

/** Functions by name. */
export type FunctionTable = Record<string, HclFunction>;
