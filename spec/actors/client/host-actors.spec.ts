/**
 * A host's own actors (`Client.attachActor`, actors/client/host-actors.ts): shown once each, and
 * let go when they stop, when detached, or at shutdown (no subscription left behind).
 */
import { expect } from 'chai';
import { createActor, createMachine, type AnyActorRef } from 'xstate';
import { HostActors } from '../../../actors/client/host-actors.ts';

const machine = createMachine({ initial: 'on', states: { on: { on: { end: 'done' } }, done: { type: 'final' } } });

describe('client: the host actors it shows', () => {
  it('shows an actor once, and lets it go when it stops', () => {
    const hosts = new HostActors();
    const shown: AnyActorRef[] = [];
    const actor = createActor(machine).start();
    hosts.attach(actor, (a) => shown.push(a));
    hosts.attach(actor, (a) => shown.push(a));
    expect(shown).to.deep.equal([actor]);
    expect([...hosts.actors()]).to.deep.equal([actor]);
    actor.send({ type: 'end' });
    expect([...hosts.actors()]).to.deep.equal([]);
  });

  it('lets an actor go at its detach, and every actor at clear', () => {
    const hosts = new HostActors();
    const [a, b] = [createActor(machine).start(), createActor(machine).start()];
    const detachA = hosts.attach(a, () => undefined);
    hosts.attach(b, () => undefined);
    detachA();
    expect([...hosts.actors()]).to.deep.equal([b]);
    hosts.clear();
    expect([...hosts.actors()]).to.deep.equal([]);
    a.stop();
    b.stop();
  });

  it('shows an actor that has already stopped, and holds nothing of it', () => {
    const hosts = new HostActors();
    const shown: AnyActorRef[] = [];
    const actor = createActor(machine).start();
    actor.send({ type: 'end' });
    hosts.attach(actor, (a) => shown.push(a));
    expect(shown).to.deep.equal([actor]);
    expect([...hosts.actors()]).to.deep.equal([]);
  });
});
