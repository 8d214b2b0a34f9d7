/** The node as the scheduler sees it, projected from the registered node record (pure). */
import { expect } from 'chai';
import { schedulerNode } from '../../../agent/node/scheduler-node.ts';
import { nodeRecord } from '../../support/server-half.ts';

describe('agent: the scheduler node (pure)', () => {
  it("a bare record: its totals and reserved part, the host's ports as given, Nomad's defaults for the rest", () => {
    const n = { ...nodeRecord(3), reserved: { cpu: 100, memoryMB: 256, diskMB: 1024 } };
    expect(schedulerNode(n, [22, 4646])).to.deep.equal({
      id: n.id,
      name: 'spec-node',
      datacenter: 'dc1',
      resources: { cpuMHz: 4000, memoryMB: 4096, diskMB: 100 * 1024, cores: 2 },
      reserved: { cpuMHz: 100, memoryMB: 256, diskMB: 1024 },
      portsInUse: [22, 4646],
      hostIp: '127.0.0.1',
      attributes: {},
      meta: {},
      nodeClass: '',
      nodePool: 'default',
      drivers: ['mock_driver'],
    });
  });

  it('reserved host ports as a list, the dynamic range, class, pool, attributes and meta when the record has them', () => {
    const n = {
      ...nodeRecord(3),
      reservedPorts: '22,80-82',
      minDynamicPort: 30000,
      maxDynamicPort: 30100,
      nodeClass: 'edge',
      nodePool: 'gpu',
      attributes: { 'kernel.name': 'linux' },
      meta: { rack: 'r1' },
    };
    const s = schedulerNode(n, []);
    expect(s.reserved).to.deep.equal({ cpuMHz: 0, memoryMB: 0, diskMB: 0, ports: [22, 80, 81, 82] });
    expect([s.minDynamicPort, s.maxDynamicPort, s.nodeClass, s.nodePool]).to.deep.equal([30000, 30100, 'edge', 'gpu']);
    expect([s.attributes, s.meta]).to.deep.equal([{ 'kernel.name': 'linux' }, { rack: 'r1' }]);
    // A range of 0 is a range too (only an unset one is left out).
    expect(schedulerNode({ ...nodeRecord(3), minDynamicPort: 0, maxDynamicPort: 0 }, [])).to.include({ minDynamicPort: 0, maxDynamicPort: 0 });
    expect(schedulerNode(nodeRecord(3), [])).to.not.have.any.keys('minDynamicPort', 'maxDynamicPort');
  });

  it("the host's address without its port, IPv6 brackets dropped; a bare address as it is", () => {
    const ip = (httpAddr: string) => schedulerNode({ ...nodeRecord(1), httpAddr }, []).hostIp;
    expect(ip('10.1.2.3:4646')).to.equal('10.1.2.3');
    expect(ip('[::1]:4646')).to.equal('::1');
    expect(ip('[fe80::1]:80')).to.equal('fe80::1');
    expect(ip('10.1.2.3')).to.equal('10.1.2.3');
    expect(ip('host:4646x')).to.equal('host:4646x');
    expect(ip('host:12345')).to.equal('host');
  });
});
