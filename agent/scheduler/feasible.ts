/**
 * Nomad's feasibility checks for the one node, as pure functions: whether a group may be placed
 * here at all (before any resource is counted). In Nomad's order: the job's constraints, the
 * group's drivers (detected and healthy), the group's and its tasks' constraints, then
 * `distinct_hosts` and `distinct_property` against the allocs the node would run. A failed check
 * names the reason Nomad's `AllocMetric.ConstraintFiltered` counts it under: the constraint's
 * text (`${attr.kernel.name} = windows`), `missing drivers`, `distinct_hosts`, or the
 * `distinct_property: ...` text.
 * @module
 */
import type { Allocation, Constraint, Job, TaskGroup } from '../../index.ts';
import type { SchedulerNode } from './types.ts';
import { versionMatches } from './version-constraint.ts';

/** A target's value on the node, and whether the node has it. */
export type Resolved = [value: string, found: boolean];

/**
 * Resolves a constraint target (Nomad's `resolveTarget`): a literal unless it starts with `${`;
 * `${node.unique.id}`, `${node.unique.name}`, `${node.datacenter}`, `${node.class}`,
 * `${node.pool}`, `${attr.<name>}` and `${meta.<key>}`; anything else is not found.
 */
export function resolveTarget(target: string, node: SchedulerNode): Resolved {
  if (!target.startsWith('${')) return [target, true];
  switch (target) {
    case '${node.unique.id}':
      return [node.id, true];
    case '${node.unique.name}':
      return [node.name ?? '', true];
    case '${node.datacenter}':
      return [node.datacenter ?? 'dc1', true];
    case '${node.class}':
      return [node.nodeClass ?? '', true];
    case '${node.pool}':
      return [node.nodePool ?? 'default', true];
  }
  const inner = (prefix: string) => target.slice(prefix.length).replace(/\}$/, '');
  if (target.startsWith('${attr.')) return lookup(node.attributes, inner('${attr.'));
  if (target.startsWith('${meta.')) return lookup(node.meta, inner('${meta.'));
  return ['', false];
}

function lookup(map: Record<string, string> | undefined, key: string): Resolved {
  return map && Object.hasOwn(map, key) ? [map[key]!, true] : ['', false];
}

/** Every operator Nomad's constraint checker knows. */
export const CONSTRAINT_OPERATORS = [
  '=',
  '==',
  'is',
  '!=',
  'not',
  '<',
  '<=',
  '>',
  '>=',
  'version',
  'semver',
  'regexp',
  'set_contains',
  'set_contains_all',
  'set_contains_any',
  'is_set',
  'is_not_set',
  'distinct_hosts',
  'distinct_property',
] as const;

/**
 * Nomad's `checkConstraint`: whether `l operand r` holds. `distinct_hosts` and
 * `distinct_property` hold here (they are checked against allocs, not values); an unknown
 * operator never holds.
 */
export function checkConstraint(operand: string, [l, lFound]: Resolved, [r, rFound]: Resolved): boolean {
  const both = lFound && rFound;
  switch (operand) {
    case 'distinct_hosts':
    case 'distinct_property':
      return true;
    case '=':
    case '==':
    case 'is':
      return both && l === r;
    case '!=':
    case 'not':
      // An absent attribute is "" here, as Nomad compares: `${attr.x} != "y"` holds without x.
      return l !== r;
    case '<':
    case '<=':
    case '>':
    case '>=':
      return both && checkOrder(operand, l, r);
    case 'is_set':
      return lFound;
    case 'is_not_set':
      return !lFound;
    case 'version':
      return both && versionMatches(l, r, false);
    case 'semver':
      return both && versionMatches(l, r, true);
    case 'regexp':
      return both && regexpMatches(l, r);
    case 'set_contains':
    case 'set_contains_all':
      return both && setContains(l, r, 'all');
    case 'set_contains_any':
      return both && setContains(l, r, 'any');
    default:
      return false;
  }
}

