/**
 * Periodic jobs, as Nomad's periodic dispatcher runs them, on a clock the spec moves: the parent
 * is never placed; at each time its cron names a child `<id>/periodic-<unix>` is registered and
 * runs; `prohibit_overlap` skips a launch while a child still runs (`periodic force` does not);
 * an agent restarted after missing several launches makes one, not one per launch; bad
 * expressions and time zones are refused at register.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import type { Clock } from '../../model/clock.ts';
import { http, waitFor } from '../support/agent.ts';

/** Time that moves only when the spec says; timers fire as it passes them. */
class ManualClock implements Clock {
  #timers = new Map<number, { at: number; fn: () => void }>();
  #seq = 0;
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.#timers.delete(h as number);
  }
  /** Moves to `to` (ms), firing each timer due on the way, in order. */
  moveTo(to: number): void {
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = to;
  }
}

const at = (iso: string) => Date.parse(iso);
const job = (id: string, extra: Record<string, unknown> = {}, runFor = '1ms') => ({
  Job: {
    ID: id,
    Type: 'batch',
    Periodic: { Spec: '*/5 * * * *', SpecType: 'cron', ...extra },
    TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: runFor }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
  },
});

describe('agent: periodic jobs', function () {
  this.timeout(60_000);
  let agent: Agent | undefined;
  let dir = '';
  const api = { req: (m: string, p: string, b?: unknown) => http(m, agent!.url + p, b) };
  const children = async (id: string) =>
    ((await api.req('GET', `/v1/jobs?prefix=${encodeURIComponent(`${id}/periodic-`)}`)).json as Array<{ ID: string }>).map((j) => j.ID).sort();
  const start = (clock: Clock) =>
    startAgent(resolveAgentConfig([], { dev: true, port: 0, dataDir: join(dir, 'data') }), { log: () => {}, periodicClock: clock });

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-periodic-'))));
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('launches a child at each time the cron names; the parent itself is never placed', async () => {
    const clock = new ManualClock(at('2026-12-06T20:01:00Z'));
    agent = await start(clock);
    const r = await api.req('POST', '/v1/jobs', job('tick'));
    expect(r.status, r.text).to.equal(200);
    expect(r.json.EvalID).to.equal('');
    expect((await api.req('GET', '/v1/job/tick')).json.Status).to.equal('running');
    expect(await children('tick')).to.deep.equal([]);
    clock.moveTo(at('2026-12-06T20:05:30Z'));
    const first = `tick/periodic-${at('2026-12-06T20:05:00Z') / 1000}`;
    expect(await children('tick')).to.deep.equal([first]);
    const child = (await api.req('GET', `/v1/job/${encodeURIComponent(first)}`)).json;
    expect(child).to.deep.include({ ParentID: 'tick' });
    expect(child.Periodic ?? null).to.equal(null);
    await waitFor(api, `/v1/job/${encodeURIComponent(first)}/allocations`, (l: any[]) => l.length === 1 && l[0].ClientStatus === 'complete', 'the child ran');
    clock.moveTo(at('2026-12-06T20:10:00Z'));
    expect(await children('tick')).to.deep.equal([first, `tick/periodic-${at('2026-12-06T20:10:00Z') / 1000}`]);
    expect((await api.req('GET', '/v1/job/tick/allocations')).json).to.deep.equal([]);
  });

  it('prohibit_overlap skips a launch while a child runs; periodic force launches anyway', async () => {
    const clock = new ManualClock(at('2026-12-06T20:01:00Z'));
    agent = await start(clock);
    expect((await api.req('POST', '/v1/jobs', job('slow', { ProhibitOverlap: true }, '1h'))).status).to.equal(200);
    clock.moveTo(at('2026-12-06T20:05:00Z'));
    const [first] = await children('slow');
    await waitFor(api, `/v1/job/${encodeURIComponent(first!)}/allocations`, (l: any[]) => l[0]?.ClientStatus === 'running', 'the first child running');
    clock.moveTo(at('2026-12-06T20:10:00Z'));
    expect(await children('slow'), 'skipped while the first runs').to.deep.equal([first]);
    const forced = await api.req('POST', '/v1/job/slow/periodic/force', {});
    expect(forced.status, forced.text).to.equal(200);
    expect(forced.json.EvalID).to.match(/^[0-9a-f-]{36}$/);
    expect(await children('slow')).to.have.length(2);
    const notPeriodic = await api.req('POST', '/v1/jobs', { Job: { ...job('plain').Job, Periodic: undefined } });
    expect(notPeriodic.status).to.equal(200);
    const r = await api.req('POST', '/v1/job/plain/periodic/force', {});
    expect(r.status).to.equal(400);
    expect(r.text).to.include('Job is not periodic');
  });

  it('an agent that missed several launches makes one on restart, then keeps the schedule', async () => {
    let clock = new ManualClock(at('2026-12-06T20:01:00Z'));
    agent = await start(clock);
    expect((await api.req('POST', '/v1/jobs', job('cron'))).status).to.equal(200);
    clock.moveTo(at('2026-12-06T20:05:00Z'));
    expect(await children('cron')).to.have.length(1);
    await agent.close();
    agent = undefined;
    // Down for 26 minutes: five launches missed.
    clock = new ManualClock(at('2026-12-06T20:31:00Z'));
    agent = await start(clock);
    const after = await children('cron');
    expect(after).to.deep.equal([`cron/periodic-${at('2026-12-06T20:05:00Z') / 1000}`, `cron/periodic-${at('2026-12-06T20:31:00Z') / 1000}`]);
    clock.moveTo(at('2026-12-06T20:35:00Z'));
    expect(await children('cron')).to.have.length(3);
  });

  it('refuses a bad expression and an unknown time zone at register', async () => {
    agent = await start(new ManualClock(at('2026-12-06T20:01:00Z')));
    const bad = await api.req('POST', '/v1/jobs', job('bad', { Spec: 'every minute' }));
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('Invalid periodic job: Invalid cron spec "every minute"');
    const tz = await api.req('POST', '/v1/jobs', job('tz', { TimeZone: 'Mars/Base' }));
    expect(tz.status).to.equal(400);
    expect(tz.text).to.include('Invalid time zone "Mars/Base"');
    expect((await api.req('GET', '/v1/jobs')).json).to.deep.equal([]);
  });
});
