/** No silent drops: a stanza berth does not run is refused by addAlloc, or, when the host asks, left out with a bus warning. */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { InvalidAllocationError, UnsupportedStanzaError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients } from '../../support/temp-client.ts';

/** A mock task with a vault block (as Nomad JSON's Vault would map). */
const withVault = (): Allocation => {
  const a = makeAlloc([mockTask('web', { run_for: '50ms' })], { jobType: 'batch' });
  (a.job.taskGroups[0]!.tasks[0] as unknown as Record<string, unknown>).vault = { policies: ['x'] };
  return a;
};

describe('client: stanzas berth does not run', function () {
  this.timeout(20_000);
  const newClient = useTempClients();

  it('are refused by addAlloc by name and path, nothing on disk', () => {
    const client = newClient();
    expect(() => client.addAlloc(withVault())).to.throw(UnsupportedStanzaError, 'vault is not supported by berth (job.taskGroups[0].tasks[0].vault)');
    expect(readdirSync(join(client.dataDir, 'alloc'))).to.deep.equal([]);
  });

  it("with unsupported: 'warn' the alloc runs without them and each is published on the bus", async () => {
    const client = newClient({ unsupported: 'warn' });
    const seen = record(client, 'alloc.unsupported');
    const alloc = withVault();
    const runner = client.addAlloc(alloc);
    expect(seen.items.map((m) => [m.allocId, m.stanza, m.path])).to.deep.equal([[alloc.id, 'vault', 'job.taskGroups[0].tasks[0].vault']]);
    expect(seen.items[0]!.message).to.equal('vault is not supported by berth (job.taskGroups[0].tasks[0].vault)');
    await runner.waitFor('stopping');
    expect(runner.alloc().clientStatus).to.equal('complete');
    expect(runner.alloc().job.taskGroups[0]!.tasks[0]).to.not.have.property('vault');
    seen.stop();
    // A driver berth lacks stays refused.
    const docker = makeAlloc([{ name: 'd', driver: 'podman', config: {} }]);
    expect(() => client.addAlloc(docker)).to.throw(UnsupportedStanzaError, /driver "podman"/);
  });

  it('an alloc reserving more cores than the node has is refused up front (#20 item 10)', () => {
    const client = newClient();
    const greedy = makeAlloc([mockTask('web', undefined, { resources: { cores: availableParallelism() + 1 } })]);
    expect(() => client.addAlloc(greedy)).to.throw(
      InvalidAllocationError,
      /resources\.cores: the group's tasks reserve \d+ cores up to here; this node has \d+/,
    );
    expect(readdirSync(join(client.dataDir, 'alloc'))).to.deep.equal([]);
  });
});
