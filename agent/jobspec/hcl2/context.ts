/**
 * What an HCL2 expression is evaluated in: variables, locals, functions and the names in scope.
 * @module
 */
import type { FunctionTable } from './functions/types.ts';
import type { Value } from './values.ts';

/** What an expression is evaluated in. */
export interface EvalContext {
  /** The text the expression was parsed from (a runtime reference is kept as this text has it). */
  src: string;
  /** `var.<name>` values. */
  vars: Map<string, Value>;
  /** `local.<name>`: evaluated on first use (so locals may refer to each other in any order). */
  local(name: string, at: number): Value;
  /** Every local's name, for a bare `local`. */
  localNames(): string[];
  functions: FunctionTable;
  /** Iterator and `for` variables in scope, innermost last. */
  scope?: Map<string, Value>;
  /** Called for each expression evaluated (the bound on the work a job's expressions may take). */
  step?(): void;
  /** Called with the length of each piece a template adds (the substitution bound). */
  charge?(n: number): void;
}
