/**
 * From a `service` block and the alloc's allocated ports to a catalog entry (pure): its id,
 * address and port as Nomad's native provider computes them, and its checks resolved to where
 * they probe.
 *
 * Address and port, host networking:
 * | address_mode   | address                        | port                               |
 * |----------------|--------------------------------|------------------------------------|
 * | auto, host     | the port's host IP             | the host port                      |
 * | alloc, driver  | the port's host IP             | the port's `to` (else the host port) |
 * A numeric `port` is taken as is (on the node address); `address` overrides the address.
 * @module
 */
import type { Allocation, Service, ServiceCheck, ServiceRegistration } from '../../model/types.ts';
import { InvalidServiceError } from './errors.ts';

/** Address and port a service (or check) resolves to. */
export interface Endpoint {
  address: string;
  port: number;
}

/** Nomad's service id: `_nomad-task-<alloc>-<task|group-<group>>-<service>-<port label>`. */
export function serviceId(allocId: string, owner: { task?: string; group: string }, service: Service): string {
  const who = owner.task ?? `group-${owner.group}`;
  return `_nomad-task-${allocId}-${who}-${service.name}-${service.portLabel ?? ''}`;
}

/** Where a port label (or number) leads for this alloc. */
export function resolvePort(alloc: Allocation, label: string | undefined, addressMode: Service['addressMode'], nodeAddress: string): Endpoint {
  if (!label) return { address: nodeAddress, port: 0 };
  if (/^\d+$/.test(label)) return { address: nodeAddress, port: Number(label) };
  const p = alloc.allocatedResources?.shared.ports.find((x) => x.label === label);
  if (!p) throw new InvalidServiceError(`port label ${JSON.stringify(label)} is not one of the alloc's allocated ports`);
  const inside = addressMode === 'alloc' || addressMode === 'driver';
  return { address: p.hostIp, port: inside && p.to > 0 ? p.to : p.value };
}

/** The catalog entry for one service of this alloc. */
export function registrationFor(
  alloc: Allocation,
  service: Service,
  owner: { task?: string; group: string },
  node: { nodeId: string; datacenter: string; address: string },
): Omit<ServiceRegistration, 'createIndex' | 'modifyIndex'> {
  const ep = resolvePort(alloc, service.portLabel, service.addressMode, node.address);
  return {
    id: serviceId(alloc.id, owner, service),
    serviceName: service.name,
    namespace: alloc.namespace ?? alloc.job.namespace ?? 'default',
    nodeId: node.nodeId,
    datacenter: node.datacenter,
    jobId: alloc.jobId,
    allocId: alloc.id,
    tags: [...(service.tags ?? [])],
    address: service.address ?? ep.address,
    port: ep.port,
  };
}

/** Where a check probes: its own port label, else the service's; the service's address. */
export function checkEndpoint(alloc: Allocation, service: Service, check: ServiceCheck, registered: Endpoint, nodeAddress: string): Endpoint {
  if (!check.portLabel) return registered;
  return resolvePort(alloc, check.portLabel, service.addressMode, nodeAddress);
}

/** A check's name: given, else Nomad's `service: "<name>" check`. */
export const checkName = (service: Service, check: ServiceCheck) => check.name ?? `service: ${JSON.stringify(service.name)} check`;
