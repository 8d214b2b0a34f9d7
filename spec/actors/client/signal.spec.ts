import { expect } from 'chai';
import { MultiError, TaskNotRunningError } from '../../../model/errors.ts';
import type { AllocRunner } from '../../../actors/client/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

type WithActor = { actor: { getSnapshot(): { status: string; children: unknown } } };

/** The task actor's signal requests still in flight. */
const taskChildren = (r: AllocRunner, task: string) => {
  const t = ((r as unknown as WithActor).actor.getSnapshot() as { children: Record<string, { getSnapshot(): { children: Record<string, unknown> } }> })
    .children[`task-${r.allocId}-${task}`];
  return Object.keys(t?.getSnapshot().children ?? {}).filter((id) => id.startsWith('signal.'));
};

describe('client: signal goes through the task chart', () => {
  const newClient = useTempClients();

  it('Signaling event, the driver error as the answer, the task unharmed, no child left; a dead task is skipped', async () => {
    const client = newClient();
    const r = client.addAlloc(
      makeAlloc([
        mockTask('ok', { run_for: '10s' }),
        mockTask('bad', { run_for: '10s', signal_error: 'no way' }),
        mockTask('once', { run_for: '0s' }, { lifecycle: { hook: 'poststart' } }),
      ]),
    );
    await viewWhere(client, r, (a) => a.taskStates!.ok!.state === 'running' && a.taskStates!.bad!.state === 'running' && a.taskStates!.once!.state === 'dead');
    await r.signal('ok', 'SIGUSR1');
    expect(r.alloc().taskStates!.ok!.events.at(-1)!.type).to.equal('Signaling');
    const one = await r.signal('bad', 'SIGUSR1').catch((e) => e);
    expect(one).to.be.instanceOf(Error);
    expect(one.message).to.equal('no way');
    const all = await r.signal(undefined, 'SIGHUP').catch((e) => e);
    expect(all).to.be.instanceOf(MultiError);
    expect(all.message).to.include('Failed to signal task: bad, err: no way');
    expect(await r.signal('once', 'SIGHUP').catch((e) => e)).to.be.instanceOf(TaskNotRunningError);
    expect(r.alloc().taskStates!.bad!.state).to.equal('running');
    expect((r as unknown as WithActor).actor.getSnapshot().status).to.equal('active');
    expect(taskChildren(r, 'ok')).to.deep.equal([]);
    expect(taskChildren(r, 'bad')).to.deep.equal([]);
  });
});
