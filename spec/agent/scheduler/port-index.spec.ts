// Nomad's NetworkIndex on one node, in host mode: reserved and held ports, collisions between
// allocs, static ports in range and free, dynamic ports from the node's range (random picks, then
// a scan) never taken, reserved, held on the host or already in the same offer.
import { expect } from 'chai';
import type { Allocation, NetworkResource } from '../../../index.ts';
import { assignPorts, buildPortIndex, reservePorts } from '../../../agent/scheduler/ports.ts';
import { node } from './support.ts';

const holding = (id: string, ...ports: Array<[string, number]>) =>
  ({
    id,
    allocatedResources: { tasks: {}, shared: { diskMB: 0, ports: ports.map(([label, value]) => ({ label, value, to: value, hostIp: '127.0.0.1' })) } },
  }) as unknown as Allocation;
const net = (reserved: Array<[string, number | undefined, number?]>, dynamic: Array<[string, number?]> = []): NetworkResource[] => [
  { mode: 'host', reservedPorts: reserved.map(([label, value, to]) => ({ label, value, to })), dynamicPorts: dynamic.map(([label, to]) => ({ label, to })) },
];
/** A random source that returns these values in turn, then the last forever. */
const seq = (...xs: number[]) => {
  let i = 0;
  return () => xs[Math.min(i++, xs.length - 1)]!;
};

