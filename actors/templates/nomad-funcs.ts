/**
 * consul-template's Nomad functions (`nomadVar`, `nomadVarList`, `nomadVarListSafe`,
 * `nomadVarExists`, `nomadService`, `nomadServices`) over a {@link DepReader}: a render never
 * waits. Each call names a dependency; the reader answers what it has, and a dependency it has
 * not fetched yet, or one that must exist and does not (`nomadVar` of an absent path, an empty
 * `nomadVarListSafe`), is *missing*: the call renders empty and the render is incomplete. The
 * template manager fetches what is missing and renders again, as consul-template's runner does.
 * @module
 */
import { createHash } from 'node:crypto';
import type { VariableData, VariableMeta } from '../../model/variables.ts';
import { TemplateFuncError } from './errors.ts';
import type { FuncMap } from './funcs.ts';

/** One piece of data a template reads. `namespace` is always set (the task's unless `@ns` says). */
export type TemplateDep =
  | { kind: 'var'; path: string; namespace: string }
  | { kind: 'varList'; prefix: string; namespace: string }
  | { kind: 'service'; name: string; tag?: string; namespace: string }
  | { kind: 'services'; namespace: string };

/** A service instance as `nomadService` gives it (consul-template's `NomadService`). */
export interface NomadServiceItem {
  ID: string;
  Name: string;
  Node: string;
  Address: string;
  Port: number;
  Datacenter: string;
  Tags: string[];
  JobID: string;
  AllocID: string;
  Namespace: string;
}

/** What a fetched dependency holds: a variable (undefined when absent), metadata, services. */
export type DepValue = VariableData | undefined | VariableMeta[] | NomadServiceItem[] | Array<{ Name: string; Tags: string[] }>;

/** What the functions read a render's data from (the manager's cache of fetched dependencies). */
export interface DepReader {
  /** The dependency's value, or `{ fetched: false }` when it has not been fetched yet. */
  read(dep: TemplateDep): { fetched: true; value: DepValue } | { fetched: false };
  /** Marks a dependency missing: the render is incomplete until it changes. */
  missing(dep: TemplateDep): void;
}

/** Nomad's name of a dependency, as its "Missing: ..." event shows it. */
export function depName(dep: TemplateDep, region: string): string {
  switch (dep.kind) {
    case 'var':
      return `nomad.var.block(${dep.path}@${dep.namespace}.${region})`;
    case 'varList':
      return `nomad.var.list(${dep.prefix}@${dep.namespace}.${region})`;
    case 'service':
      return `nomad.service(${dep.tag ? `${dep.tag}.` : ''}${dep.name}@${dep.namespace}.${region})`;
    case 'services':
      return `nomad.services(@${dep.namespace}.${region})`;
  }
}

/** A stable key for a dependency (the manager's cache key). */
export const depKey = (dep: TemplateDep): string => JSON.stringify(dep);

const fail = (m: string): never => {
  throw new TemplateFuncError(m);
};

/** `path[@namespace[.region]]`: the path and namespace (the region is this one's: one region). */
function splitAt(spec: unknown, fn: string, defaultNs: string): { path: string; namespace: string } {
  if (typeof spec !== 'string') return fail(`${fn}: expected a string, got ${typeof spec}`);
  const at = spec.lastIndexOf('@');
  if (at < 0) return { path: spec, namespace: defaultNs };
  const ns = spec.slice(at + 1).split('.')[0] || defaultNs;
  return { path: spec.slice(0, at), namespace: ns };
}

const SERVICE_QUERY = /^(?:([\w\-.]+)\.)?([\w\-/]+)$/;

function serviceDep(spec: unknown, defaultNs: string): TemplateDep {
  const { path, namespace } = splitAt(spec, 'nomadService', defaultNs);
  const m = SERVICE_QUERY.exec(path);
  if (!m) return fail(`nomadService: invalid format: ${JSON.stringify(spec)}`);
  return { kind: 'service', name: m[2]!, ...(m[1] ? { tag: m[1] } : {}), namespace };
}

/**
 * `nomadService count key name`: consul-template's sharding, a stable choice of `count`
 * instances for `key` (rendezvous hashing on key and instance id), so each caller with its own
 * key gets its own share and the choice moves as little as possible when instances come and go.
 */
function shard(items: NomadServiceItem[], count: number, key: string): NomadServiceItem[] {
  const weight = (s: NomadServiceItem) => createHash('sha256').update(`${key}\0${s.ID}`).digest('hex');
  return items
    .map((s) => [weight(s), s] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, count)
    .map(([, s]) => s);
}

/** The Nomad functions for one task's templates; `namespace` is the task's. */
export function nomadFuncs(reader: DepReader, namespace: string): FuncMap {
  const value = (dep: TemplateDep, mustExist: (v: DepValue) => boolean): DepValue | undefined => {
    const r = reader.read(dep);
    if (!r.fetched || !mustExist(r.value)) {
      reader.missing(dep);
      return undefined;
    }
    return r.value;
  };
  const varDep = (spec: unknown, fn: string): TemplateDep => {
    const { path, namespace: ns } = splitAt(spec, fn, namespace);
    return { kind: 'var', path, namespace: ns };
  };
  const listDep = (args: unknown[], fn: string): TemplateDep => {
    const { path, namespace: ns } = splitAt(args[0] ?? '', fn, namespace);
    return { kind: 'varList', prefix: path, namespace: ns };
  };
  return {
    nomadVar: (spec) => {
      const v = value(varDep(spec, 'nomadVar'), (x) => x !== undefined) as VariableData | undefined;
      return v ? { ...v.items } : {};
    },
    nomadVarExists: (spec) => {
      const r = reader.read(varDep(spec, 'nomadVarExists'));
      if (!r.fetched) reader.missing(varDep(spec, 'nomadVarExists'));
      return r.fetched && r.value !== undefined;
    },
    nomadVarList: (...args) => metaList(value(listDep(args, 'nomadVarList'), () => true) as VariableMeta[] | undefined),
    nomadVarListSafe: (...args) => metaList(value(listDep(args, 'nomadVarListSafe'), (x) => Array.isArray(x) && x.length > 0) as VariableMeta[] | undefined),
    nomadService: (...args) => {
      if (args.length === 1) return (value(serviceDep(args[0], namespace), () => true) as NomadServiceItem[] | undefined) ?? [];
      if (args.length === 3) {
        const count = Number(args[0]);
        if (!Number.isInteger(count) || count < 1) return fail(`nomadService: count must be a positive integer, got ${JSON.stringify(args[0])}`);
        const items = (value(serviceDep(args[2], namespace), () => true) as NomadServiceItem[] | undefined) ?? [];
        return shard(items, count, String(args[1]));
      }
      return fail(`nomadService: expected 1 or 3 arguments, got ${args.length}`);
    },
    nomadServices: (...args) => {
      const ns = args.length ? splitAt(`@${String(args[0]).replace(/^@/, '')}`, 'nomadServices', namespace).namespace : namespace;
      return (value({ kind: 'services', namespace: ns }, () => true) as Array<{ Name: string; Tags: string[] }> | undefined) ?? [];
    },
  };
}

/** Variable metadata as consul-template's `NomadVarMeta` fields: `Namespace`, `Path`, indexes, times. */
function metaList(list: VariableMeta[] | undefined) {
  return (list ?? []).map((m) => ({
    Namespace: m.namespace,
    Path: m.path,
    CreateIndex: m.createIndex,
    ModifyIndex: m.modifyIndex,
    CreateTime: m.createTime,
    ModifyTime: m.modifyTime,
  }));
}
