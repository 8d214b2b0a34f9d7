/**
 * The refusal of a diff of two different jobs.
 * @module
 */
import { BerthError } from '../../../index.ts';

/** Two jobs with different IDs cannot be diffed (Nomad's refusal, in its words). */
export class JobDiffError extends BerthError {}
