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

/** A `-var` string value converted to the variable's declared type. */
function convert(name: string, raw: string, type: string | undefined, source: string): VarValue {
  const t = (type ?? 'string').replace(/\s+/g, '');
  if (t === 'string' || t === 'any') return raw;
  if (t === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n))
      throw new JobspecError(`variable "${name}": a number is required, got ${JSON.stringify(raw)}`, { file: source });
    return n;
  }
  if (t === 'bool') {
    if (raw !== 'true' && raw !== 'false')
      throw new JobspecError(`variable "${name}": a bool is required (true or false), got ${JSON.stringify(raw)}`, { file: source });
    return raw === 'true';
  }
  // list(...), set(...), map(...), object, tuple: JSON or HCL list/map literal syntax.
  try {
    return JSON.parse(raw) as VarValue;
  } catch {
    throw new JobspecError(`variable "${name}": a ${t} value is required, as JSON or HCL (["a", "b"]), got ${JSON.stringify(raw)}`, { file: source });
  }
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
    values.set(name, typeof v === 'string' ? convert(name, v, declared.get(name)!.type, src) : v);
  }
  for (const [name, v] of Object.entries(vars)) {
    if (!declared.has(name)) throw new JobspecError(`undefined -var variable "${name}" (declare it with a variable "${name}" block)`, { file: filename });
    values.set(name, typeof v === 'string' ? convert(name, v, declared.get(name)!.type, '-var') : v);
  }
  for (const name of declared.keys())
    if (!values.has(name))
      throw new JobspecError(`unset variable "${name}": give it a default, -var ${name}=... or a -var-file`, { file: filename, path: `variable.${name}` });
  return values;
}

/** Runtime references kept for the client to interpolate. */
const RUNTIME = /^(NOMAD_[A-Za-z0-9_]*|node\.|attr\.|meta\.|env\b|env\[|device\.)/;

/**
 * Substitutes `var.*` in one string from hcl2json. A string that is exactly one `${var.x}` takes
 * the value's own type (a number stays a number, a list a list); otherwise values are rendered into
 * the text. `$${` and `%%{` (HCL's escapes) become `${` and `%{`. Anything else inside `${...}`
 * (functions, locals, arithmetic) is refused: berth evaluates variables only.
 */
export function substitute(s: string, values: Map<string, VarValue>, where: () => { path: string }): VarValue {
  const whole = /^\$\{\s*var\.([A-Za-z_][\w-]*)\s*\}$/.exec(s);
  if (whole) return lookup(whole[1]!, values, where);
  let out = '';
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('$${', i) || s.startsWith('%%{', i)) {
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
        const val = lookup(v[1]!, values, where);
        out += typeof val === 'string' ? val : JSON.stringify(val);
      } else if (RUNTIME.test(expr)) out += s.slice(i, end + 1);
      else
        throw new JobspecError(
          `${where().path}: the expression \${${expr}} is not supported by berth (only var.<name> and runtime \${NOMAD_*}, \${node.*}, \${attr.*}, \${meta.*} references)`,
          where(),
        );
      i = end + 1;
      continue;
    }
    out += s[i];
    i++;
  }
  return out;
}

function lookup(name: string, values: Map<string, VarValue>, where: () => { path: string }): VarValue {
  if (!values.has(name)) throw new JobspecError(`${where().path}: reference to undeclared variable "var.${name}"`, where());
  return structuredClone(values.get(name)!);
}

/** Substitutes variables everywhere in a decoded value. */
export function substituteAll(v: unknown, values: Map<string, VarValue>, where: (path: string) => { path: string }, path = 'job'): unknown {
  if (typeof v === 'string') return v.includes('${') || v.includes('%{') ? substitute(v, values, () => where(path)) : v;
  if (Array.isArray(v)) return v.map((x, i) => substituteAll(x, values, where, `${path}[${i}]`));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substituteAll(x, values, where, `${path}.${k}`)]));
  return v;
}
