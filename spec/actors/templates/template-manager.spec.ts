/**
 * The template manager on its own, with real files and an injected clock: `wait` lets a burst
 * of changes settle before one re-render (never past `max`), the "Missing" event is not repeated
 * within the event rate, `once` templates are not re-rendered, a restart rewrites a file the
 * task changed only with `render_templates`, and a cancelled wait leaves no read behind.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../../model/clock.ts';
import type { Task, TaskEvent, TaskTemplate } from '../../../model/types.ts';
import { ServiceCatalog } from '../../../actors/services/catalog.ts';
import { missingMessage, TaskTemplateManager } from '../../../actors/runner/template-manager.ts';
import { templateRuntime } from '../../../actors/runner/template-hook.ts';
import { until } from '../../support/migrate-helpers.ts';
import { MemoryVariables } from '../../support/memory-variables.ts';

const OWN = 'nomad/jobs/j/g/t';

/**
 * A clock that moves only when told: every timer waits for `advance`. `armed` counts the timers
 * asked for, so a spec sees a wait re-armed.
 */
class ManualClock implements Clock {
  #now = 0;
  #seq = 0;
  armed = 0;
  readonly #timers = new Map<number, { due: number; ms: number; fn: () => void }>();
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.armed++;
    const id = ++this.#seq;
    this.#timers.set(id, { due: this.#now + ms, ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.#timers.delete(h as number);
  }
  /** Timers waiting for exactly `ms`. */
  pending(ms: number): number {
    return [...this.#timers.values()].filter((t) => t.ms === ms).length;
  }
  advance(ms: number): void {
    this.#now += ms;
    for (const [id, t] of [...this.#timers].sort((a, b) => a[1].due - b[1].due))
      if (t.due <= this.#now) {
        this.#timers.delete(id);
        t.fn();
      }
  }
}

const WAIT_MIN = 2000;
const WAIT_MAX = 5000;
const RATE = 3000;

describe('template manager: wait, once, render_templates, missing events', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-tm-'));
    mkdirSync(join(dir, 't', 'local'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const make = (templates: TaskTemplate[], clock = new ManualClock(), denylist: string[] = []) => {
    const vars = new MemoryVariables();
    const events: TaskEvent[] = [];
    const task: Task = { name: 't', driver: 'raw_exec', config: {}, templates };
    const m = new TaskTemplateManager(task, {
      data: { variables: vars, catalog: new ServiceCatalog(), clock, blockQueryWaitMs: 300_000 },
      who: { namespace: 'default', jobId: 'j', group: 'g', task: 't', allocId: 'a' },
      region: 'global',
      clock,
      eventRateMs: RATE,
      denylist,
      noSandbox: false,
      emit: (e) => events.push(e),
    });
    const ctx = { env: {}, taskDir: { dir: join(dir, 't') }, allocDir: { dir } };
    const file = (name = 'a') => readFileSync(join(dir, 't', 'local', name), 'utf8');
    return { vars, events, m, ctx, file, clock };
  };
  const tpl = (over: Partial<TaskTemplate> = {}): TaskTemplate => ({ data: `{{ with nomadVar "${OWN}" }}{{ .v }}{{ end }}`, destination: 'local/a', ...over });

  it('wait: a burst of changes within min settles into one re-render of the last value', async () => {
    const { vars, m, ctx, file, clock } = make([tpl({ wait: { minMs: WAIT_MIN, maxMs: WAIT_MAX } })]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    expect(file()).to.equal('1');
    const stop = new AbortController();
    const next = m.nextChange(stop.signal);
    vars.put(OWN, { v: '2' });
    await until(() => clock.pending(WAIT_MIN) === 1, 5000, 'the quiet wait');
    const armed = clock.armed;
    vars.put(OWN, { v: '3' });
    await until(() => clock.armed > armed && clock.pending(WAIT_MIN) === 1, 5000, 'the wait to start again');
    expect(file()).to.equal('1');
    clock.advance(WAIT_MIN);
    const changed = await next;
    expect(changed.map((t) => t.destination)).to.deep.equal(['local/a']);
    expect(file()).to.equal('3');
    stop.abort();
  });

  it('wait: changes that never settle re-render once max has passed', async () => {
    const { vars, m, ctx, file, clock } = make([tpl({ wait: { minMs: WAIT_MIN, maxMs: WAIT_MAX } })]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    const stop = new AbortController();
    const next = m.nextChange(stop.signal);
    vars.put(OWN, { v: '2' });
    await until(() => clock.pending(WAIT_MIN) === 1, 5000, 'the quiet wait');
    // Time passes with a change just before each quiet wait ends: only max ends the waiting.
    clock.advance(1500);
    let armed = clock.armed;
    vars.put(OWN, { v: '3' });
    await until(() => clock.armed > armed && clock.pending(WAIT_MIN) === 1, 5000, 'the second wait');
    clock.advance(1500);
    armed = clock.armed;
    vars.put(OWN, { v: '4' });
    // 3,000 ms have passed: the last wait is what is left of max (2,000 ms), and nothing waits past it.
    await until(() => clock.armed > armed && clock.pending(WAIT_MAX - 3000) === 1, 5000, 'the last wait');
    expect(file()).to.equal('1');
    clock.advance(WAIT_MAX - 3000);
    await next;
    expect(file()).to.equal('4');
    stop.abort();
  });

  it('wait: without max, changes that never settle re-render at 4 x min', async () => {
    const { vars, m, ctx, file, clock } = make([tpl({ wait: { minMs: WAIT_MIN } })]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    const stop = new AbortController();
    const next = m.nextChange(stop.signal);
    let v = 2;
    vars.put(OWN, { v: String(v) });
    await until(() => clock.pending(WAIT_MIN) === 1, 5000, 'the quiet wait');
    // A change each 1,500 ms: only the 8,000 ms bound (4 x min) ends the waiting.
    for (let passed = 1500; passed < 4 * WAIT_MIN; passed += 1500) {
      clock.advance(1500);
      const armed = clock.armed;
      vars.put(OWN, { v: String(++v) });
      await until(() => clock.armed > armed, 5000, 'the wait to start again');
    }
    expect(file()).to.equal('1');
    expect(clock.pending(4 * WAIT_MIN - 7500)).to.equal(1);
    clock.advance(4 * WAIT_MIN - 7500);
    await next;
    expect(file()).to.equal(String(v));
    stop.abort();
  });

  it('once: rendered at the start, never again while the task runs', async () => {
    const { vars, m, ctx, file } = make([tpl({ once: true }), tpl({ destination: 'local/b' })]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    const stop = new AbortController();
    const next = m.nextChange(stop.signal);
    vars.put(OWN, { v: '2' });
    const changed = await next;
    expect(changed.map((t) => t.destination)).to.deep.equal(['local/b']);
    expect([file('a'), file('b')]).to.deep.equal(['1', '2']);
    stop.abort();
  });

  it('a restart keeps a file the task changed unless render_templates forces a fresh one', async () => {
    const { vars, m, ctx, file } = make([tpl()]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    writeFileSync(join(dir, 't', 'local', 'a'), 'edited by the task');
    await m.render(ctx, new AbortController().signal);
    expect(file()).to.equal('edited by the task');
    await m.render(ctx, new AbortController().signal, { force: true });
    expect(file()).to.equal('1');
    // Data that changed while the task was not running is written at the next start.
    vars.put(OWN, { v: '9' });
    await m.render(ctx, new AbortController().signal);
    expect(file()).to.equal('9');
  });

  it('"Missing" is said once per set of missing data within the event rate; a cancel leaves no read', async () => {
    const { vars, events, m, ctx } = make([tpl(), tpl({ destination: 'local/b', data: '{{ with nomadVar "nomad/jobs/j" }}{{ .x }}{{ end }}' })]);
    const stop = new AbortController();
    const done = m.render(ctx, stop.signal).catch((e) => e);
    await until(() => events.length === 1 && vars.waiting === 2, 5000, 'the first Missing event');
    expect(events[0]!.displayMessage).to.equal('Missing: nomad.var.block(nomad/jobs/j/g/t@default.global), nomad.var.block(nomad/jobs/j@default.global)');
    // Other data moving does not repeat the same event.
    vars.put('nomad/jobs/j/g', { y: '1' });
    await until(() => vars.waiting === 2 && vars.reads >= 4, 5000, 'the reads to wait again');
    expect(events).to.have.length(1);
    stop.abort();
    expect(await done).to.be.instanceOf(Error);
    await until(() => vars.waiting === 0, 5000, 'no read left waiting');
  });

  it('custom delimiters, executeTemplate of a defined template, and the denylist', async () => {
    const data = '[[ define "u" ]]user=[[ .v ]][[ end ]][[ with nomadVar "' + OWN + '" ]][[ executeTemplate "u" . ]][[ end ]] {{ kept }}';
    const { vars, m, ctx, file } = make([tpl({ data, leftDelimiter: '[[', rightDelimiter: ']]' })]);
    vars.put(OWN, { v: '7' });
    await m.render(ctx, new AbortController().signal);
    expect(file()).to.equal('user=7 {{ kept }}');
    // The client's denylist: the function is known (the template parses) and fails when called.
    const denied = make([tpl({ destination: 'local/c', data: 'a{{ if false }}{{ plugin "x" }}{{ end }}{{ env "HOME" | sha256Hex | len }}' })], undefined, [
      'plugin',
      'sha256Hex',
    ]);
    const err = await denied.m.render(denied.ctx, new AbortController().signal).catch((e: Error) => e);
    expect(String(err)).to.match(/error calling sha256Hex: function "sha256Hex" is disabled/);
  });

  it('missingMessage names three, sorted, then "and N more"', () => {
    expect(missingMessage(['d', 'b', 'a', 'c', 'e'])).to.equal('Missing: a, b, c, and 2 more');
  });

  it("a watch's blocking query is bounded by block_query_wait on the clock, then asked again: no polling in between", async () => {
    const { vars, m, ctx, clock, file } = make([tpl()]);
    vars.put(OWN, { v: '1' });
    await m.render(ctx, new AbortController().signal);
    const stop = new AbortController();
    let changed = false;
    const next = m.nextChange(stop.signal).then((c) => ((changed = true), c));
    await until(() => clock.pending(300_000) === 1 && vars.waiting === 1, 5000, 'the watch');
    const reads = vars.reads;
    clock.advance(300_000);
    await until(() => vars.reads === reads + 1 && clock.pending(300_000) === 1 && vars.waiting === 1, 5000, 'the query asked again');
    expect(changed).to.equal(false);
    vars.put(OWN, { v: '2' });
    expect((await next).map((t) => t.destination)).to.deep.equal(['local/a']);
    expect(file()).to.equal('2');
    stop.abort();
  });

  it("the client's defaults are Nomad's: plugin and writeToFile denied, block_query_wait 5 min, max_template_event_rate 3 s, the sandbox on", () => {
    const rt = templateRuntime({}, new ManualClock(), new ServiceCatalog());
    expect([rt.denylist, rt.data.blockQueryWaitMs, rt.eventRateMs, rt.noSandbox]).to.deep.equal([['plugin', 'writeToFile'], 300_000, 3000, false]);
    const set = templateRuntime(
      { templates: { functionDenylist: ['env'], disableFileSandbox: true, blockQueryWaitMs: 1000, maxTemplateEventRateMs: 10 } },
      new ManualClock(),
      new ServiceCatalog(),
    );
    expect([set.denylist, set.data.blockQueryWaitMs, set.eventRateMs, set.noSandbox]).to.deep.equal([['env'], 1000, 10, true]);
  });
});
