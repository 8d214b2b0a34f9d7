/**
 * HCL2 `variable` blocks and their values (`default`, `-var name=value`, `-var-file`), and the
 * bounds on what evaluating expressions with them may build. The expressions themselves are
 * evaluated by `hcl2/` (see `hcl2/job.ts`).
 * @module
 */
import { JobspecError } from '../../index.ts';
import { parseHcl } from './hcl.ts';

/** A variable value: HCL's string, number, bool, and lists and maps of them. */
export type VarValue = string | number | boolean | null | VarValue[] | { [k: string]: VarValue };

/** A declared variable. */
interface Declared {
  type?: string;
  default?: VarValue;
  description?: string;
}

/** `-var-file` content: a path to read, or text already read. */
export type VarFile = string | { filename: string; text: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The declared variables of a parsed file (hcl2json's `variable` section). */
export function declaredVariables(root: Record<string, unknown>, filename: string): Map<string, Declared> {
  const out = new Map<string, Declared>();
  const section = root.variable;
  if (section === undefined) return out;
  if (!isObj(section)) throw new JobspecError('variable blocks need a name label', { file: filename, path: 'variable' });
  for (const [name, blocks] of Object.entries(section)) {
    const b = Array.isArray(blocks) ? blocks[0] : blocks;
    if (!isObj(b)) continue;
    for (const k of Object.keys(b))
      if (!['type', 'default', 'description', 'sensitive', 'nullable', 'validation'].includes(k))
        throw new JobspecError(`variable "${name}": unknown field "${k}"`, { file: filename, path: `variable.${name}.${k}` });
    const type = typeof b.type === 'string' ? b.type.replace(/^\$\{(.*)\}$/s, '$1') : undefined;
    out.set(name, { type, default: b.default as VarValue, description: typeof b.description === 'string' ? b.description : undefined });
  }
  return out;
}

/** A declared type without spaces: `list(string)`, `number`; untyped is `undefined`. */
const typeName = (type: string | undefined) => type?.replace(/\s+/g, '');

/**
 * A `-var` string value as jobspec2 reads it: for an untyped, `string` or `number` variable the
 * text itself (a number converted), for any other type (`bool`, `list(...)`, `map(...)`, objects,
 * tuples) an HCL expression (`["a", "b"]`, `{ k = "v" }`, `true`), which must be a literal.
 */
async function convert(name: string, raw: string, type: string | undefined, source: string): Promise<VarValue> {
  const t = typeName(type);
  if (t === undefined || t === 'string' || t === 'any') return raw;
  if (t === 'number') return toNumber(name, raw, source);
  const value = await hclValue(name, raw, source);
  if (t === 'bool') return toBool(name, value, source);
  if (typeof value !== 'object' || value === null)
    throw new JobspecError(`variable "${name}": a ${t} value is required, as HCL (["a", "b"], { k = "v" }), got ${JSON.stringify(raw)}`, { file: source });
  return value;
}

function toNumber(name: string, v: VarValue, source: string): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new JobspecError(`variable "${name}": a number is required, got ${JSON.stringify(v)}`, { file: source });
  return n;
}

function toBool(name: string, v: VarValue, source: string): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new JobspecError(`variable "${name}": a bool is required (true or false), got ${JSON.stringify(v)}`, { file: source });
}

/** One HCL value (`-var` text): parsed by HashiCorp's parser, a literal only (no expressions, as jobspec2 evaluates it without context). */
async function hclValue(name: string, raw: string, source: string): Promise<VarValue> {
  const root = await parseHcl(`value = ${raw}\n`, `<value for var.${name}>`).catch((e: unknown) => {
    throw new JobspecError(`variable "${name}": ${e instanceof Error ? e.message : String(e)}`, { file: source });
  });
  if (Object.keys(root).length !== 1 || !('value' in root))
    throw new JobspecError(`variable "${name}": one value is required, got ${JSON.stringify(raw)}`, { file: source });
  const value = root.value as VarValue;
  literalOnly(name, value, source);
  return value;
}

