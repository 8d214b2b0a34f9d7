import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { Subject } from 'rxjs';
import { Actor, type AnyActorRef, type InspectionEvent } from 'xstate';
import { connectInspector } from '../../../actors/inspect/ws-inspector.ts';
import { batchAlloc, makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';
import { parentOf } from '../../../actors/watchers/detached-children.ts';

type ActorEv = Extract<InspectionEvent, { type: '@xstate.actor' }>;
type SnapEv = Extract<InspectionEvent, { type: '@xstate.snapshot' }>;
const topOf = (v: unknown) => (typeof v === 'string' ? v : Object.keys(v as object)[0]);

describe('inspection', () => {
  const newClient = useTempClients();

  it('reaches every actor: client, alloc and task, with the right parent and state sequence', async () => {
    const events: InspectionEvent[] = [];
    const client = newClient({ inspect: (e) => events.push(e) });
    const alloc = makeAlloc([mockTask('web', { run_for: '10ms' }), mockTask('side', { run_for: '10ms' })], { jobType: 'batch' });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await r.destroy();
    const actors = events.filter((e): e is ActorEv => e.type === '@xstate.actor');
    const byId = new Map(actors.map((e) => [(e.actorRef as unknown as { id: string }).id, e.actorRef]));
    expect(byId.has('client')).to.equal(true);
    const allocRef = byId.get(`alloc-${alloc.id}`)!;
    expect(allocRef, 'alloc actor').to.not.equal(undefined);
    for (const t of ['web', 'side']) {
      const ref = byId.get(`task-${alloc.id}-${t}`) as AnyActorRef;
      expect(ref, `task ${t}`).to.not.equal(undefined);
      expect(parentOf(ref)).to.equal(allocRef);
    }
    const seq: string[] = [];
    for (const e of events) {
      if (e.type !== '@xstate.snapshot' || e.actorRef !== allocRef) continue;
      const top = topOf(((e as SnapEv).snapshot as unknown as { value: unknown }) && ((e as SnapEv).snapshot as unknown as { value: unknown }).value);
      if (seq[seq.length - 1] !== top) seq.push(top!);
    }
    expect(seq).to.deep.equal(['pending', 'waiting-prev', 'running', 'stopping', 'destroyed']);
    const ctx = (allocRef.getSnapshot() as { context: unknown }).context;
    expect(() => JSON.stringify(ctx)).to.not.throw(); // plain data only
  });

  describe('inspection off costs nothing', () => {
    /**
     * Counts `system.inspect` calls (how an observer is attached, by the `inspect` option or by the
     * viewer's feed) on every actor system made while it is installed: xstate's Actor constructor
     * assigns `this.system` (undefined, then the system), so an accessor on the prototype sees each
     * new system first.
     */
    function probeInspect(): { attached: () => number; restore: () => void } {
      let attached = 0;
      const proto = Actor.prototype as unknown as object;
      Object.defineProperty(proto, 'system', {
        configurable: true,
        get: () => undefined,
        set(this: object, system: { inspect: (o: unknown) => unknown } | undefined) {
          if (!system) return; // the constructor's first, empty assignment
          const own = system.inspect;
          if (!(own as { probed?: true }).probed) {
            system.inspect = Object.assign((o: unknown) => (attached++, own.call(system, o)), { probed: true as const });
          }
          Object.defineProperty(this, 'system', { value: system, writable: true, configurable: true, enumerable: true });
        },
      });
      return { attached: () => attached, restore: () => delete (proto as { system?: unknown }).system };
    }

    it('no observer is attached to any actor system when inspection, viewer and recording are off', async () => {
      const probe = probeInspect();
      try {
        const client = newClient();
        const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '5ms' })], { jobType: 'batch' }));
        await r.waitFor('stopping');
        expect(r.alloc().clientStatus).to.equal('complete');
        expect(probe.attached(), 'system.inspect calls').to.equal(0);
      } finally {
        probe.restore();
      }
    });

    /**
     * Watches the client's bus from inside: `messages$` is the bus Subject's `asObservable()`, whose
     * `source` is the Subject itself. Counts the messages built (each `next`) and the most
     * observers it ever had at a publish.
     */
    function busProbe(bus: { messages$: unknown }): { built: () => number; observers: () => number } {
      const subject = (bus.messages$ as { source: Subject<unknown> & { observers: unknown[] } }).source;
      expect(subject).to.be.instanceOf(Subject);
      let built = 0;
      let most = 0;
      const next = subject.next.bind(subject);
      subject.next = (m: unknown) => {
        built++;
        most = Math.max(most, subject.observers.length);
        next(m);
      };
      return { built: () => built, observers: () => most };
    }

    it('the bus keeps only berth’s own listener (the GC) when inspection, viewer and recording are off, and when only the inspect option is on', async () => {
      const probe = probeInspect();
      try {
        const off = newClient();
        const offBus = busProbe(off.bus);
        const r = off.addAlloc(makeAlloc([mockTask('web', { run_for: '5ms' })], { jobType: 'batch' }));
        await r.waitFor('stopping');
        await r.destroy();
        expect(r.alloc().clientStatus).to.equal('complete');
        expect(offBus.built(), 'messages published (the GC listens to alloc.state)').to.be.greaterThan(0);
        expect(offBus.observers(), 'bus listeners at any publish: the GC collector only').to.equal(1);
        expect(probe.attached(), 'system.inspect calls').to.equal(0);
      } finally {
        probe.restore();
      }
      const inspected = newClient({ inspect: () => {} });
      const inspectedBus = busProbe(inspected.bus);
      const r2 = inspected.addAlloc(makeAlloc([mockTask('web', { run_for: '5ms' })], { jobType: 'batch' }));
      await r2.waitFor('stopping');
      await r2.destroy();
      expect(inspectedBus.observers(), 'the inspect option adds no bus listener').to.equal(1);
    });

    it('the bus probe sees the recorder’s listener (so the test above can fail)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'berth-rec-'));
      try {
        const client = newClient({ record: join(dir, 'rec.jsonl') });
        const bus = busProbe(client.bus);
        const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '5ms' })], { jobType: 'batch' }));
        await r.waitFor('stopping');
        await r.destroy();
        await client.shutdown();
        expect(bus.observers()).to.equal(2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the probe sees the observer the inspect option attaches (so the test above can fail)', async () => {
      const probe = probeInspect();
      try {
        const client = newClient({ inspect: () => {} });
        const r = client.addAlloc(batchAlloc('5ms'));
        await r.waitFor('stopping');
        expect(probe.attached()).to.be.greaterThanOrEqual(2); // the client's system and the alloc's
      } finally {
        probe.restore();
      }
    });
  });

  it('streams to a real WebSocket server on 127.0.0.1 through @statelyai/inspect, and stops cleanly', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((res) => wss.once('listening', () => res()));
    const received: Array<{ type: string; name?: string; sessionId?: string; parentId?: string }> = [];
    wss.on('connection', (sock) => sock.on('message', (data) => received.push(JSON.parse(String(data)))));
    const port = (wss.address() as AddressInfo).port;
    const insp = connectInspector({ url: `ws://127.0.0.1:${port}`, retryMs: 20 });
    const client = newClient({ inspect: insp.inspect });
    // Events before the socket opens are buffered, beyond the package's 200-event default.
    const allocs = Array.from({ length: 30 }, () => makeAlloc([mockTask('web', { run_for: '5ms' })], { jobType: 'batch' }));
    const runners = allocs.map((a) => client.addAlloc(a));
    await insp.ready;
    await Promise.all(runners.map((r) => r.waitFor('stopping')));
    // The inspector converts events on setTimeout(0): wait until every task's actor event arrived.
    const arrived = () => allocs.every((a) => received.some((m) => m.type === '@xstate.actor' && m.name === `task-${a.id}-web`));
    for (const end = Date.now() + 5000; !arrived() && Date.now() < end;) await new Promise((res) => setTimeout(res, 10));
    const actorEvents = received.filter((m) => m.type === '@xstate.actor');
    for (const a of allocs) {
      const allocEv = actorEvents.find((m) => m.name === `alloc-${a.id}`);
      expect(allocEv, `alloc-${a.id}`).to.not.equal(undefined);
      const taskEv = actorEvents.find((m) => m.name === `task-${a.id}-web`);
      expect(taskEv!.parentId).to.equal(allocEv!.sessionId);
    }
    expect(received.length).to.be.greaterThan(200);
    await insp.stop();
    await new Promise<void>((res) => wss.close(() => res()));
  });

  it('an inspector stopped while its server is missing lets the process exit (no endless reconnect)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../support/inspector-exit.ts', import.meta.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((res) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        res(-1);
      }, 8000);
      child.on('exit', (c) => {
        clearTimeout(t);
        res(c);
      });
    });
    expect(out.trim()).to.equal('stopped');
    expect(code).to.equal(0);
  });
});
