/**
 * An alloc the client refused (Nomad's client `makeFailedAlloc`): failed at once with the
 * client's reason, and a `Setup Failure` event on each task of its group, so `alloc status`
 * says why; what a task already had (restarts, start and finish times, events) is kept.
 */
import { expect } from 'chai';
import { refusedAlloc, refusedDescription } from '../../../agent/broker/refused.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

describe('agent broker: an alloc the client refused', () => {
  it('fails with Nomad’s description and a Setup Failure on every task of its group', () => {
    const a = makeAlloc([mockTask('web'), mockTask('side')]);
    const r = refusedAlloc(a, 'driver "x" is not enabled', 1000);
    expect(r.clientStatus).to.equal('failed');
    expect(r.clientDescription).to.equal('Unable to add allocation due to error: driver "x" is not enabled');
    expect(refusedDescription('r')).to.equal('Unable to add allocation due to error: r');
    expect(Object.keys(r.taskStates!)).to.deep.equal(['web', 'side']);
    for (const name of ['web', 'side']) {
      const s = r.taskStates![name]!;
      expect(s).to.deep.include({ state: 'dead', failed: true, restarts: 0, finishedAt: 1000 });
      expect(s).to.not.have.property('startedAt');
      expect(s.events).to.have.length(1);
      expect(s.events[0]).to.deep.include({ type: 'Setup Failure', time: 1000, details: { setup_error: 'driver "x" is not enabled', fails_task: 'true' } });
    }
    expect(a.clientStatus, 'the alloc given is not changed').to.equal('pending');
  });

  it('keeps what a task already had and adds the event after its others', () => {
    const earlier = { type: 'Received', time: 5, displayMessage: 'Task received by client', details: {} };
    const a = makeAlloc([mockTask('web')], {
      taskStates: {
        web: { state: 'pending', failed: false, restarts: 2, startedAt: 10, finishedAt: 20, events: [earlier] },
        gone: { state: 'dead', failed: false, restarts: 0, events: [] },
      },
    });
    const r = refusedAlloc(a, 'no', 1000);
    expect(r.taskStates!.web).to.deep.include({ restarts: 2, startedAt: 10, finishedAt: 20 });
    expect(r.taskStates!.web!.events.map((e) => e.type)).to.deep.equal(['Received', 'Setup Failure']);
    expect(r.taskStates!.gone, 'a state of no task of the group is left as it was').to.deep.equal(a.taskStates!.gone);
  });

  it('an alloc whose group is not in its job fails with no task state made', () => {
    const a = makeAlloc([mockTask('web')], { taskGroup: 'other' });
    const r = refusedAlloc(a, 'no', 1000);
    expect([r.clientStatus, r.taskStates]).to.deep.equal(['failed', {}]);
  });
});
