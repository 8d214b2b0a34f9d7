import { expect } from 'chai';
import type { Allocation, Task } from '../../../model/types.ts';
import type { BusMessage } from '../../../bus/messages.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';

const noRestart = { attempts: 0, intervalMs: 60_000, delayMs: 0, mode: 'fail' as const };
const eventsOf = (a: Allocation, t: string) => a.taskStates![t]!.events.map((e) => e.type);
const order = (items: BusMessage<'task.event'>[], type: string) => items.filter((m) => m.event.type === type).map((m) => m.task);

describe('client: task groups', () => {
  const newClient = useTempClients();

  it('kills in order on stop: leader, then other main tasks, then sidecars; poststop runs after', async () => {
    const client = newClient();
    const events = record(client, 'task.event');
    const tasks: Task[] = [
      mockTask('side', { run_for: '10s' }, { lifecycle: { hook: 'prestart', sidecar: true } }),
      mockTask('a', { run_for: '10s', kill_after: '20ms' }),
      mockTask('lead', { run_for: '10s', kill_after: '20ms' }, { leader: true }),
      mockTask('b', { run_for: '10s', kill_after: '20ms' }),
      mockTask('post', { run_for: '10ms' }, { lifecycle: { hook: 'poststop' } }),
    ];
    const alloc = makeAlloc(tasks);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => ['a', 'b', 'lead'].every((t) => a.taskStates![t]!.state === 'running'));
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await viewWhere(client, r, (a) => a.taskStates!.post!.state === 'dead');
    const killed = order(events.items, 'Killed');
    expect(killed[0]).to.equal('lead');
    expect(killed.slice(1, 3).sort()).to.deep.equal(['a', 'b']);
    expect(killed[3]).to.equal('side');
    const seq = events.items.map((m) => `${m.task}:${m.event.type}`);
    // The leader is killed alone: the other mains hear of the stop only once it is dead.
    for (const t of ['a', 'b']) expect(seq.indexOf(`${t}:Killing`), t).to.be.greaterThan(seq.indexOf('lead:Killed'));
    expect(seq.indexOf('post:Started')).to.be.greaterThan(seq.indexOf('side:Killed'));
    expect(eventsOf(r.alloc(), 'post')).to.not.include('Killing');
    expect(r.alloc().clientStatus).to.equal('complete');
  });

  it('a failed task kills its siblings with "Sibling Task Failed"', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('bad', { run_for: '10ms', exit_code: 3 }), mockTask('good', { run_for: '10s' })], {
      group: { restartPolicy: noRestart },
    });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.taskStates!.good!.state === 'dead');
    const a = r.alloc();
    expect(a.clientStatus).to.equal('failed');
    expect(a.taskStates!.bad!.failed).to.equal(true);
    const sib = a.taskStates!.good!.events.find((e) => e.type === 'Sibling Task Failed')!;
    expect(sib.displayMessage).to.equal('Task\'s sibling "bad" failed');
    expect(a.taskStates!.good!.failed).to.equal(false);
  });

  it('a dead leader kills the rest with "Leader Task Dead"', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('lead', { run_for: '10ms' }, { leader: true }), mockTask('follow', { run_for: '10s' })], { jobType: 'batch' });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.taskStates!.follow!.state === 'dead');
    expect(eventsOf(r.alloc(), 'follow')).to.include('Leader Task Dead');
    expect(r.alloc().clientStatus).to.equal('complete');
  });

  it('prestart tasks gate the main task; a sidecar is killed with "Main Tasks Dead"', async () => {
    const client = newClient();
    const events = record(client, 'task.event');
    const alloc = makeAlloc(
      [
        mockTask('init', { run_for: '20ms' }, { lifecycle: { hook: 'prestart' } }),
        mockTask('side', { run_for: '10s' }, { lifecycle: { hook: 'prestart', sidecar: true } }),
        mockTask('main', { run_for: '20ms' }),
      ],
      { jobType: 'batch' },
    );
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.taskStates!.side!.state === 'dead');
    const seq = events.items.map((m) => `${m.task}:${m.event.type}`);
    expect(seq.indexOf('main:Started')).to.be.greaterThan(seq.indexOf('init:Terminated'));
    expect(eventsOf(r.alloc(), 'side')).to.include('Main Tasks Dead');
    expect(r.alloc().clientStatus).to.equal('complete');
  });

  it('restarts a crashing task per its policy, then "Not Restarting" fails it', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('crash', { run_for: '5ms', exit_code: 1 })], {
      group: { restartPolicy: { attempts: 2, intervalMs: 60_000, delayMs: 5, mode: 'fail' } },
    });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'failed');
    const ts = r.alloc().taskStates!.crash!;
    expect(ts.restarts).to.equal(2);
    expect(ts.failed).to.equal(true);
    const last = ts.events[ts.events.length - 1]!;
    expect(last.type).to.equal('Not Restarting');
    expect(last.displayMessage).to.equal('Exceeded allowed attempts 2 in interval 1m0s and mode is "fail"');
    expect(r.alloc().clientStatus).to.equal('failed');
  });

  it('an unrecoverable start error fails the task at once; a recoverable one restarts', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([mockTask('web', { start_error: 'no such image' })]));
    await r.waitFor('stopping');
    const ts = r.alloc().taskStates!.web!;
    expect(ts.events.map((e) => e.type)).to.deep.equal(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
    expect(ts.events[2]!.displayMessage).to.equal('no such image');
    expect(ts.events[3]!.displayMessage).to.equal('Error was unrecoverable');
    const r2 = client.addAlloc(
      makeAlloc([mockTask('web', { start_error: 'try later', start_error_recoverable: true })], {
        group: { restartPolicy: { attempts: 1, intervalMs: 60_000, delayMs: 1, mode: 'fail' } },
      }),
    );
    await r2.waitFor('stopping');
    expect(r2.alloc().taskStates!.web!.restarts).to.equal(1);
  });
});
