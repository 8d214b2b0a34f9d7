/**
 * Evaluates a whole hcl2json tree as jobspec2 does before decoding: `locals` blocks (several
 * allowed, in any order, referring to each other and to variables; a cycle is an error naming
 * them), every string as an HCL2 template, and `dynamic "type" { for_each, iterator, labels,
 * content }` blocks expanded in place. Problems are collected (one per place), not thrown, so the
 * file's other problems are told with them.
 * @module
 */
import { JobspecError } from '../../../index.ts';
import { HclDiagnostic } from './errors.ts';
import { evaluate, iterate, type EvalContext } from './evaluate.ts';
import { nomadFunctions, type FunctionOptions } from './functions/index.ts';
import { parseTemplate } from './parser.ts';
import { isObject, type ObjectValue, type Value } from './values.ts';

/** A problem at an hcl2json path (`job.group.web[0].task.app[0].config[0].command`). */
export interface ExpressionProblem {
  path: string;
  message: string;
}

/**
 * The most expressions one job's evaluation may take (each `for` iteration, element and operand is
 * one): a few kilobytes of nested `for`s over `range(1024)` would otherwise ask for billions.
 */
export const MAX_EVALUATION_STEPS = 1_000_000;

/** Bounds on what evaluation may build (see `variables.ts`). */
export interface EvaluationBounds {
  /** The longest string one expression may build. */
  maxString: number;
  /** The most all strings of the job may add up to. */
  maxTotal: number;
}

/** Options of {@link evaluateJobTree}. */
export interface JobTreeOptions extends FunctionOptions {
  vars: Map<string, Value>;
  bounds: EvaluationBounds;
  /** Where a bound is broken: thrown at once (the job is refused before it is built). */
  where(path: string): { path: string; file?: string };
  /** Told of each labelled block a `dynamic` block at `path` generates (to keep the file's order). */
  generated?(type: string, label: string, path: string): void;
}

/** Thrown for a reference to a local whose own problem is already reported. */
class ReportedError extends HclDiagnostic {}

type Raw = unknown;

/** The `locals` blocks of a parsed file, name to [value as hcl2json gives it, path]. */
function collectLocals(root: Record<string, unknown>, problems: ExpressionProblem[]): Map<string, [Raw, string]> {
  const out = new Map<string, [Raw, string]>();
  const blocks = Array.isArray(root.locals) ? root.locals : root.locals === undefined ? [] : [root.locals];
  blocks.forEach((b, i) => {
    if (!isObject(b)) return;
    for (const [name, raw] of Object.entries(b)) {
      const path = `locals[${i}].${name}`;
      if (out.has(name)) problems.push({ path, message: `Duplicate value in locals; Duplicate ${name} definition found.` });
      else out.set(name, [raw, path]);
    }
  });
  return out;
}

