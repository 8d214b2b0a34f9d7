/**
 * HCL2 `variable` blocks and their values (`default`, `-var name=value`, `-var-file`), and the
 * substitution of `var.<name>` in the strings `@cdktf/hcl2json` leaves expressions in (`"${...}"`).
 * Runtime references (`${NOMAD_*}`, `${node.*}`, `${attr.*}`, `${meta.*}`, `${env...}`) are kept for
 * the client to interpolate when the task starts, as Nomad does.
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

/** Runtime references kept for the client to interpolate. */
// Runtime references, and (as jobspec2 does) any other bare `${NAME}`: left as written for the
// task's environment to fill in when it runs.
const RUNTIME = /^(NOMAD_[A-Za-z0-9_]*|node\.|attr\.|meta\.|env\b|env\[|device\.|[A-Za-z_][A-Za-z0-9_]*$)/;

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

/** What substitution has built so far over one job, checked as each piece is added. */
export interface SubstitutionBudget {
  used: number;
  /** Rendered size of each non-string value, measured once. */
  sizes: Map<string, number>;
}

/** A fresh {@link SubstitutionBudget}. */
export const substitutionBudget = (): SubstitutionBudget => ({ used: 0, sizes: new Map() });

/** Charges `n` more code units to a string of `length` so far, or refuses before it is built. */
function charge(budget: SubstitutionBudget, length: number, n: number, where: () => { path: string }): void {
  if (length + n > MAX_SUBSTITUTED_STRING)
    throw new JobspecError(
      `${where().path}: with variables substituted this string is longer than ${MAX_SUBSTITUTED_STRING} characters (the most a task's whole command line and environment can hold)`,
      where(),
    );
  budget.used += n;
  if (budget.used > MAX_SUBSTITUTED_TOTAL)
    throw new JobspecError(
      `${where().path}: variables substituted into the job come to more than ${MAX_SUBSTITUTED_TOTAL} characters; refused before building it`,
      where(),
    );
}

/** Rendered size of a variable's value (a string's length, else its JSON's), cached per name. */
function sizeOf(name: string, val: VarValue, budget: SubstitutionBudget): number {
  if (typeof val === 'string') return val.length;
  let n = budget.sizes.get(name);
  if (n === undefined) budget.sizes.set(name, (n = JSON.stringify(val).length));
  return n;
}

/**
 * Substitutes `var.*` in one string from hcl2json. A string that is exactly one `${var.x}` takes
 * the value's own type (a number stays a number, a list a list); otherwise values are rendered into
 * the text. `$${` and `%%{` (HCL's escapes) become `${` and `%{`. Anything else inside `${...}`
 * (functions, locals, arithmetic) is refused: berth evaluates variables only. Each piece is charged
 * to `budget` before it is added ({@link MAX_SUBSTITUTED_STRING}, {@link MAX_SUBSTITUTED_TOTAL}).
 */
export function substitute(
  s: string,
  values: Map<string, VarValue>,
  where: () => { path: string },
  budget = substitutionBudget(),
  problems?: SubstitutionProblem[],
): VarValue {
  const whole = /^\$\{\s*var\.([A-Za-z_][\w-]*)\s*\}$/.exec(s);
  if (whole) {
    const name = whole[1]!;
    if (values.has(name)) charge(budget, 0, sizeOf(name, values.get(name)!, budget), where);
    return lookup(name, values, where);
  }
  let out = '';
  let i = 0;
  // Literal text is charged as it is copied, in runs up to the next `$` or `%`.
  while (i < s.length) {
    if (s.startsWith('$${', i) || s.startsWith('%%{', i)) {
      charge(budget, out.length, 2, where);
      out += `${s[i]}{`;
      i += 3;
      continue;
    }
    if (s.startsWith('${', i)) {
      const end = s.indexOf('}', i);
      if (end < 0) break;
      const expr = s.slice(i + 2, end).trim();
      const v = /^var\.([A-Za-z_][\w-]*)$/.exec(expr);
      if (v) {
        if (!values.has(v[1]!)) lookup(v[1]!, values, where);
        const val = values.get(v[1]!)!;
        charge(budget, out.length, sizeOf(v[1]!, val, budget), where);
        out += typeof val === 'string' ? val : JSON.stringify(val);
      } else if (RUNTIME.test(expr)) {
        charge(budget, out.length, end + 1 - i, where);
        out += s.slice(i, end + 1);
      } else {
        const message = `the expression \${${expr}} is not supported by berth (only var.<name>, runtime \${NOMAD_*}, \${node.*}, \${attr.*}, \${meta.*} references and \${NAME}s left for the task's environment)`;
        if (!problems) throw new JobspecError(`${where().path}: ${message}`, where());
        // Collected, so every problem of the file is told at once; the text stays as written.
        problems.push({ path: where().path, message });
        out += s.slice(i, end + 1);
      }
      i = end + 1;
      continue;
    }
    let next = i + 1;
    while (next < s.length && s[next] !== '$' && s[next] !== '%') next++;
    charge(budget, out.length, next - i, where);
    out += s.slice(i, next);
    i = next;
  }
  return out;
}

function lookup(name: string, values: Map<string, VarValue>, where: () => { path: string }): VarValue {
  if (!values.has(name)) throw new JobspecError(`${where().path}: reference to undeclared variable "var.${name}"`, where());
  return structuredClone(values.get(name)!);
}

/** Substitutes variables everywhere in a decoded value, within one {@link SubstitutionBudget}. */
export function substituteAll(
  v: unknown,
  values: Map<string, VarValue>,
  where: (path: string) => { path: string },
  path = 'job',
  budget = substitutionBudget(),
  problems?: SubstitutionProblem[],
): unknown {
  if (typeof v === 'string') return v.includes('${') || v.includes('%{') ? substitute(v, values, () => where(path), budget, problems) : v;
  if (Array.isArray(v)) return v.map((x, i) => substituteAll(x, values, where, `${path}[${i}]`, budget, problems));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substituteAll(x, values, where, `${path}.${k}`, budget, problems)]));
  return v;
}

/** An expression berth does not evaluate, at its path (hcl2json's shape: `job.group.web[0]...`). */
export interface SubstitutionProblem {
  path: string;
  message: string;
}
