// The AllocMetric a placement leaves (`nomad alloc status -verbose`, a blocked eval's
// FailedTGAllocs): the node evaluated, filtered by a reason and its class, or exhausted in a
// dimension, with what each task asked of it (Nomad's ExhaustResources).
import { expect } from 'chai';
import type { TaskGroup } from '../../../index.ts';
import { evaluatedMetric, exhaustedMetric, filteredMetric } from '../../../agent/scheduler/metrics.ts';
import { node } from './support.ts';

const group: TaskGroup = {
  name: 'g',
  tasks: [
    { name: 'api', driver: 'raw_exec', config: {}, resources: { cpu: 700, memoryMB: 900 } },
    { name: 'sidecar', driver: 'raw_exec', config: {} }, // Nomad's defaults: 100 MHz, 300 MB
  ],
};
const base = { nodesEvaluated: 1, nodesFiltered: 0, nodesExhausted: 0, dimensionExhausted: {}, coalescedFailures: 0 };

describe('scheduler: placement metrics', () => {
  it('evaluated: one node, available in its datacenter', () => {
    expect(evaluatedMetric(node({ datacenter: 'eu-west' }))).to.deep.equal({ ...base, nodesAvailable: { 'eu-west': 1 } });
  });

  it('a node with no datacenter is in dc1', () => {
    expect(evaluatedMetric(node({ datacenter: undefined })).nodesAvailable).to.deep.equal({ dc1: 1 });
  });

  describe('filtered: by reason, and by class when the node has one', () => {
    const cases: Array<[string, string | undefined, object]> = [
      ['with a class', 'gpu', { classFiltered: { gpu: 1 } }],
      ['without one', undefined, {}],
      ['an empty class is none', '', {}],
    ];
    for (const [name, nodeClass, byClass] of cases)
      it(name, () =>
        expect(filteredMetric(node({ nodeClass }), '${attr.kernel.name} = windows')).to.deep.equal({
          ...base,
          nodesAvailable: { dc1: 1 },
          nodesFiltered: 1,
          ...byClass,
          constraintFiltered: { '${attr.kernel.name} = windows': 1 },
        }),
      );
  });

  describe('exhausted: the dimension, the class, and per task what it asked of cpu and memory', () => {
    // [dimension, node class, per task asks]
    const cases: Array<[string, string | undefined, Record<string, { cpu: number; memoryMB: number }>]> = [
      ['cpu', 'gpu', { api: { cpu: 700, memoryMB: 0 }, sidecar: { cpu: 100, memoryMB: 0 } }],
      ['memory', undefined, { api: { cpu: 0, memoryMB: 900 }, sidecar: { cpu: 0, memoryMB: 300 } }],
      ['disk', undefined, { api: { cpu: 0, memoryMB: 0 }, sidecar: { cpu: 0, memoryMB: 0 } }],
      ['cores', 'gpu', { api: { cpu: 0, memoryMB: 0 }, sidecar: { cpu: 0, memoryMB: 0 } }],
    ];
    for (const [dimension, nodeClass, asks] of cases)
      it(`${dimension}${nodeClass ? `, class ${nodeClass}` : ''}`, () =>
        expect(exhaustedMetric(node({ nodeClass }), dimension, group)).to.deep.equal({
          ...base,
          nodesAvailable: { dc1: 1 },
          nodesExhausted: 1,
          dimensionExhausted: { [dimension]: 1 },
          ...(nodeClass ? { classExhausted: { [nodeClass]: 1 } } : {}),
          resourcesExhausted: asks,
        }));
  });
});
