import { expect } from 'chai';
import { flush } from '../support/charts.ts';
import { stopTaskHarnesses, taskHarness, taskHandle } from '../support/task-harness.ts';

/** The task chart's guards that only a run through the chart can tell apart. */
describe('task chart guards', () => {
  afterEach(stopTaskHarnesses);

  it('killSkipsDelay: in the shutdown delay, a second kill without a skip waits on; one with a skip kills at once', async () => {
    const h = taskHarness({ shutdownDelayMs: 1000 });
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
    await flush();
    h.send({ type: 'kill', time: 2 });
    await flush();
    expect(h.value()).to.equal('shutdownDelay');
    h.send({ type: 'kill', time: 3 });
    await flush();
    expect(h.value()).to.equal('shutdownDelay');
    expect(h.kill.calls).to.have.length(0);
    h.send({ type: 'kill', time: 4, skipShutdownDelay: true });
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.kill.calls).to.have.length(1);
  });
});
