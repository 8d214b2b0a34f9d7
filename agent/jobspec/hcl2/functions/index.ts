/**
 * Nomad's HCL2 function set (jobspec2's `Functions`), as berth evaluates it. A few functions Nomad
 * registers are not evaluated by berth (`bcrypt`, `rsadecrypt`, the cidr functions, `convert`,
 * `fileset`); calling one is an error that says so, unlike a name Nomad does not know at all
 * (`Call to unknown function`, as for `env` or `regex`, which Nomad does not register either).
 * @module
 */
import { FunctionCallError, type FunctionTable, type HclFunction } from './call.ts';
import { COLLECTION_FUNCTIONS } from './collections.ts';
import { DATETIME_FUNCTIONS } from './datetime.ts';
import { ENCODING_FUNCTIONS } from './encoding.ts';
import { filesystemFunctions } from './filesystem.ts';
import { NUMERIC_FUNCTIONS } from './numeric.ts';
import { STRING_FUNCTIONS } from './strings.ts';

/** Functions Nomad registers that berth does not evaluate. */
export const NOT_EVALUATED = ['bcrypt', 'rsadecrypt', 'cidrhost', 'cidrnetmask', 'cidrsubnet', 'cidrsubnets', 'convert', 'fileset'];

const refused = (name: string): HclFunction => ({
  params: [],
  variadic: { name: 'args', type: 'any', allowNull: true },
  impl: () => {
    throw new FunctionCallError(`the function ${name} is one of Nomad's but berth does not evaluate it`);
  },
});

/** Options of {@link nomadFunctions}. */
export interface FunctionOptions {
  /** The job file's directory, for `file` and `fileexists`. */
  basedir: string;
  /** Whether filesystem functions may read (Nomad's `AllowFS`: the CLI yes, the server's parse endpoint no). */
  allowFs: boolean;
}

/** Nomad's function table (see the module doc); `try` and `can` are the evaluator's own. */
export function nomadFunctions(opts: FunctionOptions): FunctionTable {
  return {
    ...STRING_FUNCTIONS,
    ...COLLECTION_FUNCTIONS,
    ...NUMERIC_FUNCTIONS,
    ...ENCODING_FUNCTIONS,
    ...DATETIME_FUNCTIONS,
    ...filesystemFunctions(opts.basedir, opts.allowFs),
    ...Object.fromEntries(NOT_EVALUATED.map((n) => [n, refused(n)])),
  };
}
