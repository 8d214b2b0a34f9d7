/**
 * The blocks of a group and a task that Nomad diffs with their own rules: a task's free-form
 * `Config`, its resources, artifacts (matched by destination), templates (by destination),
 * volume mounts (by position); a group's disconnect, scaling and volume blocks.
 * @module
 */
import { asList, asObj, asStrings, canonical, flatAny, flatStruct, type Flat } from './flat.ts';
import { blockDiff, primitiveObjectSetDiff, sortObjects, stringSetDiff } from './fields.ts';
import { networkDiffs, push } from './network.ts';
import { ARTIFACT, CHANGE_SCRIPT, RESOURCES, SCALING, TEMPLATE, VOLUME, VOLUME_MOUNT } from './schema.ts';
import type { ObjectDiff } from './types.ts';

const nonEmpty = (o: unknown) => Object.keys(asObj(o) ?? {}).length > 0;

/** A task's driver `Config`: every leaf, `args[0]`, `port_map[0][http]`. */
export function configDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  return blockDiff(old, neu, 'Config', flatAny, contextual, nonEmpty);
}

/** A task's `Resources`, with the networks inside them. */
export function resourcesDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Resources', (r) => flatStruct(r, RESOURCES), contextual);
  if (d) d.Objects!.push(...networkDiffs(asObj(old)?.Networks, asObj(neu)?.Networks, contextual));
  return d;
}

/** A task's artifacts, one per destination (or per content when it has none). */
export function artifactDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const key = (a: unknown) => String(asObj(a)?.RelativeDest ?? '') || canonical(a);
  return primitiveObjectSetDiff(asList(old), asList(neu), key, ARTIFACT, 'Artifact', contextual);
}

/** A task's templates: one to one when each side has one, otherwise matched by destination. */
export function templateDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const a = asList(old);
  const b = asList(neu);
  if (a.length === 1 && b.length === 1) {
    const d = templateDiff(a[0], b[0], contextual);
    return d ? [d] : [];
  }
  const taken = b.map(() => false);
  const out: ObjectDiff[] = [];
  for (const t of a) {
    const dest = asObj(t)?.DestPath ?? '';
    const j = b.findIndex((x, i) => !taken[i] && (asObj(x)?.DestPath ?? '') === dest);
    if (j < 0) {
      push(out, templateDiff(t, undefined, contextual));
      continue;
    }
    taken[j] = true;
    push(out, templateDiff(t, b[j], contextual));
  }
  b.forEach((t, j) => {
    if (!taken[j]) push(out, templateDiff(undefined, t, contextual));
  });
  return sortObjects(out);
}

function templateFlat(t: unknown): Flat | undefined {
  const m = flatStruct(t, TEMPLATE);
  const o = asObj(t);
  for (const k of ['Uid', 'Gid']) if (m && typeof o?.[k] === 'number') m.set(k, String(o[k]));
  return m;
}

function templateDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Template', templateFlat, contextual);
  if (!d) return undefined;
  const o = asObj(old) ?? {};
  const n = asObj(neu) ?? {};
  // Nomad names the wait block's diff "Template" too.
  push(
    d.Objects!,
    blockDiff(o.Wait, n.Wait, 'Template', (w) => pointers(w, ['Min', 'Max']), contextual),
  );
  const script = blockDiff(o.ChangeScript, n.ChangeScript, 'ChangeScript', (c) => flatStruct(c, CHANGE_SCRIPT), contextual);
  if (script) {
    const args = (c: unknown) => asStrings(asObj(c)?.Args);
    push(script.Objects!, stringSetDiff(args(o.ChangeScript), args(n.ChangeScript), 'Args', contextual));
  }
  push(d.Objects!, script);
  return d;
}

/** A task's volume mounts, compared position by position. */
export function volumeMountDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const a = asList(old);
  const b = asList(neu);
  const out: ObjectDiff[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    push(
      out,
      blockDiff(a[i], b[i], 'VolumeMount', (m) => flatStruct(m, VOLUME_MOUNT), contextual),
    );
  }
  return sortObjects(out);
}

/** A group's `Disconnect` block (flattened whole: an unset pointer is `nil`). */
export function disconnectDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const flat = (d: unknown): Flat | undefined => {
    const m = pointers(d, ['StopOnClientAfter', 'Replace']);
    if (!m) return undefined;
    const o = asObj(d) ?? {};
    m.set('LostAfter', typeof o.LostAfter === 'number' ? String(o.LostAfter) : '0');
    m.set('Reconcile', typeof o.Reconcile === 'string' ? o.Reconcile : '');
    return m;
  };
  return blockDiff(old, neu, 'Disconnect', flat, contextual);
}

/** A group's `Scaling` policy (its fields never contextual, as Nomad's). */
export function scalingDiff(old: unknown, neu: unknown, _contextual: boolean): ObjectDiff | undefined {
  const filter = ['Target[Job]', 'Target[Group]', 'Target[Namespace]'];
  const d = blockDiff(old, neu, 'Scaling', (s) => flatStruct(s, SCALING, filter), false);
  if (!d) return undefined;
  push(d.Objects!, blockDiff(asObj(old)?.Policy, asObj(neu)?.Policy, 'Policy', flatAny, false, nonEmpty));
  return d;
}

/** A group's volume requests, by name. */
export function volumeDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const a = asObj(old) ?? {};
  const b = asObj(neu) ?? {};
  const out: ObjectDiff[] = [];
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    push(
      out,
      blockDiff(a[name], b[name], 'Volume', (v) => flatStruct(v, VOLUME), contextual),
    );
  }
  return sortObjects(out);
}

/** Pointer fields flattened whole: the value, or `nil` when unset. */
function pointers(o: unknown, names: string[]): Flat | undefined {
  const obj = asObj(o);
  if (!obj) return undefined;
  return new Map(names.map((k) => [k, obj[k] === null || obj[k] === undefined ? 'nil' : String(obj[k])]));
}
