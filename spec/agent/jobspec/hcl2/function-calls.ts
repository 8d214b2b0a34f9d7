/**
 * Function calls through the HCL2 evaluator for the function specs: a template evaluated with
 * Nomad's function table (no file system) and the variables given, its failure's message, and the
 * texts of HashiCorp's two call diagnostics.
 */
import { expect } from 'chai';
import { evaluate, type EvalContext } from '../../../../agent/jobspec/hcl2/evaluate.ts';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import { nomadFunctions } from '../../../../agent/jobspec/hcl2/functions/index.ts';
import { parseTemplate } from '../../../../agent/jobspec/hcl2/parser.ts';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';

/** Evaluates templates (`${...}`) with `vars`; `fails` answers the HclDiagnostic's message of one that must fail. */
export function functionCalls(vars: ReadonlyArray<[string, Value]> = []): { ev: (text: string) => Value; fails: (text: string) => string } {
  const functions = nomadFunctions({ basedir: '/nonexistent', allowFs: false });
  const ctx = (src: string): EvalContext => ({ src, vars: new Map<string, Value>(vars), local: () => null, localNames: () => [], functions });
  const ev = (text: string): Value => evaluate(parseTemplate(text), ctx(text));
  const fails = (text: string): string => {
    try {
      ev(text);
    } catch (e) {
      expect(e).to.be.instanceOf(HclDiagnostic);
      return (e as Error).message;
    }
    throw new Error(`${text} evaluated`);
  };
  return { ev, fails };
}

/** HashiCorp's text for an argument a function's parameter refuses. */
export const invalidArgument = (param: string, why: string): string => `Invalid function argument; Invalid value for "${param}" parameter: ${why}.`;

/** HashiCorp's text for a function call that failed. */
export const callFailed = (fn: string, why: string): string => `Error in function call; Call to function "${fn}" failed: ${why}.`;
