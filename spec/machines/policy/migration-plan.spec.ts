import { expect } from 'chai';
import { migrationPlan, type MigrationFacts, type MigrationPlan } from '../../../machines/policy/migration-plan.ts';

describe('policy: the migration plan (who is local, what moves)', () => {
  const base: MigrationFacts = { previousAllocId: 'p', restored: false, disk: { sticky: true }, previousIsLocal: true };
  const table: Array<[string, Partial<MigrationFacts>, MigrationPlan]> = [
    ['no previous alloc', { previousAllocId: undefined }, { kind: 'none' }],
    ['restored past its wait (the first life migrated)', { restored: true }, { kind: 'none' }],
    ['neither sticky nor migrate', { disk: {} }, { kind: 'skip', previousAllocId: 'p', reason: 'ephemeral disk is neither sticky nor migrate' }],
    ['sticky, previous local: a local move', {}, { kind: 'local', previousAllocId: 'p' }],
    ['migrate alone implies sticky (Nomad #16826)', { disk: { migrate: true } }, { kind: 'local', previousAllocId: 'p' }],
    [
      'sticky only, previous elsewhere',
      { previousIsLocal: false },
      { kind: 'skip', previousAllocId: 'p', reason: 'previous allocation is not on this node and migrate is not set' },
    ],
    [
      'migrate, previous elsewhere, node unknown',
      { previousIsLocal: false, disk: { migrate: true } },
      { kind: 'skip', previousAllocId: 'p', reason: 'previous allocation node is unknown (garbage collected or refused)' },
    ],
    [
      'migrate, previous on a known node: a remote stream',
      { previousIsLocal: false, disk: { migrate: true }, previousNodeId: 'n2' },
      { kind: 'remote', previousAllocId: 'p', nodeId: 'n2' },
    ],
  ];
  for (const [name, over, want] of table) it(name, () => expect(migrationPlan({ ...base, ...over })).to.deep.equal(want));
});
