/**
 * A `service` block to its catalog entry (`actors/services/registrations.ts`): Nomad's service
 * id, and the address and port each `address_mode` gives on host networking.
 */
import { expect } from 'chai';
import type { Allocation, Service } from '../../../model/types.ts';
import { InvalidServiceError } from '../../../actors/services/errors.ts';
import { registrationFor, resolvePort, serviceId } from '../../../actors/services/registrations.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

describe('services: the catalog entry of a service block', () => {
  const alloc: Allocation = {
    ...makeAlloc([mockTask('web')]),
    allocatedResources: { shared: { ports: [{ label: 'http', value: 23456, to: 8080, hostIp: '10.0.0.5' }] } } as unknown as Allocation['allocatedResources'],
  };
  const node = { nodeId: 'n1', datacenter: 'dc1', address: '127.0.0.1' };
  const svc = (over: Partial<Service>): Service => ({ name: 'api', portLabel: 'http', ...over }) as Service;

  it("ids are Nomad's: _nomad-task-<alloc>-<task or group-<group>>-<name>-<port label>", () => {
    expect(serviceId('a1', { task: 'web', group: 'g' }, svc({}))).to.equal('_nomad-task-a1-web-api-http');
    expect(serviceId('a1', { group: 'g' }, svc({}))).to.equal('_nomad-task-a1-group-g-api-http');
  });

  it("address_mode auto and host give the host address and port; alloc and driver the port's to; numbers, no port and address as given", () => {
    for (const mode of [undefined, 'auto', 'host'] as const)
      expect(resolvePort(alloc, 'http', mode, node.address)).to.deep.equal({ address: '10.0.0.5', port: 23456 });
    for (const mode of ['alloc', 'driver'] as const) expect(resolvePort(alloc, 'http', mode, node.address)).to.deep.equal({ address: '10.0.0.5', port: 8080 });
    expect(resolvePort(alloc, '9000', 'auto', node.address)).to.deep.equal({ address: '127.0.0.1', port: 9000 });
    expect(resolvePort(alloc, undefined, 'auto', node.address)).to.deep.equal({ address: '127.0.0.1', port: 0 });
    expect(registrationFor(alloc, svc({ address: 'api.internal', tags: ['v1'] }), { task: 'web', group: 'web' }, node)).to.deep.include({
      serviceName: 'api',
      address: 'api.internal',
      port: 23456,
      nodeId: 'n1',
      datacenter: 'dc1',
      tags: ['v1'],
    });
    expect(() => resolvePort(alloc, 'grpc', 'auto', node.address)).to.throw(InvalidServiceError, 'port label "grpc"');
  });
});