/** Refuses what hcl2json left as an expression (`"${...}"`): a value must be a literal. */
function literalOnly(name: string, v: VarValue, source: string): void {
  if (typeof v === 'string' && /(^|[^$])\$\{/.test(v))
    throw new JobspecError(`variable "${name}": the value must be a literal (no variables, functions or interpolation), got ${JSON.stringify(v)}`, {
      file: source,
    });
  if (Array.isArray(v)) for (const x of v) literalOnly(name, x, source);
  else if (isObj(v)) for (const x of Object.values(v)) literalOnly(name, x as VarValue, source);
}

/**
 * A var file's (or `Variables` content's) value to the variable's declared type: HCL has already
 * typed it, so only a number or bool given as a string is converted (as cty's conversion does).
 */
function convertTyped(name: string, v: VarValue, type: string | undefined, source: string): VarValue {
  literalOnly(name, v, source);
  const t = typeName(type);
  if (t === 'number') return toNumber(name, v, source);
  if (t === 'bool') return toBool(name, v, source);
  if (t !== undefined && t !== 'string' && t !== 'any' && (typeof v !== 'object' || v === null))
    throw new JobspecError(`variable "${name}": a ${t} value is required, got ${JSON.stringify(v)}`, { file: source });
  return v;
}

/** Reads `-var-file`s (HCL `name = value` lines or JSON) into values. */
async function varFileValues(files: VarFile[], read: (path: string) => Promise<string>): Promise<Array<[string, VarValue, string]>> {
  const out: Array<[string, VarValue, string]> = [];
  for (const f of files) {
    const { filename, text } = typeof f === 'string' ? { filename: f, text: await read(f) } : f;
    const root = filename.endsWith('.json') ? (JSON.parse(text) as Record<string, unknown>) : await parseHcl(text, filename);
    for (const [k, v] of Object.entries(root)) out.push([k, v as VarValue, filename]);
  }
  return out;
}

/**
 * Every variable's value: declared defaults, then var files, then `-var` values (later wins, as in
 * Nomad). Unknown names and unset variables without a default are errors.
 */
export async function resolveVariables(
  declared: Map<string, Declared>,
  filename: string,
  vars: Record<string, string | VarValue> = {},
  varFiles: VarFile[] = [],
  read: (path: string) => Promise<string>,
): Promise<Map<string, VarValue>> {
  const values = new Map<string, VarValue>();
  for (const [name, d] of declared) if (d.default !== undefined) values.set(name, d.default);
  for (const [name, v, src] of await varFileValues(varFiles, read)) {
    if (!declared.has(name)) throw new JobspecError(`undefined variable "${name}" in var file (declare it with a variable "${name}" block)`, { file: src });
    values.set(name, convertTyped(name, v, declared.get(name)!.type, src));
  }
  for (const [name, v] of Object.entries(vars)) {
    if (!declared.has(name)) throw new JobspecError(`undefined -var variable "${name}" (declare it with a variable "${name}" block)`, { file: filename });
    values.set(name, typeof v === 'string' ? await convert(name, v, declared.get(name)!.type, '-var') : v);
  }
  for (const name of declared.keys())
    if (!values.has(name))
      throw new JobspecError(`unset variable "${name}": give it a default, -var ${name}=... or a -var-file`, { file: filename, path: `variable.${name}` });
  return values;
}

/**
 * The longest string substitution may build, in UTF-16 code units: ARG_MAX, the most the kernel
 * takes for a whole command line and environment, so no string a task can use is longer.
 */
export const MAX_SUBSTITUTED_STRING = 2 * 1024 * 1024;

/**
 * The most substitution may build over a whole job, in UTF-16 code units (a 4 MiB request could
 * otherwise name a 3 MB variable a thousand times and ask for gigabytes).
 */
export const MAX_SUBSTITUTED_TOTAL = 8 * 1024 * 1024;
