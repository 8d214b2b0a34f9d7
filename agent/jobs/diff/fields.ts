/**
 * The building blocks of Nomad's job diff (`nomad/structs/diff.go`): a field's diff, a flat
 * object's fields, a set of strings, a primitive object, a keyed set of primitive objects, and
 * the order Nomad sorts them in. Contextual means "also list unchanged fields, as None": Nomad's
 * plan always asks for it, and it shows inside changed blocks only (never among a job's, group's
 * or task's own fields).
 * @module
 */
import { cmp, deepEqual, flatStruct, type Flat, type Schema } from './flat.ts';
import type { DiffType, FieldDiff, ObjectDiff } from './types.ts';

/** Nomad's order of diff types: Edited, Added, Deleted, None. */
const TYPE_ORDER: Record<DiffType, number> = { Edited: 0, Added: 1, Deleted: 2, None: 3 };

/** A field's diff, or undefined when it is unchanged and `contextual` is off. */
export function fieldDiff(old: string, neu: string, name: string, contextual: boolean): FieldDiff | undefined {
  if (old === neu) return contextual ? { Type: 'None', Name: name, Old: old, New: neu, Annotations: null } : undefined;
  if (old === '') return { Type: 'Added', Name: name, Old: '', New: neu, Annotations: null };
  if (neu === '') return { Type: 'Deleted', Name: name, Old: old, New: '', Annotations: null };
  return { Type: 'Edited', Name: name, Old: old, New: neu, Annotations: null };
}

/** Nomad's field order: by name, then old value, then new value. */
export function fieldOrder(a: FieldDiff, b: FieldDiff): number {
  return cmp(a.Name, b.Name) || cmp(a.Old, b.Old) || cmp(a.New, b.New);
}

/**
 * Nomad's object order: by name, then type (Edited, Added, Deleted, None), then fewer fields,
 * fewer objects, then field by field and object by object. (Nomad's own comparison of the
 * fields is not a strict order; this is the lexicographic one it approximates.)
 */
export function objectOrder(a: ObjectDiff, b: ObjectDiff): number {
  const fa = a.Fields ?? [];
  const fb = b.Fields ?? [];
  const oa = a.Objects ?? [];
  const ob = b.Objects ?? [];
  const head = cmp(a.Name, b.Name) || TYPE_ORDER[a.Type] - TYPE_ORDER[b.Type] || fa.length - fb.length || oa.length - ob.length;
  if (head) return head;
  for (let i = 0; i < fa.length; i++) {
    const c = fieldOrder(fa[i]!, fb[i]!);
    if (c) return c;
  }
  for (let i = 0; i < oa.length; i++) {
    const c = objectOrder(oa[i]!, ob[i]!);
    if (c) return c;
  }
  return 0;
}

/** Sorts objects in Nomad's order (in place) and returns them. */
export function sortObjects(list: ObjectDiff[]): ObjectDiff[] {
  return list.sort(objectOrder);
}

/** The diffs of two flattened objects' fields, sorted (Nomad's `fieldDiffs`). */
export function fieldDiffs(old: Flat | undefined, neu: Flat | undefined, contextual: boolean): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const [k, v] of old ?? []) {
    const d = fieldDiff(v, neu?.get(k) ?? '', k, contextual);
    if (d) out.push(d);
  }
  for (const [k, v] of neu ?? []) {
    if (old?.has(k)) continue;
    const d = fieldDiff('', v, k, contextual);
    if (d) out.push(d);
  }
  return out.sort(fieldOrder);
}

/** An object diff with Nomad's empty lists as they are here (see {@link wire} for the nulls). */
export function object(type: DiffType, name: string, fields: FieldDiff[], objects: ObjectDiff[] = []): ObjectDiff {
  return { Type: type, Name: name, Fields: fields, Objects: objects };
}

/**
 * A set of strings (`Datacenters`, `Tags`, `Specs`...): Added or Deleted members, Edited when
 * both, None (contextual, every member listed) when the sets are the same; undefined when both
 * are empty, or equal and not contextual.
 */