describe('scheduler: host ports', () => {
  describe('the index: what is taken', () => {
    it('reserved ports, and every port an alloc holds; defaults for the rest', () => {
      const { index, collision } = buildPortIndex(node({ reserved: { ports: [22] } }), [holding('a', ['http', 8080]), { id: 'b' } as Allocation]);
      expect({ ...index, used: [...index.used], busy: [...index.busy], collision }).to.deep.equal({
        used: [22, 8080],
        busy: [],
        min: 20000,
        max: 32000,
        hostIp: '127.0.0.1',
        collision: undefined,
      });
    });

    it('the node’s own range, address and held ports', () => {
      const { index } = buildPortIndex(node({ minDynamicPort: 100, maxDynamicPort: 200, hostIp: '10.0.0.5', portsInUse: [150] }), []);
      expect({ min: index.min, max: index.max, hostIp: index.hostIp, busy: [...index.busy], used: [...index.used] }).to.deep.equal({
        min: 100,
        max: 200,
        hostIp: '10.0.0.5',
        busy: [150],
        used: [],
      });
    });

    it('two allocs on one port: the first collision is named', () => {
      const { collision } = buildPortIndex(node({ reserved: { ports: [9000] } }), [
        holding('a', ['x', 8080]),
        holding('b', ['y', 8080]),
        holding('c', ['z', 9000]),
      ]);
      expect(collision).to.equal('collision when reserving port for alloc b: y=8080');
    });

    it('a reserved port an alloc holds is a collision', () => {
      expect(buildPortIndex(node({ reserved: { ports: [22] } }), [holding('a', ['ssh', 22])]).collision).to.equal(
        'collision when reserving port for alloc a: ssh=22',
      );
    });

    it('an offer’s ports, once reserved, are taken', () => {
      const { index } = buildPortIndex(node({ minDynamicPort: 100, maxDynamicPort: 101 }), []);
      reservePorts(index, [{ label: 'a', value: 100, to: 100, hostIp: '127.0.0.1' }]);
      expect(assignPorts(index, net([], [['d']]))).to.deep.equal({ ports: [{ label: 'd', value: 101, to: 101, hostIp: '127.0.0.1' }] });
    });
  });

  describe('static ports', () => {
    const idx = () => buildPortIndex(node({ reserved: { ports: [22] } }), [holding('a', ['http', 8080])]).index;
    const cases: Array<[string, NetworkResource[] | undefined, object]> = [
      ['no network: no ports', undefined, { ports: [] }],
      ['a free port, to itself', net([['web', 9090]]), { ports: [{ label: 'web', value: 9090, to: 9090, hostIp: '127.0.0.1' }] }],
      ['a free port mapped to another', net([['web', 9090, 80]]), { ports: [{ label: 'web', value: 9090, to: 80, hostIp: '127.0.0.1' }] }],
      ['the highest valid port', net([['web', 65535]]), { ports: [{ label: 'web', value: 65535, to: 65535, hostIp: '127.0.0.1' }] }],
      ['port 1', net([['web', 1]]), { ports: [{ label: 'web', value: 1, to: 1, hostIp: '127.0.0.1' }] }],
      ['65536 is out of range', net([['web', 65536]]), { error: 'invalid port 65536 (out of range)' }],
      ['0 is out of range', net([['web', 0]]), { error: 'invalid port 0 (out of range)' }],
      ['no value is 0', net([['web', undefined]]), { error: 'invalid port 0 (out of range)' }],
      ['a port an alloc holds', net([['web', 8080]]), { error: 'reserved port collision web=8080' }],
      ['a reserved port', net([['ssh', 22]]), { error: 'reserved port collision ssh=22' }],
      [
        'the same port twice in one group',
        net([
          ['a', 9090],
          ['b', 9090],
        ]),
        { error: 'reserved port collision b=9090' },
      ],
    ];
    for (const [name, networks, result] of cases) it(name, () => expect(assignPorts(idx(), networks)).to.deep.equal(result));
  });

  describe('dynamic ports', () => {
    const idx = (min: number, max: number, taken: number[] = [], busy: number[] = []) =>
      buildPortIndex(node({ minDynamicPort: min, maxDynamicPort: max, reserved: { ports: taken }, portsInUse: busy }), []).index;
    const values = (r: ReturnType<typeof assignPorts>) => ('ports' in r ? r.ports.map((p) => p.value) : r.error);
    // [name, range and taken, labels, random source, values]
    const cases: Array<[string, () => ReturnType<typeof idx>, number, (() => number) | undefined, number[] | string]> = [
      ['no random source: the lowest free, in turn', () => idx(100, 110, [100], [101]), 2, undefined, [102, 103]],
      ['no random source: the top of the range', () => idx(100, 102, [100, 101]), 1, undefined, [102]],
      ['a range of one port', () => idx(100, 100), 1, undefined, [100]],
      ['a range the wrong way round: none', () => idx(101, 100), 1, undefined, 'dynamic port selection failed'],
      ['every port taken or held', () => idx(100, 101, [100], [101]), 1, undefined, 'dynamic port selection failed'],
      ['random: the pick is min + ⌊r·span⌋', () => idx(100, 109), 2, seq(0.5, 0.95), [105, 109]],
      ['random: a taken pick is tried again', () => idx(100, 109, [105]), 1, seq(0.5, 0.5, 0.3), [103]],
      ['random: not the same port twice in one offer', () => idx(100, 109), 2, seq(0.5, 0.5, 0.7), [105, 107]],
      ['random: after 20 taken picks, a random one of the free ports', () => idx(100, 103, [100, 101]), 1, seq(...Array(20).fill(0), 0.6), [103]],
      ['random: the 20th pick still counts', () => idx(100, 103, [100]), 1, seq(...Array(19).fill(0), 0.5, 0.99), [102]],
      ['random: after 20, the lowest free when r is 0', () => idx(100, 103, [100]), 1, seq(...Array(20).fill(0), 0), [101]],
      ['random: the top of the range is free', () => idx(100, 103, [100, 101, 102]), 1, seq(...Array(20).fill(0), 0.5), [103]],
      ['random: nothing free', () => idx(100, 101, [100, 101]), 1, seq(0.5), 'dynamic port selection failed'],
    ];
    for (const [name, index, labels, random, want] of cases)
      it(name, () =>
        expect(
          values(
            assignPorts(
              index(),
              net(
                [],
                Array.from({ length: labels }, (_, i) => [`p${i}`]),
              ),
              random,
            ),
          ),
        ).to.deep.equal(want),
      );

    it('a dynamic port keeps its to, and takes the node’s address', () => {
      const index = buildPortIndex(node({ minDynamicPort: 100, maxDynamicPort: 100, hostIp: '10.1.1.1' }), []).index;
      expect(assignPorts(index, net([], [['admin', 9000]]))).to.deep.equal({ ports: [{ label: 'admin', value: 100, to: 9000, hostIp: '10.1.1.1' }] });
    });

    it('a static port in the same offer is no dynamic pick', () => {
      expect(values(assignPorts(idx(100, 101), net([['s', 100]], [['d']])))).to.deep.equal([100, 101]);
    });
  });
});
