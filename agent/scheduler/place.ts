/**
 * Fitting one alloc of a group on the node (Nomad's bin-pack step for a single node): ports,
 * whole cores, then cpu, memory and disk against everything the node would run; and, when the
 * job's scheduler type has preemption on, the allocs to evict to make it fit.
 * @module
 */
import type { AllocatedResources, Allocation, TaskGroup } from '../../index.ts';
import { assignPorts, buildPortIndex } from './ports.ts';
import { DEFAULT_JOB_PRIORITY, PREEMPTION_PRIORITY_DELTA, selectPreemptions } from './preemption.ts';
import { addComparable, allocComparable, comparableOf, emptyComparable, exhaustedDimension, groupAsk, nodeAvailable, subtractComparable } from './resources.ts';
import type { SchedulerNode } from './types.ts';

/** What one placement attempt needs. */
export interface FitInput {
  node: SchedulerNode;
  group: TaskGroup;
  jobId: string;
  namespace: string;
  jobPriority: number;
  /** Everything the node would run if the plan so far were applied. */
  proposed: Allocation[];
  /** Allocs the plan has already preempted. */
  preemptedSoFar: Allocation[];
  /** Preemption is on for the job's scheduler type. */
  evict: boolean;
  memoryOversubscription: boolean;
  random?: () => number;
}

/** A fit: the alloc's resources and the allocs to evict for it. Or the exhausted dimension. */
export type FitResult = { ok: true; resources: AllocatedResources; victims: Allocation[] } | { ok: false; dimension: string };

/** Try to fit one alloc of `group` on the node. */
export function fit(input: FitInput): FitResult {
  const { node, group } = input;
  let proposed = input.proposed;
  const victims: Allocation[] = [];
  const resources = groupAsk(group, input.memoryOversubscription);

  // Ports.
  let { index, collision } = buildPortIndex(node, proposed);
  if (collision) return { ok: false, dimension: 'network: port collision' };
  let offer = assignPorts(index, group.networks, input.random);
  if ('error' in offer) {
    const holders = input.evict ? staticPortHolders(input, proposed) : undefined;
    if (!holders) return { ok: false, dimension: `network: ${offer.error}` };
    victims.push(...holders);
    proposed = proposed.filter((a) => !holders.includes(a));
    ({ index, collision } = buildPortIndex(node, proposed));
    offer = assignPorts(index, group.networks, input.random);
    if ('error' in offer) return { ok: false, dimension: `network: ${offer.error}` };
  }
  resources.shared.ports = offer.ports;

  // Whole cores: never preempted for (Nomad does not either).
  const available = nodeAvailable(node);
  const taken = new Set(proposed.flatMap((a) => allocComparable(a).cores));
  const mhzPerCore = Math.floor(node.resources.cpuMHz / Math.max(1, node.resources.cores ?? 1));
  for (const task of group.tasks) {
    const want = task.resources?.cores ?? 0;
    if (want <= 0) continue;
    const free = available.cores.filter((c) => !taken.has(c));
    if (free.length < want) return { ok: false, dimension: 'cores' };
    const cores = free.slice(0, want);
    for (const c of cores) taken.add(c);
    resources.tasks[task.name].cores = cores;
    resources.tasks[task.name].cpu = cores.length * mhzPerCore;
  }

  // cpu, memory, disk.
  const ask = comparableOf(resources);
  const used = proposed.reduce((sum, a) => addComparable(sum, allocComparable(a)), emptyComparable());
  const dimension = exhaustedDimension(available, addComparable(used, ask));
  if (dimension === undefined) return { ok: true, resources, victims };
  if (!input.evict) return { ok: false, dimension };
  const chosen = selectPreemptions({
    jobId: input.jobId,
    namespace: input.namespace,
    jobPriority: input.jobPriority,
    ask,
    remaining: subtractComparable(available, used),
    proposed,
    preemptedSoFar: [...input.preemptedSoFar, ...victims],
  });
  if (!chosen || chosen.length === 0) return { ok: false, dimension };
  // Nomad's plan applier re-checks the fit; berth has none, so check here.
  const after = proposed.filter((a) => !chosen.includes(a)).reduce((sum, a) => addComparable(sum, allocComparable(a)), emptyComparable());
  const still = exhaustedDimension(available, addComparable(after, { ...ask, cores: [] }));
  if (still !== undefined) return { ok: false, dimension: still };
  return { ok: true, resources, victims: [...victims, ...chosen] };
}

/**
 * The allocs holding the static ports the group asks for, when every one of them may be
 * preempted (another job, at least 10 priority lower). Undefined when a port is the node's own
 * reserved port, held by an alloc that may not be preempted, or when no static port collides
 * (a dynamic range that is full is not preempted for).
 */
function staticPortHolders(input: FitInput, proposed: Allocation[]): Allocation[] | undefined {
  const wanted = new Set((input.group.networks?.[0]?.reservedPorts ?? []).map((p) => p.value));
  const reserved = new Set(input.node.reserved?.ports ?? []);
  const holders: Allocation[] = [];
  for (const port of wanted) {
    if (port === undefined || reserved.has(port)) return undefined;
    for (const alloc of proposed) {
      if (!alloc.allocatedResources?.shared.ports.some((p) => p.value === port)) continue;
      const sameJob = alloc.jobId === input.jobId && (alloc.namespace ?? 'default') === input.namespace;
      if (sameJob || input.jobPriority - (alloc.job.priority ?? DEFAULT_JOB_PRIORITY) < PREEMPTION_PRIORITY_DELTA) return undefined;
      if (!holders.includes(alloc)) holders.push(alloc);
    }
  }
  return holders.length > 0 ? holders : undefined;
}