export function stringSetDiff(old: string[], neu: string[], name: string, contextual: boolean): ObjectDiff | undefined {
  const a = new Set(old);
  const b = new Set(neu);
  const same = a.size === b.size && [...a].every((x) => b.has(x));
  if (same && !contextual) return undefined;
  const fields: FieldDiff[] = [];
  let added = false;
  let removed = false;
  for (const k of a) {
    if (!b.has(k)) {
      fields.push(fieldDiff(k, '', name, contextual)!);
      removed = true;
    } else if (contextual) fields.push(fieldDiff(k, k, name, contextual)!);
  }
  for (const k of b) {
    if (a.has(k)) continue;
    fields.push(fieldDiff('', k, name, contextual)!);
    added = true;
  }
  fields.sort(fieldOrder);
  if (fields.length === 0) return undefined;
  return object(added && removed ? 'Edited' : added ? 'Added' : removed ? 'Deleted' : 'None', name, fields);
}

/**
 * A primitive object's diff (Nomad's `primitiveObjectDiff`): its type comes from its fields
 * alone, so an object whose fields did not change is undefined whatever else differs.
 */
export function primitiveObjectDiff(
  old: unknown,
  neu: unknown,
  schema: Schema,
  name: string,
  contextual: boolean,
  filter: readonly string[] = [],
): ObjectDiff | undefined {
  const fields = fieldDiffs(flatStruct(old, schema, filter), flatStruct(neu, schema, filter), contextual);
  const edited = fields.some((f) => f.Type === 'Edited');
  const added = fields.some((f) => f.Type === 'Added');
  const deleted = fields.some((f) => f.Type === 'Deleted');
  if (edited || (added && deleted)) return object('Edited', name, fields);
  if (added) return object('Added', name, fields);
  if (deleted) return object('Deleted', name, fields);
  return undefined;
}

/**
 * A set of primitive objects matched by `key` (Nomad's `primitiveObjectSetDiff`: a constraint by
 * its text, an artifact by its destination): one diff per changed, removed or added member.
 */
export function primitiveObjectSetDiff(
  old: unknown[],
  neu: unknown[],
  key: (o: unknown) => string,
  schema: Schema,
  name: string,
  contextual: boolean,
): ObjectDiff[] {
  const a = new Map(old.map((o) => [key(o), o]));
  const b = new Map(neu.map((o) => [key(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of a) {
    const d = primitiveObjectDiff(o, b.get(k), schema, name, contextual);
    if (d) out.push(d);
  }
  for (const [k, o] of b) {
    if (a.has(k)) continue;
    const d = primitiveObjectDiff(undefined, o, schema, name, contextual);
    if (d) out.push(d);
  }
  return sortObjects(out);
}

/**
 * The common shape of Nomad's per-block diffs: nothing when the two are equal, Added when only the
 * new one exists, Deleted when only the old, Edited otherwise; its fields are `flat`'s of each.
 * Returns the diff, or undefined when equal (the caller adds the nested objects).
 */
export function blockDiff(
  old: unknown,
  neu: unknown,
  name: string,
  flat: (o: unknown) => Flat | undefined,
  contextual: boolean,
  present: (o: unknown) => boolean = (o) => o !== undefined && o !== null,
): ObjectDiff | undefined {
  if (deepEqual(old, neu) || (!present(old) && !present(neu))) return undefined;
  const type: DiffType = !present(old) ? 'Added' : !present(neu) ? 'Deleted' : 'Edited';
  const fields = fieldDiffs(type === 'Added' ? undefined : flat(old), type === 'Deleted' ? undefined : flat(neu), contextual);
  return object(type, name, fields);
}

/** Nomad's JSON of a diff tree: empty lists as `null`, as Go sends its nil slices. */
export function wire<T>(v: T): T {
  if (Array.isArray(v)) return (v.length === 0 ? null : v.map(wire)) as T;
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'Updates' ? x : wire(x)])) as T;
  }
  return v;
}
