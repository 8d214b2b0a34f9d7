/**
 * Go's `encoding/json` output for template data, as consul-template's `toJSON`,
 * `toJSONPretty` and their unescaped forms print it: map keys sorted by byte, `<`, `>`, `&`,
 * U+2028 and U+2029 escaped unless `escapeHTML` is off, control characters as `\u00XX`
 * (`\n`, `\r`, `\t` kept short), floats in Go's shortest form.
 * @module
 */
import { TemplateFuncError } from './errors.ts';
import { GoByte, GoFloat, Iface } from './values.ts';

const HTML: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026' };

function quote(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
    else if (escapeHTML && HTML[ch]) out += HTML[ch];
    else if (c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16);
    else out += ch;
  }
  return out + '"';
}

/** Go's `strconv.FormatFloat(f, 'g'-like, -1, 64)` as encoding/json chooses it. */
function float(f: number): string {
  if (!Number.isFinite(f)) throw new TemplateFuncError(`json: unsupported value: ${f}`);
  const abs = Math.abs(f);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) return f.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(f);
}

/** Encodes `v` as Go's json.Marshal (or MarshalIndent with `indent`) would. */
export function goJSON(v: unknown, opts: { indent?: string; escapeHTML?: boolean } = {}): string {
  const escapeHTML = opts.escapeHTML ?? true;
  const enc = (x: unknown, depth: number): string => {
    if (x instanceof Iface) return enc(x.v, depth);
    if (x === null || x === undefined) return 'null';
    if (x instanceof GoFloat) return float(x.value);
    if (x instanceof GoByte) return String(x.value);
    if (typeof x === 'number') return Number.isInteger(x) ? String(x) : float(x);
    if (typeof x === 'bigint') return x.toString();
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'string') return quote(x, escapeHTML);
    if (typeof x === 'function') throw new TemplateFuncError('json: unsupported type: func');
    const nl = opts.indent ? '\n' + opts.indent.repeat(depth + 1) : '';
    const end = opts.indent ? '\n' + opts.indent.repeat(depth) : '';
    const colon = opts.indent ? ': ' : ':';
    if (Array.isArray(x)) {
      if (!x.length) return '[]';
      return '[' + x.map((e) => nl + enc(e, depth + 1)).join(',') + end + ']';
    }
    const keys = Object.keys(x as object).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    if (!keys.length) return '{}';
    return '{' + keys.map((k) => nl + quote(k, escapeHTML) + colon + enc((x as Record<string, unknown>)[k], depth + 1)).join(',') + end + '}';
  };
  return enc(v, 0);
}
