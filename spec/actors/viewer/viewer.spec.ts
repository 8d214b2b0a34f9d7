/**
 * The viewer without a browser: its server over real HTTP on loopback (token, host check, SSE,
 * log tail, bounded queues), its records (no secrets), recordings and the charts.
 */
import { expect } from 'chai';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus } from '../../../bus/bus.ts';
import { createClient } from '../../../actors/client/client.ts';
import { allocMachine } from '../../../machines/alloc/index.ts';
import { chartOf } from '../../../actors/viewer/chart.ts';
import { InvalidViewerOptionsError, RecordingFormatError } from '../../../actors/viewer/errors.ts';
import { ViewerFeed } from '../../../actors/viewer/feed.ts';
import { berthCharts } from '../../../actors/viewer/machine-charts.ts';
import { serveRecording } from '../../../actors/viewer/open.ts';
import { readRecording } from '../../../actors/viewer/recording.ts';
import { pageSize, startViewerServer } from '../../../actors/viewer/server.ts';
import type { ViewerModel } from '../../../actors/viewer/static/model.mjs';
import { batchAlloc, makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

interface SseEvent {
  event: string;
  data: string;
}

/** Reads an SSE stream until `until` says enough; then hangs up. */
function sse(url: string, until: (events: SseEvent[]) => boolean): Promise<SseEvent[]> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    let buf = '';
    const req = request(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`status ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ event, data: data.join('\n') });
        }
        if (until(events)) {
          req.destroy();
          resolve(events);
        }
      });
      res.on('end', () => resolve(events));
    });
    req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(events) : reject(e)));
    req.end();
  });
}

describe('viewer: server, records, recordings, charts', () => {
  const newClient = useTempClients();
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'berth-viewer-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('binds 127.0.0.1 by default, serves the page, and stops with client.shutdown()', async () => {
    const client = newClient();
    const v = await client.serveViewer();
    expect(v.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await get(v.url);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<script type="module" src="/static/app.js">');
    expect(String(page.headers['content-security-policy'])).to.include("default-src 'none'");
    // Every asset the page names is served from here.
    for (const f of ['app.js', 'model.mjs', 'style.css']) expect((await get(`${v.url}static/${f}`)).status).to.equal(200);
    expect((await get(`${v.url}static/../server.ts`)).status).to.equal(404);
    expect((await get(`${v.url}static/server.ts`)).status).to.equal(404);
    // DNS rebinding: a loopback server answers loopback names only.
    expect((await get(v.url, { host: 'evil.example:80' })).status).to.equal(403);
    await client.shutdown();
    let err: unknown;
    await get(v.url).catch((e) => (err = e));
    expect((err as NodeJS.ErrnoException)?.code).to.equal('ECONNREFUSED');
  });

  it('with a token, every request and stream needs it (query, header or the cookie it sets)', async () => {
    const client = newClient();
    const v = await client.serveViewer({ token: 'tok-123' });
    for (const path of ['', 'static/app.js', 'api/info', 'api/charts', 'api/events', 'api/logs?alloc=x&task=y']) {
      expect((await get(`${v.url}${path}`)).status, path).to.equal(401);
      expect((await get(`${v.url}${path}`, { 'x-berth-token': 'wrong' })).status, path).to.equal(401);
    }
    const page = await get(`${v.url}?token=tok-123`);
    expect(page.status).to.equal(200);
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    expect(cookie).to.match(/^berth_viewer_\d+=tok-123$/);
    expect((await get(`${v.url}static/app.js`, { cookie })).status).to.equal(200);
    expect((await get(`${v.url}api/info`, { 'x-berth-token': 'tok-123' })).status).to.equal(200);
    const evs = await sse(`${v.url}api/events?token=tok-123`, (e) => e.some((x) => x.event === 'init'));
    expect(evs[0]!.event).to.equal('init');
  });

  it('rejects options that cannot work with InvalidViewerOptionsError', async () => {
    const client = newClient();
    for (const bad of [{ port: -1 }, { port: 70000 }, { port: 1.5 }, { token: '' }, { host: '' }]) {
      let err: unknown;
      await client.serveViewer(bad as never).catch((e) => (err = e));
      expect(err, JSON.stringify(bad)).to.be.instanceOf(InvalidViewerOptionsError);
    }
    // A recording that cannot be opened is refused before the client touches its data dir.
    const dataDir = join(tempDir(), 'data');
    let err: unknown;
    try {
      createClient({ dataDir, record: join(tempDir(), 'no', 'such', 'dir', 'x.jsonl') });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InvalidViewerOptionsError);
    expect(existsSync(dataDir), 'nothing created').to.equal(false);
  });

  it('streams the model, then records: the alloc and task actors with their states', async () => {
    const client = newClient();
    const v = await client.serveViewer();
    const alloc = batchAlloc('5ms');
    const stream = sse(`${v.url}api/events`, (e) => e.some((x) => x.event === 'records' && x.data.includes(`"to":"destroyed"`)));
    await v.pageConnected();
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await r.destroy();
    const events = await stream;
    expect(events[0]!.event).to.equal('init');
    const records = events.filter((e) => e.event === 'records').flatMap((e) => JSON.parse(e.data) as Array<Record<string, unknown>>);
    const key = `alloc-${alloc.id}`;
    expect(records.find((x) => x.k === 'actor' && x.id === key)).to.include({ kind: 'alloc' });
    expect(records.find((x) => x.k === 'actor' && x.id === `${key}/task-${alloc.id}-web`)).to.include({ kind: 'task', parent: key });
    const tops = records.filter((x) => x.k === 'state' && x.id === key).map((x) => String(x.state).split('.')[0]);
    expect([...new Set(tops)]).to.deep.equal(['pending', 'waiting-prev', 'running', 'stopping', 'destroyed']);
    expect(records.find((x) => x.k === 'alloc' && x.alloc === alloc.id)).to.deep.include({ job: 'example', group: 'web', tasks: ['web'] });
    expect(records.some((x) => x.k === 'bus' && x.type === 'task.event' && x.ev === 'Started')).to.equal(true);
  });

  it('a page that connects late sees what already runs (actors described from their snapshots)', async () => {
    const client = newClient();
    const a = makeAlloc([mockTask('web', { run_for: '10s' })]);
    const r = client.addAlloc(a);
    await r.waitFor('running');
    const v = await client.serveViewer();
    const [init] = await sse(`${v.url}api/events`, (e) => e.length > 0);
    const model = JSON.parse(init!.data) as ViewerModel;
    expect(model.actors[`alloc-${a.id}`]).to.include({ kind: 'alloc', status: 'active' });
    expect(model.actors[`alloc-${a.id}`]!.state).to.match(/^running/);
    expect(model.actors.client).to.include({ state: 'running' });
    expect(model.allocs[a.id]).to.include({ job: 'example' });
  });

  it('a page that connects after a preemptor started waiting sees the wait and the timelines (rebuilt from the current state)', async () => {
    const client = newClient();
    const victim = makeAlloc([mockTask('web', { run_for: '1h' })]);
    const victimR = client.addAlloc(victim);
    await viewWhere(client, victimR, (x) => x.taskStates?.web?.state === 'running');
    const preemptor = makeAlloc([mockTask('web', { run_for: '1h' })], { preemptedAllocations: [victim.id] });
    const preemptorR = client.addAlloc(preemptor);
    await preemptorR.waitFor('waiting-prev');
    const v = await client.serveViewer(); // no feed until now: nothing was recorded before
    const [init] = await sse(`${v.url}api/events`, (e) => e.length > 0);
    const model = JSON.parse(init!.data) as ViewerModel;
    const p = model.allocs[preemptor.id]!;
    expect(p.state).to.equal('waiting-prev');
    expect(p.waits[victim.id]).to.include({ role: 'preempted', mode: 'local' });
    expect(p.waits[victim.id]!.released).to.equal(undefined);
    const victimLines = model.allocs[victim.id]!.timeline.map((r) => {
      const b = r as { type: string; task?: string; ev?: string };
      return b.type === 'task.event' ? `${b.task}: ${b.ev}` : b.type;
    });
    expect(victimLines).to.include.members(['web: Received', 'web: Task Setup', 'web: Started']);

    // Later records still apply: the victim stops, the wait is released.
    const released = sse(`${v.url}api/events`, (e) => e.some((x) => x.event === 'records' && x.data.includes('"watcher.released"')));
    client.updateAlloc({ ...victim, desiredStatus: 'evict', allocModifyIndex: 2 });
    await preemptorR.waitFor('running');
    expect((await released).some((x) => x.data.includes(victim.id))).to.equal(true);
  });

  it('a viewer closed and opened again picks the running allocs up again', async () => {
    const client = newClient();
    const a = makeAlloc([mockTask('web', { run_for: '10s' })]);
    const first = await client.serveViewer();
    const r = client.addAlloc(a);
    await viewWhere(client, r, (x) => x.taskStates?.web?.state === 'running');
    await first.close();
    expect((await get(first.url).catch((e) => e)).code).to.equal('ECONNREFUSED');
    const second = await client.serveViewer();
    const [init] = await sse(`${second.url}api/events`, (e) => e.length > 0);
    const model = JSON.parse(init!.data) as ViewerModel;
    expect(model.actors[`alloc-${a.id}`]!.state).to.equal('running.tasks');
    expect(model.actors[`alloc-${a.id}/task-${a.id}-web`]).to.include({ kind: 'task', state: 'running' });
  });

  it('never shows secrets: env values and task config stay out of the stream and the recording', async () => {
    const dir = tempDir();
    const file = join(dir, 'rec.jsonl');
    const client = newClient({ record: file });
    const v = await client.serveViewer();
    const secret = 'hunter2-very-secret-value';
    const alloc = makeAlloc([mockTask('web', { run_for: '5ms', signal_error: `${secret}-cfg` }, { env: { DB_PASSWORD: secret } })], { jobType: 'batch' });
    const stream = sse(`${v.url}api/events`, (e) => e.some((x) => x.data.includes(`"to":"destroyed"`)));
    await v.pageConnected();
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await r.destroy();
    const text = (await stream).map((e) => e.data).join('\n');
    expect(text).to.include(alloc.id);
    expect(text).to.not.include(secret);
    expect(text).to.not.include('DB_PASSWORD');
    await client.shutdown();
    const rec = readFileSync(file, 'utf8');
    expect(rec).to.include(alloc.id);
    expect(rec).to.not.include(secret);
  });

  it('keeps no history for absent pages: the model stays bounded; a page that falls behind is resynchronised', async () => {
    const bus = createBus();
    const feed = new ViewerFeed({ bus, now: Date.now, limits: { timeline: 5, endedActors: 10, destroyedAllocs: 3 } });
    for (let i = 0; i < 20; i++) {
      const allocId = `a${i}`;
      for (const [from, to] of [
        [null, 'pending'],
        ['pending', 'running'],
        ['running', 'stopping'],
        ['stopping', 'destroyed'],
      ] as const)
        bus.publish('alloc.state', { allocId, from, to });
      for (let j = 0; j < 10; j++)
        bus.publish('task.event', { allocId, task: 'web', event: { type: 'Started', time: 0, displayMessage: 'x', details: {} } as never });
    }
    expect(feed.count).to.equal(20 * 14);
    expect(feed.model.allocOrder).to.have.length(3);
    for (const id of feed.model.allocOrder) expect(feed.model.allocs[id]!.timeline).to.have.length(5);

    const srv = await startViewerServer({ mode: 'live', feed, logSource: () => undefined }, { maxQueue: 10, flushMs: 30 });
    try {
      const got = sse(`${srv.url}api/events`, (e) => e.length >= 2);
      await srv.pageConnected();
      for (let i = 0; i < 50; i++) bus.publish('alloc.state', { allocId: 'z', from: 'pending', to: 'running' });
      const events = await got;
      // 50 records overflowed the queue of 10: the page gets the (bounded) model again instead.
      expect(events.map((e) => e.event)).to.deep.equal(['init', 'init']);
      expect((JSON.parse(events[1]!.data) as ViewerModel).allocs.z!.state).to.equal('running');
    } finally {
      await srv.close();
      feed.close();
      bus.close();
    }
  });

  it("tails a task's logs through runner.logs, following; refuses unknown allocs, tasks and streams", async () => {
    const client = newClient();
    const v = await client.serveViewer();
    const task = {
      name: 'echo',
      driver: 'raw_exec',
      config: { command: '/bin/sh', args: ['-c', 'echo first line; sleep 0.3; echo second line; sleep 30'] },
      killTimeoutMs: 1000,
    };
    const a = makeAlloc([task]);
    const r = client.addAlloc(a);
    await r.waitFor('running');
    const events = await sse(`${v.url}api/logs?alloc=${a.id}&task=echo&stream=stdout`, (e) =>
      e
        .map((x) => (x.event === 'message' ? JSON.parse(x.data) : ''))
        .join('')
        .includes('second line'),
    );
    expect(events[0]!.event).to.equal('start');
    expect(
      events
        .filter((e) => e.event === 'message')
        .map((e) => JSON.parse(e.data))
        .join(''),
    ).to.equal('first line\nsecond line\n');
    expect((await get(`${v.url}api/logs?alloc=${a.id}&task=nope`)).status).to.equal(404);
    expect((await get(`${v.url}api/logs?alloc=nope&task=echo`)).status).to.equal(404);
    expect((await get(`${v.url}api/logs?alloc=${a.id}&task=echo&stream=stdin`)).status).to.equal(400);
  });

  it('records to JSON lines and replays: complete, torn and foreign files', async () => {
    const dir = tempDir();
    const file = join(dir, 'rec.jsonl');
    const client = newClient({ record: file });
    const a = batchAlloc('5ms');
    const r = client.addAlloc(a);
    await r.waitFor('stopping');
    await r.destroy();
    await client.shutdown();
    const rec = readRecording(file);
    expect(rec.complete).to.equal(true);
    expect(rec.header).to.include({ berth: 'recording', version: 1 });
    expect(rec.records.some((x) => x.k === 'state' && x.id === `alloc-${a.id}` && x.state === 'destroyed')).to.equal(true);

    // A writer that died mid-line: everything before the torn line still reads.
    const torn = join(dir, 'torn.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(torn, `${lines.slice(0, 10).join('\n')}\n{"k":"sta`);
    const t = readRecording(torn);
    expect(t.complete).to.equal(false);
    expect(t.records).to.have.length(9);

    const foreign = join(dir, 'foreign.jsonl');
    writeFileSync(foreign, '{"hello":1}\n');
    expect(() => readRecording(foreign)).to.throw(RecordingFormatError, /no berth recording header/);
    appendFileSync(torn, '\n');
    expect(() => readRecording(torn)).to.throw(RecordingFormatError, /torn.jsonl:11/);
    expect(() => readRecording(join(dir, 'missing.jsonl'))).to.throw(RecordingFormatError);
    let err: unknown;
    await serveRecording(foreign).catch((e) => (err = e));
    expect(err).to.be.instanceOf(RecordingFormatError);

    const srv = await serveRecording(file);
    try {
      const info = JSON.parse((await get(`${srv.url}api/info`)).body);
      expect(info).to.deep.equal({ mode: 'replay', title: 'rec.jsonl' });
      const body = JSON.parse((await get(`${srv.url}api/recording`)).body);
      expect(body.records).to.have.length(rec.records.length);
      expect((await get(`${srv.url}api/events`)).status).to.equal(404);
      expect((await get(`${srv.url}api/logs?alloc=${a.id}&task=web`)).status).to.equal(404);
    } finally {
      await srv.close();
    }
    expect(existsSync(file)).to.equal(true);
  });

  it('draws the charts from the machine definitions, laid out by elkjs', async function () {
    this.timeout(30_000); // loading elkjs's 1.6 MB build on a loaded machine
    const g = chartOf(allocMachine);
    const ids = new Set<string>();
    const walk = (s: { id: string; children: Array<{ id: string; children: never[] }> }) => {
      ids.add(s.id);
      s.children.forEach(walk);
    };
    g.states.forEach(walk as never);
    for (const s of [
      'pending',
      'waiting-prev',
      'waiting-prev.waiting',
      'waiting-prev.migrating',
      'running',
      'running.tasks',
      'stopping',
      'stopping.destroying.killing',
      'destroyed',
    ])
      expect(ids.has(s), s).to.equal(true);
    expect(g.transitions).to.deep.include({
      id: g.transitions.find((t) => t.source === 'pending' && t.target === 'waiting-prev')!.id,
      source: 'pending',
      target: 'waiting-prev',
      label: 'done: alloc-dir',
    });
    const { alloc, task } = await berthCharts();
    expect(task.states.map((s) => s.id)).to.include.members(['pending', 'starting', 'running', 'restarting', 'dead']);
    // Every nested state sits inside its parent's box; every transition has a route.
    const box = new Map(alloc.states.map((s) => [s.id, s]));
    for (const s of alloc.states) {
      const parent = box.get(s.id.split('.').slice(0, -1).join('.'));
      if (!parent) continue;
      expect(s.x >= parent.x && s.y >= parent.y && s.x + s.w <= parent.x + parent.w + 0.5 && s.y + s.h <= parent.y + parent.h + 0.5, s.id).to.equal(true);
    }
    for (const t of alloc.transitions) expect(t.points.length, t.id).to.be.greaterThan(1);
    expect(pageSize()).to.be.lessThan(64 * 1024); // the page itself; the layout comes from the server
  });

  it('by default the model keeps the last 50 destroyed allocs and 200 timeline lines per alloc (400 finished actors)', () => {
    const bus = createBus();
    const feed = new ViewerFeed({ bus, now: Date.now });
    try {
      for (let i = 0; i < 60; i++) {
        const allocId = `a${i}`;
        bus.publish('alloc.state', { allocId, from: null, to: 'pending' });
        for (let j = 0; j < 210; j++)
          bus.publish('task.event', { allocId, task: 'web', event: { type: 'Started', time: 0, displayMessage: `e${j}`, details: {} } as never });
        bus.publish('alloc.state', { allocId, from: 'pending', to: 'destroyed' });
      }
      expect(feed.model.allocOrder).to.deep.equal(Array.from({ length: 50 }, (_, i) => `a${i + 10}`));
      for (const id of feed.model.allocOrder) expect(feed.model.allocs[id]!.timeline).to.have.length(200);
      expect(feed.model.limits).to.deep.equal({ timeline: 200, endedActors: 400, destroyedAllocs: 50 });
    } finally {
      feed.close();
      bus.close();
    }
  });
});
