/**
 * Networks and services, as Nomad diffs them: networks as a set (any change is a Deleted and an
 * Added network, since a network has no identity but its content), ports by label, services
 * matched by name, port label and position, checks by name.
 * @module
 */
import { asList, asObj, asStrings, canonical, flatAny, flatStruct, type Flat } from './flat.ts';
import { blockDiff, primitiveObjectDiff, sortObjects, stringSetDiff } from './fields.ts';
import { CHECK, CHECK_RESTART, NETWORK, PORT, SERVICE } from './schema.ts';
import type { ObjectDiff } from './types.ts';

const NETWORK_FILTER = ['Device', 'CIDR', 'IP', 'MBits'];

/** A set of networks (a group's, or a task's resources'). */
export function networkDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const a = new Map(asList(old).map((n) => [canonical(n), n]));
  const b = new Map(asList(neu).map((n) => [canonical(n), n]));
  const out: ObjectDiff[] = [];
  for (const [k, n] of a) if (!b.has(k)) push(out, networkDiff(n, undefined, contextual));
  for (const [k, n] of b) if (!a.has(k)) push(out, networkDiff(undefined, n, contextual));
  return sortObjects(out);
}

function networkDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Network', (n) => flatStruct(n, NETWORK, NETWORK_FILTER), contextual);
  if (!d) return undefined;
  const o = asObj(old) ?? {};
  const n = asObj(neu) ?? {};
  d.Objects!.push(...portDiffs(o.ReservedPorts, n.ReservedPorts, false, contextual), ...portDiffs(o.DynamicPorts, n.DynamicPorts, true, contextual));
  push(d.Objects!, dnsDiff(o.DNS, n.DNS, contextual));
  return d;
}

/** Static or dynamic ports, matched by label (a dynamic port's picked value is not compared). */
function portDiffs(old: unknown, neu: unknown, dynamic: boolean, contextual: boolean): ObjectDiff[] {
  const byLabel = (l: unknown) => new Map(asList(l).map((p) => [String(asObj(p)?.Label ?? ''), p]));
  const a = byLabel(old);
  const b = byLabel(neu);
  const name = dynamic ? 'Dynamic Port' : 'Static Port';
  const filter = dynamic ? ['Value', 'IgnoreCollision'] : [];
  const out: ObjectDiff[] = [];
  for (const [label, p] of a) push(out, primitiveObjectDiff(p, b.get(label), PORT, name, contextual, filter));
  for (const [label, p] of b) if (!a.has(label)) push(out, primitiveObjectDiff(undefined, p, PORT, name, contextual, filter));
  return sortObjects(out);
}

function dnsDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const flat = (d: unknown): Flat => {
    const o = asObj(d) ?? {};
    const m: Flat = new Map();
    for (const k of ['Servers', 'Searches', 'Options']) {
      const list = asStrings(o[k]);
      if (list.length) m.set(k, list.join(','));
    }
    return m;
  };
  return blockDiff(old, neu, 'DNS', flat, contextual);
}

/** A group's or a task's services. */
export function serviceDiffs(old: unknown, neu: unknown, contextual: boolean): ObjectDiff[] {
  const a = asList(old);
  const b = asList(neu);
  if (a.length === 1 && b.length === 1) {
    const d = serviceDiff(a[0], b[0], contextual);
    return d ? [d] : [];
  }
  const taken = b.map(() => false);
  const out: ObjectDiff[] = [];
  a.forEach((s, i) => {
    const j = serviceMatch(asObj(s) ?? {}, i, b, taken);
    if (j < 0) return push(out, serviceDiff(s, undefined, contextual));
    taken[j] = true;
    push(out, serviceDiff(s, b[j], contextual));
  });
  b.forEach((s, j) => {
    if (!taken[j]) push(out, serviceDiff(undefined, s, contextual));
  });
  return sortObjects(out);
}

/** Nomad's match of a service among the unmatched new ones: name 3, port label 2, position 1; above 2 wins. */
function serviceMatch(s: Record<string, unknown>, index: number, list: unknown[], taken: boolean[]): number {
  let best = 0;
  let match = -1;
  list.forEach((other, i) => {
    if (taken[i]) return;
    const o = asObj(other) ?? {};
    const score = (i === index ? 1 : 0) + (s.PortLabel === o.PortLabel ? 2 : 0) + (s.Name === o.Name ? 3 : 0);
    if (score > 2 && score > best) {
      best = score;
      match = i;
    }
  });
  return match;
}

function serviceDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Service', (s) => flatStruct(s, SERVICE), contextual);
  if (!d) return undefined;
  const o = asObj(old) ?? {};
  const n = asObj(neu) ?? {};
  push(d.Objects!, stringSetDiff(asStrings(o.CanaryTags), asStrings(n.CanaryTags), 'CanaryTags', contextual));
  push(d.Objects!, stringSetDiff(asStrings(o.Tags), asStrings(n.Tags), 'Tags', contextual));
  d.Objects!.push(...checkDiffs(checksOf(o), checksOf(n), contextual));
  return d;
}

/** A service's checks, each with the service's `check_restart` under its own (as the API merges them). */
function checksOf(service: Record<string, unknown>): unknown[] {
  const outer = asObj(service.CheckRestart);
  return asList(service.Checks).map((c) => {
    const check = asObj(c) ?? {};
    return outer ? { ...check, CheckRestart: { ...outer, ...asObj(check.CheckRestart) } } : check;
  });
}

function checkDiffs(old: unknown[], neu: unknown[], contextual: boolean): ObjectDiff[] {
  const byName = (l: unknown[]) => new Map(l.map((c) => [String(asObj(c)?.Name ?? ''), c]));
  const a = byName(old);
  const b = byName(neu);
  const out: ObjectDiff[] = [];
  for (const [name, c] of a) push(out, checkDiff(c, b.get(name), contextual));
  for (const [name, c] of b) if (!a.has(name)) push(out, checkDiff(undefined, c, contextual));
  return sortObjects(out);
}

function checkDiff(old: unknown, neu: unknown, contextual: boolean): ObjectDiff | undefined {
  const d = blockDiff(old, neu, 'Check', (c) => flatStruct(c, CHECK), contextual);
  if (!d) return undefined;
  const o = asObj(old) ?? {};
  const n = asObj(neu) ?? {};
  const nonEmpty = (h: unknown) => Object.keys(asObj(h) ?? {}).length > 0;
  push(d.Objects!, blockDiff(o.Header, n.Header, 'Header', flatAny, contextual, nonEmpty));
  push(
    d.Objects!,
    blockDiff(o.CheckRestart, n.CheckRestart, 'CheckRestart', (r) => flatStruct(r, CHECK_RESTART), contextual),
  );
  return d;
}

/** Appends `d` when there is one. */
export function push(list: ObjectDiff[], d: ObjectDiff | undefined): void {
  if (d) list.push(d);
}
