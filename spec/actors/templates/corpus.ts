/**
 * The Go corpus (spec/fixtures/templates/cases.json and Go's answers in expected.json) and how
 * berth runs one case, the way scripts/template-corpus/main.go runs it through Go.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template, TemplateExecError, TemplateParseError, type FuncMap, type MissingKey } from '../../../actors/templates/index.ts';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/templates');

/** One case of the corpus. */
export interface Case {
  name: string;
  tpl: string;
  data?: unknown;
  missingkey?: string;
  defs?: [string, string][];
  tplName?: string;
  funcs?: boolean;
}

/** What Go (or berth) made of a case. */
export interface Outcome {
  name: string;
  output: string;
  error: string;
}

/** The cases. */
export const cases: Case[] = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8'));
/** Go's outcomes, by case name. */
export const expected: Map<string, Outcome> = new Map((JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Outcome[]).map((o) => [o.name, o]));

/** The same functions main.go registers. */
export const corpusFuncs: FuncMap = {
  upper: (...args) => {
    if (args.length !== 1) throw new Error('upper wants one argument');
    if (typeof args[0] !== 'string') throw new Error('upper wants a string');
    return args[0].toUpperCase();
  },
  fail: () => {
    throw new Error('boom');
  },
  nothing: () => null,
  list: (...args) => args,
  dict: (...args) => {
    const m: Record<string, unknown> = {};
    for (let i = 0; i + 1 < args.length; i += 2) m[String(args[i])] = args[i + 1];
    return m;
  },
  add: (...args) => {
    let n = 0;
    for (const a of args) {
      if (typeof a !== 'number' || !Number.isInteger(a)) throw new Error('add wants ints');
      n += a;
    }
    return n;
  },
};

/** Runs one case through berth. */
export function runCase(c: Case): Outcome {
  const t = new Template(c.tplName ?? 'tpl');
  if (c.funcs) t.funcs(corpusFuncs);
  if (c.missingkey) t.option(`missingkey=${c.missingkey as MissingKey}`);
  try {
    for (const [name, text] of c.defs ?? []) t.new(name).parse(text);
    t.parse(c.tpl);
  } catch (e) {
    if (e instanceof TemplateParseError) return { name: c.name, output: '', error: e.message };
    throw e;
  }
  try {
    return { name: c.name, output: t.execute(c.data ?? null), error: '' };
  } catch (e) {
    if (e instanceof TemplateExecError) return { name: c.name, output: e.output, error: e.message };
    throw e;
  }
}
