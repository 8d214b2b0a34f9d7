/**
 * hcl2json's JSON of a `job` block to Nomad's API Job (PascalCase, durations in nanoseconds), by
 * the tables in `blocks.ts`. Unknown keys get a did-you-mean; refused stanzas are collected by
 * name and path; every problem carries the line of the block it is in.
 * @module
 */
import { didYouMean, parseGoDuration, type UnsupportedStanza, errorText } from '../../index.ts';
import { BLOCKS, type Decode } from './blocks.ts';
import { labelOrder, locate, type Position } from './hcl.ts';
import type { SourceIndex } from './source-index.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One problem found while decoding. */
export interface DecodeIssue {
  path: string;
  problem: string;
  at?: Position;
}

/** What decoding collects. */
export interface DecodeContext {
  /** The text's words, labels and lines, indexed once. */
  source: SourceIndex;
  issues: DecodeIssue[];
  unsupported: Array<UnsupportedStanza & { at?: Position }>;
}

type Steps = Array<[string, string?]>;

/** berth's camelCase name of an API field, for paths. */
const CAMEL: Record<string, string> = {
  CPU: 'cpu',
  LogConfig: 'logs',
  ID: 'id',
  DynamicPorts: 'dynamicPorts',
  KillTimeout: 'killTimeoutMs',
  ShutdownDelay: 'shutdownDelayMs',
  MaxRunDuration: 'maxRunDurationMs',
  MaxClientDisconnect: 'maxClientDisconnectMs',
  GetterSource: 'source',
  RelativeDest: 'destination',
  GetterMode: 'mode',
  GetterOptions: 'options',
  GetterHeaders: 'headers',
  SizeMB: 'sizeMB',
};
const camel = (api: string) => CAMEL[api] ?? api[0]!.toLowerCase() + api.slice(1);

function where(ctx: DecodeContext, steps: Steps): Position | undefined {
  const i = locate(ctx.source, steps);
  return i === undefined ? undefined : ctx.source.positionOf(i);
}

/** The bodies of a block value: hcl2json gives a list of bodies for blocks, an object for `x = {...}`. */
function bodies(v: unknown): Obj[] | undefined {
  if (isObj(v)) return [v];
  if (Array.isArray(v) && v.every(isObj)) return v as Obj[];
  return undefined;
}

function decodeValue(d: Decode, v: unknown, path: string, ctx: DecodeContext, steps: Steps): unknown {
  const bad = (problem: string) => {
    ctx.issues.push({ path, problem, at: where(ctx, steps) });
    return undefined;
  };
  if (typeof d === 'string') {
    switch (d) {
      case 'string':
        if (typeof v === 'string') return v;
        if (typeof v === 'number' || typeof v === 'boolean') return String(v); // HCL converts
        return bad('must be a string');
      case 'int': {
        const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
        if (typeof n === 'number' && Number.isInteger(n)) return n;
        return bad('must be a whole number');
      }
      case 'bool':
        if (typeof v === 'boolean') return v;
        if (v === 'true' || v === 'false') return v === 'true';
        return bad('must be true or false');
      case 'duration':
        if (typeof v !== 'string') return bad('must be a duration string like "30s"');
        try {
          return Math.round(parseGoDuration(v) * 1e6);
        } catch (e) {
          return bad(errorText(e));
        }
      case 'strings':
        if (Array.isArray(v) && v.every((x) => ['string', 'number', 'boolean'].includes(typeof x))) return v.map(String);
        return bad('must be a list of strings');
      case 'map':
      case 'listmap': {
        const b = bodies(v);
        if (!b || b.length !== 1) return bad('must be a map');
        const out: Obj = {};
        for (const [k, x] of Object.entries(b[0]!)) {
          if (d === 'map') {
            if (['string', 'number', 'boolean'].includes(typeof x)) out[k] = String(x);
            else bad(`${k}: must be a string`);
          } else if (Array.isArray(x)) out[k] = x.map(String);
          else if (typeof x === 'string') out[k] = [x];
          else bad(`${k}: must be a list of strings`);
        }
        return out;
      }
      case 'any': {
        const b = bodies(v);
        if (!b || b.length !== 1) return bad('must be a block');
        return b[0];
      }
    }
  }
  if ('block' in d) {
    const b = bodies(v);
    if (!b) return bad('must be a block');
    if (b.length > 1) return bad(`only one ${d.block} block is allowed`);
    return decodeBlock(d.block, b[0]!, path, ctx, steps);
  }
  if ('blocks' in d) {
    const b = bodies(v);
    if (!b) return bad('must be blocks');
    return b.map((x, i) => decodeBlock(d.blocks, x, `${path}[${i}]`, ctx, steps));
  }
  // Labelled blocks: { label: [body] }, in the text's order.
  if (!isObj(v)) return bad(`${d.labelled} blocks need a name: ${d.labelled} "name" { ... }`);
  const out: Obj[] = [];
  labelOrder(ctx.source, d.labelled, Object.keys(v)).forEach((label) => {
    const b = bodies(v[label]);
    const p = `${path}[${out.length}]`;
    const s: Steps = [...steps.slice(0, -1), [d.labelled, label]];
    if (!b) {
      bad(`${d.labelled} "${label}" must be a block`);
      return;
    }
    if (b.length > 1) ctx.issues.push({ path: p, problem: `duplicate ${d.labelled} "${label}"`, at: where(ctx, s) });
    out.push({ [d.label]: label, ...decodeBlock(d.labelled, b[0]!, p, ctx, s) });
  });
  return out;
}

