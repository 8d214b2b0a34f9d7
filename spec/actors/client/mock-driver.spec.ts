import { expect } from 'chai';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

describe('client: mock driver failure and recovery', () => {
  const newClient = useTempClients();

  it('plugin_exit_after: the runner recovers the task and keeps waiting; one Terminated, at run_for', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '300ms', plugin_exit_after: '60ms', exit_code: 0 })], { jobType: 'batch' });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    const st = r.alloc().taskStates!.web!;
    const terminated = st.events.filter((e) => e.type === 'Terminated');
    expect(terminated).to.have.length(1);
    expect(terminated[0]!.details).not.to.have.property('exit_message'); // not the plugin shutdown
    expect(st.restarts).to.equal(0);
    expect(st.finishedAt! - st.startedAt!).to.be.at.least(280); // ran through four plugin exits
  });
});
