/**
 * Nomad's `Job.Diff`: the field-by-field difference between the current version of a job and a
 * submitted one, over the API JSON the agent stores. A job, group or task's own primitive fields
 * are listed when they change; its blocks (constraints, restart policy, config, services...) are
 * objects whose unchanged fields are listed too when `contextual` (Nomad's plan always is). With
 * no current version everything is Added.
 *
 * Left out, as berth runs none of them: Multiregion, UI, Consul Connect, Vault, secrets,
 * workload identities, actions, task schedules, devices, NUMA, CNI and CSI mount options.
 * Like Nomad's, it never shows spreads, task lifecycles or task restart policies.
 * @module
 */
import { asList, asObj, asStrings, deepEqual, flatStruct, type Obj } from './flat.ts';
import { fieldDiffs, primitiveObjectDiff, primitiveObjectSetDiff, stringSetDiff, wire, blockDiff } from './fields.ts';
import { artifactDiffs, configDiff, disconnectDiff, resourcesDiff, scalingDiff, templateDiffs, volumeDiffs, volumeMountDiffs } from './blocks.ts';
import { networkDiffs, push, serviceDiffs } from './network.ts';
import { JobDiffError } from './job-diff-error.ts';
import * as S from './schema.ts';
import type { DiffType, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from './types.ts';

const constraintKey = (c: unknown) => {
  const o = asObj(c) ?? {};
  return `${o.LTarget ?? ''} ${o.Operand ?? ''} ${o.RTarget ?? ''}`;
};
const affinityKey = (a: unknown) => `${constraintKey(a)} ${asObj(a)?.Weight ?? 0}`;

/** Constraints and affinities, as a job, a group and a task each have them. */
function placementDiffs(o: Obj, n: Obj, contextual: boolean): ObjectDiff[] {
  return [
    ...primitiveObjectSetDiff(asList(o.Constraints), asList(n.Constraints), constraintKey, S.CONSTRAINT, 'Constraint', contextual),
    ...primitiveObjectSetDiff(asList(o.Affinities), asList(n.Affinities), affinityKey, S.AFFINITY, 'Affinity', contextual),
  ];
}

const typeOf = (old: unknown, neu: unknown): DiffType => (!old ? 'Added' : !neu ? 'Deleted' : deepEqual(old, neu) ? 'None' : 'Edited');

/**
 * The diff of `old` (the current version, undefined for a new job) and `neu` (the submitted job),
 * as Nomad's API shapes it (empty lists are `null`). Updates and task annotations are the plan's
 * to add ({@link annotateDiff}).
 */
export function jobDiff(old: Obj | undefined, neu: Obj | undefined, contextual: boolean): JobDiff {
  if (old && neu && old.ID !== neu.ID) throw new JobDiffError(`can not diff jobs with different IDs: ${JSON.stringify(old.ID)} and ${JSON.stringify(neu.ID)}`);
  const o = old ?? {};
  const n = neu ?? {};
  const objects: ObjectDiff[] = [];
  const dcs = stringSetDiff(asStrings(o.Datacenters), asStrings(n.Datacenters), 'Datacenters', contextual);
  if (dcs && dcs.Type !== 'None') objects.push(dcs);
  objects.push(...placementDiffs(o, n, contextual));
  const groups = byName(o.TaskGroups, n.TaskGroups).map(([a, b]) => groupDiff(a, b, contextual));
  push(objects, periodicDiff(o.Periodic, n.Periodic, contextual));
  push(objects, parameterizedDiff(o.ParameterizedJob, n.ParameterizedJob, contextual));
  const fields = fieldDiffs(old && flatStruct(old, S.JOB), neu && flatStruct(neu, S.JOB), false);
  let type: DiffType = !old && neu ? 'Added' : old && !neu ? 'Deleted' : 'None';
  if (type === 'None' && [...fields, ...objects, ...groups].some((d) => d.Type !== 'None')) type = 'Edited';
  return wire({ Type: type, ID: String((neu ?? old)?.ID ?? ''), Fields: fields, Objects: objects, TaskGroups: groups });
}

/** Pairs of same-named groups or tasks (either side missing for an added or removed one), by name. */
function byName(old: unknown, neu: unknown): Array<[Obj | undefined, Obj | undefined]> {
  const index = (l: unknown) => new Map(asList(l).map((x) => [String(asObj(x)?.Name ?? ''), asObj(x) ?? {}]));
  const a = index(old);
  const b = index(neu);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return names.map((name) => [a.get(name), b.get(name)]);
}

function groupDiff(old: Obj | undefined, neu: Obj | undefined, contextual: boolean): TaskGroupDiff {
  const o = old ?? {};
  const n = neu ?? {};
  const oldFlat = old && flatStruct(old, S.GROUP);
  const newFlat = neu && flatStruct(neu, S.GROUP);
  if (oldFlat && newFlat) {
    // A pointer Nomad adds by hand, and only when both versions exist.
    const delay = (g: Obj) => (typeof g.ShutdownDelay === 'number' ? String(g.ShutdownDelay) : '');
    oldFlat.set('ShutdownDelay', delay(o));
    newFlat.set('ShutdownDelay', delay(n));
  }
  const objects = placementDiffs(o, n, contextual);
  push(objects, primitiveObjectDiff(o.RestartPolicy, n.RestartPolicy, S.RESTART_POLICY, 'RestartPolicy', contextual));
  push(objects, primitiveObjectDiff(o.Migrate, n.Migrate, S.MIGRATE, 'Migrate', contextual));
  push(objects, primitiveObjectDiff(o.ReschedulePolicy, n.ReschedulePolicy, S.RESCHEDULE_POLICY, 'ReschedulePolicy', contextual));
  push(objects, primitiveObjectDiff(o.EphemeralDisk, n.EphemeralDisk, S.EPHEMERAL_DISK, 'EphemeralDisk', contextual));
  push(objects, primitiveObjectDiff(o.Consul, n.Consul, S.CONSUL, 'Consul', contextual));
  push(objects, primitiveObjectDiff(o.Update, n.Update, S.UPDATE, 'Update', contextual, ['Stagger']));
  push(objects, disconnectDiff(o.Disconnect, n.Disconnect, contextual));
  objects.push(...networkDiffs(o.Networks, n.Networks, contextual));
  push(objects, scalingDiff(o.Scaling, n.Scaling, contextual));
  objects.push(...serviceDiffs(o.Services, n.Services, contextual));
  objects.push(...volumeDiffs(o.Volumes, n.Volumes, contextual));
  return {
    Type: typeOf(old, neu),
    Name: String((neu ?? old)?.Name ?? ''),
    Fields: fieldDiffs(oldFlat, newFlat, false),
    Objects: objects,
    Tasks: byName(o.Tasks, n.Tasks).map(([a, b]) => taskDiff(a, b, contextual)),
    Updates: null,
  };
}

function taskDiff(old: Obj | undefined, neu: Obj | undefined, contextual: boolean): TaskDiff {
  const o = old ?? {};
  const n = neu ?? {};
  const objects = placementDiffs(o, n, contextual);
  push(objects, configDiff(o.Config, n.Config, contextual));
  push(objects, resourcesDiff(o.Resources, n.Resources, contextual));
  push(objects, primitiveObjectDiff(o.LogConfig, n.LogConfig, S.LOG_CONFIG, 'LogConfig', contextual));
  push(objects, primitiveObjectDiff(o.DispatchPayload, n.DispatchPayload, S.DISPATCH_PAYLOAD, 'DispatchPayload', contextual));
  objects.push(...artifactDiffs(o.Artifacts, n.Artifacts, contextual));
  objects.push(...serviceDiffs(o.Services, n.Services, contextual));
  push(objects, primitiveObjectDiff(o.Consul, n.Consul, S.CONSUL, 'Consul', contextual));
  objects.push(...templateDiffs(o.Templates, n.Templates, contextual));
  objects.push(...volumeMountDiffs(o.VolumeMounts, n.VolumeMounts, contextual));
  return {
    Type: typeOf(old, neu),
    Name: String((neu ?? old)?.Name ?? ''),
    Fields: fieldDiffs(old && flatStruct(old, S.TASK), neu && flatStruct(neu, S.TASK), false),
    Objects: objects,
    Annotations: null,
  };
}

function periodicDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Periodic', (p) => flatStruct(p, S.PERIODIC), contextual);
  if (!d) return undefined;
  const specs = stringSetDiff(asStrings(asObj(old)?.Specs), asStrings(asObj(neu)?.Specs), 'Specs', contextual);
  if (specs && specs.Type !== 'None') d.Objects!.push(specs);
  return d;
}

function parameterizedDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'ParameterizedJob', (p) => flatStruct(p, S.PARAMETERIZED), contextual);
  if (!d) return undefined;
  const list = (p: unknown, k: string) => asStrings(asObj(p)?.[k]);
  push(d.Objects!, stringSetDiff(list(old, 'MetaOptional'), list(neu, 'MetaOptional'), 'MetaOptional', contextual));
  push(d.Objects!, stringSetDiff(list(old, 'MetaRequired'), list(neu, 'MetaRequired'), 'MetaRequired', contextual));
  return d;
}
