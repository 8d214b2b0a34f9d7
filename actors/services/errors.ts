/**
 * Errors of services and checks.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** A service block berth cannot register (an unknown port label, a provider other than nomad). */
export class InvalidServiceError extends BerthError {}