/** Decodes one stanza body of type `type` at berth path `path`. */
export function decodeBlock(type: string, body: Obj, path: string, ctx: DecodeContext, steps: Steps): Obj {
  const spec = BLOCKS[type]!;
  const out: Obj = {};
  const known = [...Object.keys(spec.fields), ...Object.keys(spec.ignored ?? {}), ...Object.keys(spec.unsupported ?? {})];
  for (const [key, v] of Object.entries(body)) {
    const field = spec.fields[key] ?? spec.ignored?.[key];
    const s: Steps = [...steps, [key]];
    if (field) {
      const [api, d] = field;
      const decoded = decodeValue(d, v, `${path}.${camel(api)}`, ctx, s);
      if (decoded !== undefined) out[api] = decoded;
      continue;
    }
    const refused = spec.unsupported?.[key];
    if (refused !== undefined) {
      ctx.unsupported.push({ stanza: key, path: `${path}.${refused}`, at: where(ctx, s) });
      continue;
    }
    const guess = didYouMean(key, known);
    ctx.issues.push({
      path: `${path}.${key}`,
      problem: `unknown field "${key}" in ${type}${guess ? ` (did you mean "${guess}"?)` : ` (known: ${known.join(', ')})`}`,
      at: where(ctx, s),
    });
  }
  for (const key of spec.required ?? []) {
    if (key in body) continue;
    ctx.issues.push({
      path: `${path}.${camel(spec.fields[key]![0])}`,
      problem: `Missing required argument; The argument "${key}" is required, but no definition was found.`,
      at: where(ctx, steps),
    });
  }
  if (type === 'network') splitPorts(out);
  if (type === 'constraint' || type === 'affinity') shorthand(type, out);
  return out;
}

/** The shorthand keys of jobspec2's constraint and affinity, in the order it applies them (the last set wins). */
const SHORTHANDS = {
  constraint: ['version', 'semver', 'regexp', 'set_contains'],
  affinity: ['version', 'semver', 'regexp', 'set_contains_any', 'set_contains_all', 'set_contains'],
} as const;

/**
 * As jobspec2's constraint and affinity decoders: a shorthand key (`version = ">= 1.2"`) sets the
 * operator to its name and the value to its value; `distinct_hosts = true` and
 * `distinct_property = "${meta.rack}"` set the operator (the latter the attribute too); no
 * operator means `=`.
 */
function shorthand(type: 'constraint' | 'affinity', c: Obj): void {
  for (const key of SHORTHANDS[type]) {
    if (!(key in c)) continue;
    const v = c[key];
    delete c[key];
    if (v === '') continue;
    c.Operand = key;
    c.RTarget = v;
  }
  if ('distinct_hosts' in c) {
    if (c.distinct_hosts === true) c.Operand = 'distinct_hosts';
    delete c.distinct_hosts;
  }
  if ('distinct_property' in c) {
    if (c.distinct_property !== '') {
      c.Operand = 'distinct_property';
      c.LTarget = c.distinct_property;
    }
    delete c.distinct_property;
  }
  // Nomad's field order: LTarget, RTarget, Operand (then Weight).
  const { LTarget = '', RTarget = '', Operand, ...rest } = c;
  for (const k of Object.keys(c)) delete c[k];
  Object.assign(c, { LTarget, RTarget, Operand: Operand || '=' }, rest);
}

/** As Nomad's jobspec: a `port` with `static` is a reserved port, the others dynamic. */
function splitPorts(n: Obj): void {
  const ports = (n.DynamicPorts as Obj[] | undefined) ?? [];
  const reserved = ports.filter((p) => typeof p.Value === 'number' && p.Value > 0);
  const dynamic = ports.filter((p) => !(typeof p.Value === 'number' && p.Value > 0));
  n.ReservedPorts = reserved.length ? reserved : null;
  n.DynamicPorts = dynamic.length ? dynamic : null;
}
