/**
 * The evaluation chart (`eval-<id>`, what the viewer shows of each pass; agent/broker/eval-machine.ts)
 * driven with `createActor`, its two effects provided as the broker provides them: scheduling
 * ends complete with the outcome line; a pass that fails records the failure, with the error's
 * text (whatever was thrown), and ends failed even when the record fails too.
 */
import { expect } from 'chai';
import { createActor, fromPromise, toPromise } from 'xstate';
import { evalMachine } from '../../../agent/broker/eval-machine.ts';

const INPUT = { evalId: 'e1', jobId: 'web', triggeredBy: 'job-register' };

/** The chart with `schedule` and `recordFailure` as given; `recorded` collects what each failure record got. */
function chart(schedule: () => Promise<string>, recordFailure: () => Promise<string> = async () => '') {
  const recorded: { evalId: string; error?: string }[] = [];
  const machine = evalMachine.provide({
    actors: {
      schedule: fromPromise(schedule),
      recordFailure: fromPromise(async ({ input }) => (recorded.push(input), recordFailure())),
    },
  });
  return { actor: createActor(machine, { input: INPUT }), recorded };
}

describe('agent eval broker: the evaluation chart', () => {
  it('starts scheduling with its input and no outcome yet', () => {
    const { actor } = chart(() => new Promise(() => {}));
    actor.start();
    const snap = actor.getSnapshot();
    expect([snap.value, snap.context]).to.deep.equal(['scheduling', { ...INPUT, outcome: '' }]);
    actor.stop();
  });

  it('a pass that schedules ends complete with its outcome line, recording no failure', async () => {
    const { actor, recorded } = chart(async () => '2 placed, 0 stopped');
    await toPromise(actor.start());
    const snap = actor.getSnapshot();
    expect([snap.value, snap.status, snap.context.outcome, recorded]).to.deep.equal(['complete', 'done', '2 placed, 0 stopped', []]);
  });

  for (const [what, thrown, text] of [
    ['an Error', new Error('no node fingerprint yet'), 'no node fingerprint yet'],
    ['a string', 'plain text', 'plain text'],
    ['undefined', undefined, 'undefined'],
  ] as const) {
    it(`a pass that throws ${what} records the failure with its text and ends failed`, async () => {
      const { actor, recorded } = chart(() => Promise.reject(thrown));
      await toPromise(actor.start());
      const snap = actor.getSnapshot();
      expect([snap.value, snap.status, snap.context.outcome]).to.deep.equal(['failed', 'done', text]);
      expect(recorded).to.deep.equal([{ evalId: 'e1', error: text }]);
    });
  }

  it('ends failed when recording the failure fails too', async () => {
    const { actor, recorded } = chart(
      () => Promise.reject(new Error('boom')),
      () => Promise.reject(new Error('disk full')),
    );
    await toPromise(actor.start());
    expect([actor.getSnapshot().value, actor.getSnapshot().context.outcome, recorded.length]).to.deep.equal(['failed', 'boom', 1]);
  });

  it('unprovided, both effects fail and say the broker provides them', async () => {
    const actor = createActor(evalMachine, { input: INPUT });
    await toPromise(actor.start());
    expect([actor.getSnapshot().value, actor.getSnapshot().context.outcome]).to.deep.equal(['failed', 'schedule: provided by the broker']);
  });
});