/** As integers when both parse as Go's ParseInt, else as floats, else lexically. */
function checkOrder(op: '<' | '<=' | '>' | '>=', l: string, r: string): boolean {
  const int = /^[+-]?\d+$/;
  const float = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(Inf|inf|Infinity|infinity|NaN|nan)$/;
  let a: number | string = l;
  let b: number | string = r;
  if ((int.test(l) && int.test(r)) || (float.test(l) && float.test(r))) {
    a = Number(l.replace(/^([+-]?)inf(inity)?$/i, '$1Infinity'));
    b = Number(r.replace(/^([+-]?)inf(inity)?$/i, '$1Infinity'));
  }
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

const regexpCache = new Map<string, RegExp | null>();

/**
 * Go's RE2 through JavaScript's RegExp (the same syntax for what constraints use); RE2's leading
 * flag group `(?i)`, `(?s)`, `(?m)` becomes RegExp flags. A pattern that does not compile never
 * matches (Nomad: infeasible).
 */
function regexpMatches(value: string, pattern: string): boolean {
  let re = regexpCache.get(pattern);
  if (re === undefined) {
    const m = /^\(\?([ims]+)\)/.exec(pattern);
    try {
      re = new RegExp(m ? pattern.slice(m[0].length) : pattern, m ? [...new Set(m[1])].join('') : '');
    } catch {
      re = null;
    }
    if (regexpCache.size > 1000) regexpCache.clear();
    regexpCache.set(pattern, re);
  }
  return !!re && re.test(value);
}

/** Comma lists, items trimmed: every (or any) item of `r` is in `l`. */
function setContains(l: string, r: string, mode: 'all' | 'any'): boolean {
  const have = new Set(l.split(',').map((s) => s.trim()));
  const want = r.split(',').map((s) => s.trim());
  return mode === 'all' ? want.every((w) => have.has(w)) : want.some((w) => have.has(w));
}

/** Nomad's `Constraint.String()`: what `ConstraintFiltered` keys a failed constraint by. */
export function constraintText(c: Constraint): string {
  return `${c.lTarget ?? ''} ${c.operand} ${c.rTarget ?? ''}`;
}

/** Whether one constraint holds on the node (Nomad's `meetsConstraint`). */
export function meetsConstraint(c: Constraint, node: SchedulerNode): boolean {
  return checkConstraint(c.operand, resolveTarget(c.lTarget ?? '', node), resolveTarget(c.rTarget ?? '', node));
}

/** What {@link feasible} needs. */
export interface FeasibleInput {
  node: SchedulerNode;
  job: Job;
  group: TaskGroup;
  /** Everything the node would run with the plan so far applied (Nomad's proposed allocs). */
  proposed: Allocation[];
}

/** The reason the group cannot be placed on the node, as `ConstraintFiltered` names it; undefined when it can. */
export function feasible({ node, job, group, proposed }: FeasibleInput): string | undefined {
  for (const c of job.constraints ?? []) if (!meetsConstraint(c, node)) return constraintText(c);
  if (node.drivers && group.tasks.some((t) => !node.drivers!.includes(t.driver))) return 'missing drivers';
  const groupConstraints = [...(group.constraints ?? []), ...group.tasks.flatMap((t) => t.constraints ?? [])];
  for (const c of groupConstraints) if (!meetsConstraint(c, node)) return constraintText(c);

  const sameJob = proposed.filter((a) => a.jobId === job.id && (a.namespace ?? 'default') === (job.namespace ?? 'default'));
  const distinct = (cs: Constraint[] | undefined) => (cs ?? []).some((c) => c.operand === 'distinct_hosts');
  // One node: any alloc of the job (job level) or of the group (group level) already here collides.
  if (distinct(job.constraints) && sameJob.length > 0) return 'distinct_hosts';
  if (distinct(group.constraints) && sameJob.some((a) => a.taskGroup === group.name)) return 'distinct_hosts';

  const properties = [
    ...(job.constraints ?? []).filter((c) => c.operand === 'distinct_property').map((c) => ({ c, allocs: sameJob })),
    ...(group.constraints ?? [])
      .filter((c) => c.operand === 'distinct_property')
      .map((c) => ({ c, allocs: sameJob.filter((a) => a.taskGroup === group.name) })),
  ];
  for (const { c, allocs } of properties) {
    const reason = distinctProperty(c, node, allocs.length);
    if (reason) return reason;
  }
  return undefined;
}

/**
 * Nomad's property set for one node: every alloc counted shares the node's value of the
 * attribute, so the group fits while fewer than `rTarget` (default 1) allocs use it.
 */
function distinctProperty(c: Constraint, node: SchedulerNode, used: number): string | undefined {
  const attribute = c.lTarget ?? '';
  let allowed = 1;
  if (c.rTarget) {
    if (!/^\d+$/.test(c.rTarget))
      return `failed to convert RTarget ${JSON.stringify(c.rTarget)} to uint64: strconv.ParseUint: parsing ${JSON.stringify(c.rTarget)}: invalid syntax`;
    allowed = Number(c.rTarget);
  }
  const [value, found] = attribute ? resolveTarget(attribute, node) : ['', false];
  if (!found) return `missing property ${JSON.stringify(attribute)}`;
  if (used < allowed) return undefined;
  return `distinct_property: ${attribute}=${value} used by ${used} allocs`;
}
