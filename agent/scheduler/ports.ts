/**
 * Host ports (Nomad's `NetworkIndex` in host mode): which ports are taken on the node, and the
 * ports a group's `network` block gets. Static ports are checked; dynamic ports are picked from
 * the node's range, never one that is taken, reserved, held on the host, or already in the same offer.
 * @module
 */
import type { AllocatedPort, Allocation, NetworkResource } from '../../index.ts';
import type { SchedulerNode } from './types.ts';

/** Nomad's default dynamic port range. */
export const DEFAULT_MIN_DYNAMIC_PORT = 20000;
/** Nomad's default dynamic port range (inclusive). */
export const DEFAULT_MAX_DYNAMIC_PORT = 32000;
/** Random picks before Nomad falls back to scanning the range. */
const RANDOM_PORT_ATTEMPTS = 20;
const MAX_VALID_PORT = 65536;

/** The ports taken on the node. */
export interface PortIndex {
  used: Set<number>;
  /** Held on the host by something else (a listener): not taken by an alloc, but never a dynamic pick. */
  busy: Set<number>;
  min: number;
  max: number;
  hostIp: string;
}

/**
 * The node's reserved ports plus every port the given allocs hold. `collision` is set when two of
 * them already claim the same port (Nomad then refuses every placement on the node).
 */
export function buildPortIndex(node: SchedulerNode, allocs: Allocation[]): { index: PortIndex; collision?: string } {
  const used = new Set<number>(node.reserved?.ports ?? []);
  let collision: string | undefined;
  for (const alloc of allocs) {
    for (const port of alloc.allocatedResources?.shared.ports ?? []) {
      if (used.has(port.value)) collision ??= `collision when reserving port for alloc ${alloc.id}: ${port.label}=${port.value}`;
      used.add(port.value);
    }
  }
  const index = {
    used,
    busy: new Set(node.portsInUse ?? []),
    min: node.minDynamicPort ?? DEFAULT_MIN_DYNAMIC_PORT,
    max: node.maxDynamicPort ?? DEFAULT_MAX_DYNAMIC_PORT,
    hostIp: node.hostIp ?? '127.0.0.1',
  };
  return { index, collision };
}

/** Mark an offer's ports taken. */
export function reservePorts(index: PortIndex, ports: AllocatedPort[]): void {
  for (const p of ports) index.used.add(p.value);
}

/**
 * Nomad's `AssignPorts` for the group's first network: static ports first (each must be free),
 * then one dynamic port per label. The error text is Nomad's ("reserved port collision http=8080",
 * "dynamic port selection failed"); the scheduler reports it as `network: <error>`.
 */
export function assignPorts(index: PortIndex, networks: NetworkResource[] | undefined, random?: () => number): { ports: AllocatedPort[] } | { error: string } {
  const ask = networks?.[0];
  if (!ask) return { ports: [] };
  const ports: AllocatedPort[] = [];
  const inOffer = new Set<number>();
  for (const port of ask.reservedPorts) {
    const value = port.value ?? 0;
    if (value <= 0 || value >= MAX_VALID_PORT) return { error: `invalid port ${value} (out of range)` };
    if (index.used.has(value) || inOffer.has(value)) return { error: `reserved port collision ${port.label}=${value}` };
    ports.push({ label: port.label, value, to: port.to ?? value, hostIp: index.hostIp });
    inOffer.add(value);
  }
  for (const port of ask.dynamicPorts) {
    const value = pickDynamicPort(index, inOffer, random);
    if (value === undefined) return { error: 'dynamic port selection failed' };
    ports.push({ label: port.label, value, to: port.to ?? value, hostIp: index.hostIp });
    inOffer.add(value);
  }
  return { ports };
}

/** Random tries, then a scan of the range (Nomad's stochastic then precise selection). */
function pickDynamicPort(index: PortIndex, inOffer: Set<number>, random?: () => number): number | undefined {
  const free = (p: number) => !index.used.has(p) && !index.busy.has(p) && !inOffer.has(p);
  const span = index.max - index.min + 1;
  if (span <= 0) return undefined;
  if (random) {
    for (let i = 0; i < RANDOM_PORT_ATTEMPTS; i++) {
      const p = index.min + Math.floor(random() * span);
      if (free(p)) return p;
    }
  }
  if (!random) {
    for (let p = index.min; p <= index.max; p++) if (free(p)) return p;
    return undefined;
  }
  const available: number[] = [];
  for (let p = index.min; p <= index.max; p++) if (free(p)) available.push(p);
  if (available.length === 0) return undefined;
  return available[Math.floor(random() * available.length)];
}
