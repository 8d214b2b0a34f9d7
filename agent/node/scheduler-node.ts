/**
 * The node as the scheduler sees it, from the node record the agent registered: a pure
 * projection (the host's ports in use are read by the caller).
 * @module
 */
import { parsePortRanges } from '../config/port-ranges.ts';
import type { SchedulerNode } from '../scheduler/index.ts';
import type { NodeRecord } from '../state/types.ts';

/**
 * `n` as the scheduler's node: its totals, its reserved part (its reserved host ports included),
 * its dynamic port range when set, `portsInUse` (the host's ports held now), the host's address
 * without its port or IPv6 brackets, and Nomad's defaults for what the record leaves out.
 */
export function schedulerNode(n: NodeRecord, portsInUse: number[]): SchedulerNode {
  return {
    id: n.id,
    name: n.name,
    datacenter: n.datacenter,
    resources: { cpuMHz: n.cpuMHz, memoryMB: n.memoryMB, diskMB: n.diskMB, cores: n.cores },
    reserved: {
      cpuMHz: n.reserved.cpu,
      memoryMB: n.reserved.memoryMB,
      diskMB: n.reserved.diskMB,
      ...(n.reservedPorts ? { ports: parsePortRanges(n.reservedPorts) } : {}),
    },
    ...(n.minDynamicPort !== undefined ? { minDynamicPort: n.minDynamicPort } : {}),
    ...(n.maxDynamicPort !== undefined ? { maxDynamicPort: n.maxDynamicPort } : {}),
    portsInUse,
    hostIp: n.httpAddr.replace(/:\d+$/, '').replace(/^\[|\]$/g, ''),
    attributes: n.attributes ?? {},
    meta: n.meta ?? {},
    nodeClass: n.nodeClass ?? '',
    nodePool: n.nodePool ?? 'default',
    drivers: n.drivers,
  };
}
