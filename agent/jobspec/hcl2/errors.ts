/**
 * HCL's diagnostics as berth words them: HashiCorp's summary and detail (`Call to unknown
 * function; There is no function named "x".`), and the offset in the expression text.
 * @module
 */
import { BerthError } from '../../../index.ts';

/** One HCL2 evaluation problem: HashiCorp's summary and detail, at an offset of the expression. */
export class HclDiagnostic extends BerthError {
  constructor(
    readonly summary: string,
    readonly detail: string,
    /** Offset in the expression text, where known. */
    public at?: number,
  ) {
    super(`${summary}; ${detail}`);
    this.name = 'HclDiagnostic';
  }
}