/** Evaluates `root.job`'s body (and the locals it uses); returns the body with every value computed. */
export function evaluateJobTree(root: Record<string, unknown>, body: Raw, bodyPath: string, opts: JobTreeOptions, problems: ExpressionProblem[]): Raw {
  const functions = nomadFunctions(opts);
  const locals = collectLocals(root, problems);
  const done = new Map<string, Value>();
  const failed = new Set<string>();
  const evaluating: string[] = [];
  let total = 0;
  let steps = 0;
  const seen = new Set<string>();
  const report = (p: ExpressionProblem) => {
    const key = `${p.path}\0${p.message}`;
    if (seen.has(key)) return;
    problems.push(p);
    seen.add(key);
  };

  let stepPath = bodyPath;
  const base: EvalContext = {
    src: '',
    step() {
      if (++steps > MAX_EVALUATION_STEPS)
        throw new JobspecError(
          `${stepPath}: the job's expressions take more than ${MAX_EVALUATION_STEPS} steps to evaluate; refused before building it`,
          opts.where(stepPath),
        );
    },
    vars: opts.vars,
    functions,
    localNames: () => [...locals.keys()],
    local(name, at) {
      if (done.has(name)) return done.get(name)!;
      if (failed.has(name)) throw new ReportedError('Reported', `local.${name} has a problem of its own`, at);
      const entry = locals.get(name);
      if (!entry) throw new HclDiagnostic('Unsupported attribute', `This object does not have an attribute named ${JSON.stringify(name)}.`, at);
      if (evaluating.includes(name)) {
        const cycle = [...evaluating.slice(evaluating.indexOf(name)), name].map((n) => `local.${n}`).join(' -> ');
        throw new HclDiagnostic('Cycle in local values', `The locals refer to each other in a circle: ${cycle}.`, at);
      }
      evaluating.push(name);
      const before = problems.length;
      try {
        const v = walk(entry[0], base, entry[1]) as Value;
        if (problems.length > before) {
          failed.add(name);
          throw new ReportedError('Reported', `local.${name} has a problem of its own`, at);
        }
        done.set(name, v);
        return v;
      } finally {
        evaluating.pop();
      }
    },
  };

  const charge = (n: number, path: string) => {
    total += n;
    if (total > opts.bounds.maxTotal)
      throw new JobspecError(
        `${path}: variables substituted into the job come to more than ${opts.bounds.maxTotal} characters; refused before building it`,
        opts.where(path),
      );
  };

  /** One string: a template, evaluated; a problem is reported and the text kept as written. */
  function string(s: string, ctx: EvalContext, path: string): Raw {
    if (!s.includes('${') && !s.includes('%{')) return s;
    stepPath = path;
    let built = 0;
    const tooLong = () =>
      new JobspecError(
        `${path}: with variables substituted this string is longer than ${opts.bounds.maxString} characters (the most a task's whole command line and environment can hold)`,
        opts.where(path),
      );
    const inner: EvalContext = {
      ...ctx,
      src: s,
      charge: (n) => {
        built += n;
        if (built > opts.bounds.maxString) throw tooLong();
      },
    };
    try {
      const v = evaluate(parseTemplate(s), inner);
      // A function (join, format, file) may build a long string without a template piece.
      if (typeof v === 'string' && v.length > opts.bounds.maxString) throw tooLong();
      charge(typeof v === 'string' ? v.length : JSON.stringify(v).length, path);
      // Expressions share values (a local used twice); the job gets its own copy, which decoding may change.
      return typeof v === 'object' && v !== null ? structuredClone(v) : v;
    } catch (e) {
      if (e instanceof ReportedError) return s;
      // JavaScript's own limits (nesting past the stack, a string past its largest): a problem of the file.
      if (e instanceof RangeError) {
        report({ path, message: `Expression too complex; berth cannot evaluate it: ${e.message}.` });
        return s;
      }
      if (!(e instanceof HclDiagnostic)) throw e;
      // A cycle is reported once, at the local where it was found.
      report({ path, message: e.message });
      return s;
    }
  }

  function walk(v: Raw, ctx: EvalContext, path: string): Raw {
    if (typeof v === 'string') return string(v, ctx, path);
    if (Array.isArray(v)) return v.map((x, i) => walk(x, ctx, `${path}[${i}]`));
    if (!isObject(v)) return v;
    const out: Record<string, Raw> = {};
    for (const [k, x] of Object.entries(v)) if (!(k === 'dynamic' && isDynamicSection(x))) merge(out, k, walk(x, ctx, `${path}.${k}`));
    if (isDynamicSection(v.dynamic))
      for (const [type, blocks] of Object.entries(v.dynamic)) blocks.forEach((b, i) => expandDynamic(out, type, b, ctx, `${path}.dynamic.${type}[${i}]`));
    return out;
  }

  function expandDynamic(out: Record<string, Raw>, type: string, spec: ObjectValue, ctx: EvalContext, path: string): void {
    for (const k of Object.keys(spec))
      if (!['for_each', 'iterator', 'labels', 'content'].includes(k))
        report({ path: `${path}.${k}`, message: `Unsupported argument; An argument named ${JSON.stringify(k)} is not expected here.` });
    if (spec.for_each === undefined)
      return report({ path, message: 'Missing required argument; The argument "for_each" is required, but no definition was found.' });
    const content = Array.isArray(spec.content) ? spec.content[0] : spec.content;
    if (!isObject(content))
      return report({
        path,
        message: 'Missing content block; A dynamic block must have a nested block of type "content" to describe the body of each generated block.',
      });
    const iterName = typeof spec.iterator === 'string' ? spec.iterator.replace(/^\$\{\s*([A-Za-z_][\w-]*)\s*\}$/, '$1') : type;
    const before = problems.length;
    const coll = walk(spec.for_each, ctx, `${path}.for_each`) as Value;
    if (problems.length > before) return;
    let pairs: Array<[Value, Value]>;
    try {
      pairs = iterate(coll, 0);
    } catch {
      return report({
        path: `${path}.for_each`,
        message: `Invalid dynamic for_each value; Cannot use a ${coll === null ? 'null' : typeof coll} value in for_each. An iterable collection is required.`,
      });
    }
    for (const [key, value] of pairs) {
      const scope = new Map(ctx.scope ?? []);
      scope.set(iterName, { key, value });
      const inner = { ...ctx, scope };
      const labels = spec.labels === undefined ? [] : (walk(spec.labels, inner, `${path}.labels`) as Value);
      const body = walk(content, inner, `${path}.content[0]`);
      if (!Array.isArray(labels)) return report({ path: `${path}.labels`, message: 'Invalid dynamic block labels; The labels must be a list of strings.' });
      // hcl2json's shape: a labelled block is `{ label: [body] }` under its type, unlabelled `[body]`.
      if (labels.length) opts.generated?.(type, String(labels[0]), path);
      let node: Raw = [body];
      for (const l of [...labels].reverse()) node = { [String(l)]: node };
      merge(out, type, node);
    }
  }

  // Every local is evaluated, used or not (as jobspec2 does), so each problem is told.
  for (const name of locals.keys()) {
    try {
      base.local(name, 0);
    } catch (e) {
      if (!(e instanceof HclDiagnostic)) throw e;
    }
  }
  return walk(body, base, bodyPath);
}

/** `dynamic`'s hcl2json shape: `{ type: [ { for_each, content, ... } ] }`. */
function isDynamicSection(v: unknown): v is Record<string, ObjectValue[]> {
  return isObject(v) && Object.values(v).every((b) => Array.isArray(b) && b.every((x) => isObject(x) && ('content' in x || 'for_each' in x)));
}

/** Adds a block (or labelled blocks) to what is already under `key`. */
function merge(out: Record<string, Raw>, key: string, v: Raw): void {
  const have = out[key];
  if (have === undefined) out[key] = v;
  else if (Array.isArray(have) && Array.isArray(v)) out[key] = [...have, ...v];
  else if (isObject(have) && isObject(v)) for (const [k, x] of Object.entries(v)) merge(have as Record<string, Raw>, k, x);
  else out[key] = v;
}
