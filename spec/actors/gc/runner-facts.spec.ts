/**
 * When the collector takes a runner as settled (it rests in `stopping.stopped`) and when it hears
 * of it, with a real xstate actor standing in for the runner's machine.
 */
import { expect } from 'chai';
import { assign, createActor, setup } from 'xstate';
import { isSettled, onSettled } from '../../../actors/gc/runner-facts.ts';
import type { AllocRunner } from '../../../actors/runner/api.ts';

/** A machine with the runner's shape where it matters: stopping.{killing,stopped}; TICK changes context only. */
const machine = setup({ types: { events: {} as { type: 'STOP' } | { type: 'DONE' } | { type: 'TICK' } | { type: 'END' } } }).createMachine({
  context: { ticks: 0 },
  initial: 'running',
  on: { TICK: { actions: assign({ ticks: ({ context }) => context.ticks + 1 }) } },
  states: {
    running: { on: { STOP: 'stopping' } },
    stopping: {
      initial: 'killing',
      states: { killing: { on: { DONE: 'stopped' } }, stopped: { on: { END: '#gone' } } },
    },
    gone: { id: 'gone', type: 'final' },
  },
});

/** A runner whose `state()` follows the actor's top state, as the real one does. */
function runner(withActor = true) {
  const actor = createActor(machine).start();
  const top = () => {
    const v = actor.getSnapshot().value;
    return typeof v === 'string' ? v : Object.keys(v)[0]!;
  };
  const r = { state: () => top(), ...(withActor ? { actor } : {}) } as unknown as AllocRunner;
  return { r, actor };
}

describe('gc runner facts: settled means resting in stopping.stopped', () => {
  it('isSettled: not while running or still killing; yes once stopped; a runner without a machine is taken at its word', () => {
    const { r, actor } = runner();
    expect(isSettled(r)).to.equal(false);
    actor.send({ type: 'STOP' });
    expect(isSettled(r)).to.equal(false);
    actor.send({ type: 'DONE' });
    expect(isSettled(r)).to.equal(true);
    const bare = { state: () => 'stopping' } as unknown as AllocRunner;
    expect(isSettled(bare)).to.equal(true);
    expect(isSettled({ state: () => 'running' } as unknown as AllocRunner)).to.equal(false);
  });

  it('onSettled calls back at once for a settled runner, and once when a runner settles later, however many snapshots follow', () => {
    const { r, actor } = runner();
    actor.send({ type: 'STOP' });
    actor.send({ type: 'DONE' });
    let now = 0;
    onSettled(r, () => now++);
    expect(now).to.equal(1);

    const later = runner();
    let calls = 0;
    onSettled(later.r, () => calls++);
    later.actor.send({ type: 'STOP' });
    later.actor.send({ type: 'TICK' });
    expect(calls).to.equal(0);
    later.actor.send({ type: 'DONE' });
    expect(calls).to.equal(1);
    later.actor.send({ type: 'TICK' });
    later.actor.send({ type: 'TICK' });
    expect(calls).to.equal(1);
  });

  it('a cancel before it settles means never; a runner without a machine that is not settled never calls back', () => {
    const { r, actor } = runner();
    let calls = 0;
    const cancel = onSettled(r, () => calls++);
    cancel();
    actor.send({ type: 'STOP' });
    actor.send({ type: 'DONE' });
    expect(calls).to.equal(0);
    let bareCalls = 0;
    const bare = { state: () => 'running' } as unknown as AllocRunner;
    onSettled(bare, () => bareCalls++)();
    expect(bareCalls).to.equal(0);
  });
});
