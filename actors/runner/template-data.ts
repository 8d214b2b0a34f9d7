/**
 * Where a task's templates get their data: Nomad Variables from the client's
 * {@link VariableSource}, services from the client's own catalog. Each fetch is a blocking
 * query: with an index, it answers once the data's index moves past it (or a wait bound passes,
 * answering the same index, so a long wait asks again as Nomad's `block_query_wait` does).
 * @module
 */
import { sleep, type Clock } from '../../model/clock.ts';
import { BerthError, VariableAccessError } from '../../model/errors.ts';
import type { VariableSource, WorkloadIdentity } from '../../model/variables.ts';
import type { DepValue, NomadServiceItem, TemplateDep } from '../templates/nomad-funcs.ts';
import type { ServiceCatalog } from '../services/catalog.ts';

/** A template read a variable on a client that was given no variable source. */
export class NoVariableSourceError extends BerthError {}

/** One answer of a fetch: the data, and the index to wait past next time. */
export interface Fetched {
  index: number;
  value: DepValue;
}

/** What a task's fetches read from. */
export interface TemplateData {
  variables?: VariableSource;
  catalog: ServiceCatalog;
  clock: Clock;
  /** The bound on one blocking query (the client's `block_query_wait`). */
  blockQueryWaitMs: number;
}

const servicesOf = (catalog: ServiceCatalog, dep: Extract<TemplateDep, { kind: 'service' }>): NomadServiceItem[] =>
  catalog
    .list()
    .filter((r) => r.serviceName === dep.name && r.namespace === dep.namespace && (!dep.tag || r.tags.includes(dep.tag)))
    .map((r) => ({
      ID: r.id,
      Name: r.serviceName,
      Node: r.nodeId,
      Address: r.address,
      Port: r.port,
      Datacenter: r.datacenter,
      Tags: [...r.tags],
      JobID: r.jobId,
      AllocID: r.allocId,
      Namespace: r.namespace,
    }));

function serviceNames(catalog: ServiceCatalog, namespace: string): Array<{ Name: string; Tags: string[] }> {
  const byName = new Map<string, Set<string>>();
  for (const r of catalog.list()) {
    if (r.namespace !== namespace) continue;
    const tags = byName.get(r.serviceName) ?? new Set<string>();
    r.tags.forEach((t) => tags.add(t));
    byName.set(r.serviceName, tags);
  }
  return [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([Name, tags]) => ({ Name, Tags: [...tags].sort() }));
}

/**
 * Fetches one dependency for `who`. `minIndex` 0 answers at once; otherwise the answer waits for
 * a change, at most `blockQueryWaitMs`. Rejects with the signal's reason when `signal` aborts.
 */
export async function fetchDep(data: TemplateData, dep: TemplateDep, who: WorkloadIdentity, minIndex: number, signal: AbortSignal): Promise<Fetched> {
  // The implicit workload policy covers the task's own namespace only.
  if (dep.kind !== 'service' && dep.kind !== 'services' && dep.namespace !== who.namespace)
    throw new VariableAccessError(dep.kind === 'var' ? `${dep.path}@${dep.namespace}` : `${dep.prefix}@${dep.namespace}`);
  const bound = new AbortController();
  const onAbort = () => bound.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const waitSignal = AbortSignal.any([signal, bound.signal]);
  // The wait bound: when it passes, the query answers what it has (the same index).
  const timeout =
    minIndex > 0
      ? sleep(data.blockQueryWaitMs, waitSignal, data.clock).then(
          () => bound.abort(TIMED_OUT),
          () => {},
        )
      : undefined;
  try {
    return await fetchOnce(data, dep, who, minIndex, waitSignal);
  } catch (e) {
    if (bound.signal.reason === TIMED_OUT && !signal.aborted) return fetchOnce(data, dep, who, 0, signal);
    throw e;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (!bound.signal.aborted) bound.abort(DONE);
    await timeout;
  }
}

const TIMED_OUT = Symbol('block_query_wait passed');
const DONE = Symbol('fetch done');

async function fetchOnce(data: TemplateData, dep: TemplateDep, who: WorkloadIdentity, minIndex: number, signal: AbortSignal): Promise<Fetched> {
  switch (dep.kind) {
    case 'var': {
      if (!data.variables) throw new NoVariableSourceError(`nomadVar ${JSON.stringify(dep.path)}: this client has no variable source`);
      const r = await data.variables.get(dep.path, who, { minIndex, signal });
      return { index: r.index, value: r.variable };
    }
    case 'varList': {
      if (!data.variables) throw new NoVariableSourceError(`nomadVarList ${JSON.stringify(dep.prefix)}: this client has no variable source`);
      const r = await data.variables.list(dep.prefix, who, { minIndex, signal });
      return { index: r.index, value: r.variables };
    }
    case 'service': {
      const index = await data.catalog.waitFor(minIndex, signal);
      return { index, value: servicesOf(data.catalog, dep) };
    }
    case 'services': {
      const index = await data.catalog.waitFor(minIndex, signal);
      return { index, value: serviceNames(data.catalog, dep.namespace) };
    }
  }
}
