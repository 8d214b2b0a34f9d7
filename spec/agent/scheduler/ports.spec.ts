import { expect } from 'chai';
import type { NetworkResource } from '../../../index.ts';
import { job, node, World } from './support.ts';

const net = (reserved: Array<[string, number, number?]>, dynamic: Array<[string, number?]> = []): { networks: NetworkResource[] } => ({
  networks: [
    { mode: 'host', reservedPorts: reserved.map(([label, value, to]) => ({ label, value, to })), dynamicPorts: dynamic.map(([label, to]) => ({ label, to })) },
  ],
});

/** A seeded generator: the simulator's kind of randomness, handed in. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('scheduler: ports (host networking)', () => {
  it('dynamic ports come from the node range; two allocs never get the same one', () => {
    const w = new World(node({ minDynamicPort: 20000, maxDynamicPort: 20009 }));
    const plan = w.register(job('web', { count: 5, group: net([], [['http'], ['admin', 9000]]) }));
    const ports = plan.place.flatMap((a) => a.allocatedResources!.shared.ports);
    expect(ports).to.have.length(10);
    expect(new Set(ports.map((p) => p.value)).size).to.equal(10);
    for (const p of ports) expect(p.value).to.be.within(20000, 20009);
    const admin = ports.filter((p) => p.label === 'admin');
    for (const p of admin) expect(p.to).to.equal(9000);
    for (const p of ports.filter((x) => x.label === 'http')) expect(p.to).to.equal(p.value);
    for (const p of ports) expect(p.hostIp).to.equal('127.0.0.1');
    // The range is full now: the next alloc is not placed, and says why as Nomad does.
    const full = w.register(job('more', { group: net([], [['http']]) }));
    expect(full.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ 'network: dynamic port selection failed': 1 });
  });

  it('with randomness handed in, picks are spread yet still unique over many allocs and evals', () => {
    const w = new World(node({ minDynamicPort: 21000, maxDynamicPort: 21199, resources: { cpuMHz: 100_000, memoryMB: 100_000, diskMB: 100_000 } }));
    const random = lcg(42);
    const taken: number[] = [];
    for (let i = 0; i < 10; i++) {
      w.jobs.push(job(`j${i}`, { count: 9, group: net([], [['a'], ['b']]) }));
      const ev = {
        id: `e${i}`,
        jobId: `j${i}`,
        type: 'service' as const,
        priority: 50,
        triggeredBy: 'job-register' as const,
        status: 'pending' as const,
        createTime: 0,
        modifyTime: 0,
      };
      taken.push(...w.process(ev, { random }).place.flatMap((a) => a.allocatedResources!.shared.ports.map((p) => p.value)));
    }
    expect(taken).to.have.length(180);
    expect(new Set(taken).size).to.equal(180);
    expect(taken.slice(0, 5)).to.not.deep.equal([21000, 21001, 21002, 21003, 21004]);
  });

  it('a dynamic port never takes a reserved port of the node or a static port of the same alloc', () => {
    const w = new World(node({ minDynamicPort: 20000, maxDynamicPort: 20002, reserved: { ports: [20000] } }));
    const plan = w.register(job('web', { group: net([['fixed', 20001]], [['http']]) }));
    expect(plan.place[0].allocatedResources!.shared.ports.map((p) => [p.label, p.value])).to.deep.equal([
      ['fixed', 20001],
      ['http', 20002],
    ]);
  });

  describe('static ports are checked', () => {
    const cases: Array<{ name: string; first?: number; reserved?: number[]; ask: number; reason?: string }> = [
      { name: 'a free static port', ask: 8080 },
      { name: "another alloc's static port", first: 8080, ask: 8080, reason: 'network: reserved port collision http=8080' },
      { name: "the node's reserved port", reserved: [22, 8080], ask: 8080, reason: 'network: reserved port collision http=8080' },
      { name: 'a port out of range', ask: 70000, reason: 'network: invalid port 70000 (out of range)' },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.reason ?? 'placed'}`, () => {
        const w = new World(node({ reserved: { ports: c.reserved } }));
        if (c.first) expect(w.register(job('first', { group: net([['http', c.first]]) })).place).to.have.length(1);
        const plan = w.register(job('second', { group: net([['http', c.ask, 80]]) }));
        if (!c.reason) {
          expect(plan.place[0].allocatedResources!.shared.ports).to.deep.equal([{ label: 'http', value: c.ask, to: 80, hostIp: '127.0.0.1' }]);
          return;
        }
        expect(plan.place).to.have.length(0);
        expect(plan.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ [c.reason]: 1 });
      });
    }
    it('two static ports of one alloc on the same host port collide', () => {
      const plan = new World().register(
        job('web', {
          group: net([
            ['a', 8080],
            ['b', 8080],
          ]),
        }),
      );
      expect(plan.place).to.have.length(0);
      expect(plan.failedTgAllocs.g.dimensionExhausted).to.deep.equal({ 'network: reserved port collision b=8080': 1 });
    });
    it('two allocs of one group asking the same static port: the second is queued', () => {
      const plan = new World().register(job('web', { count: 2, group: net([['http', 8080]]) }));
      expect(plan.place).to.have.length(1);
      expect(plan.queued.g).to.equal(1);
    });
  });

  it('a stopped alloc gives its ports back; an in-place update keeps them', () => {
    const w = new World();
    const first = w.register(job('web', { group: net([], [['http']]) })).place[0];
    const port = first.allocatedResources!.shared.ports[0].value;
    const inPlace = w.register({ ...job('web', { version: 1, group: { ...net([], [['http']]), shutdownDelayMs: 5000 } }) });
    expect(inPlace.inPlace.map((a) => a.allocatedResources!.shared.ports[0].value)).to.deep.equal([port]);
    w.register({ ...job('web', { version: 2 }), stop: true });
    const other = w.register(job('other', { group: net([], [['http']]) }));
    expect(other.place[0].allocatedResources!.shared.ports[0].value).to.equal(port);
  });
});
