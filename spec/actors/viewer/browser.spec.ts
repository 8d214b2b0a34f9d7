/**
 * The viewer as a person sees it: the seed's preemption scenario on real processes, the page in
 * headless Chromium, then the recording replayed with the slider. Skips (saying why) where no
 * browser can run; fails on any request to another host.
 */
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveRecording } from '../../../actors/viewer/open.ts';
import { readRecording } from '../../../actors/viewer/recording.ts';
import type { ViewerServer } from '../../../actors/viewer/server.ts';
import type { Allocation, Task } from '../../../model/types.ts';
import { browserUnavailable, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from '../../support/browser.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';
import { skipOrFailInCi } from '../../support/skips.ts';

/** An alloc of job `job` (a priority-20 "lo" or priority-80 "hi"). */
function jobAlloc(job: string, tasks: Task[], over: Partial<Allocation> = {}): Allocation {
  const a = makeAlloc(tasks, { group: { count: 3 }, ...over });
  return { ...a, jobId: job, job: { ...a.job, id: job, name: job, priority: job === 'hi' ? 80 : 20 } };
}

function shellLoop(label: string): Task {
  const script = `trap 'exit 0' INT TERM; i=0; while true; do echo "${label} tick $i"; i=$((i+1)); sleep 0.1; done`;
  return { name: 'worker', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, killTimeoutMs: 2000 };
}

describe('viewer in a real browser (headless Chromium)', function () {
  this.timeout(60_000);
  const newClient = useTempClients();
  let browser: TestBrowser | undefined;
  let replayServer: ViewerServer | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'berth-viewer-spec-'));
  const recordFile = join(dir, 'run.jsonl');
  const ids: { lo: string[]; hi: string } = { lo: [], hi: '' };

  before(async function () {
    let why = await browserUnavailable();
    if (!why) {
      try {
        browser = await launchBrowser();
      } catch (e) {
        why = `Chromium did not start: ${(e as Error).message.split('\n')[0]}`;
      }
    }
    if (why) skipOrFailInCi(this, why); // .ci/run installs Chromium
  });
  afterEach(function () {
    if (browser) {
      expect(browser.external, 'requests to other hosts').to.deep.equal([]);
      expect(browser.errors, 'errors in the page').to.deep.equal([]);
    }
  });
  after(async () => {
    await replayServer?.close();
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the preemptor waiting for its two victims, then running, and a task's log tail", async () => {
    const { page } = browser!;
    const client = newClient({ record: recordFile });
    const token = 's3cret-viewer-token';
    const viewer = await client.serveViewer({ token });
    expect(viewer.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const lo: Allocation[] = [0, 1, 2].map((i) => jobAlloc('lo', [shellLoop(`lo[${i}]`)]));
    const loR = lo.map((a) => client.addAlloc(a));
    ids.lo = lo.map((a) => a.id);
    await page.goto(`${viewer.url}?token=${token}`);
    await Promise.all(loR.map((r) => r.waitFor('running')));
    for (const a of lo) await page.locator(`#tree li[data-key="alloc-${a.id}"]`).waitFor();
    expect(viewer.pages()).to.equal(1);

    const hi: Allocation = jobAlloc('hi', [shellLoop('hi')], { preemptedAllocations: [lo[0]!.id, lo[1]!.id] });
    ids.hi = hi.id;
    const hiR = client.addAlloc(hi);
    await hiR.waitFor('waiting-prev');
    await page.locator(`#tree li[data-key="alloc-${hi.id}"] > .row`).click();
    await page.locator('#alloc-chart g.st.active[data-id="waiting-prev.waiting"]').waitFor();
    expect(await page.locator('#alloc-chart g.st.active[data-id="waiting-prev"]').count()).to.equal(1);
    expect(await page.locator('#alloc-chart g.st.active[data-id="running"]').count()).to.equal(0);
    const victims = page.locator(`#waits g.victim`);
    await page.locator(`#waits g.edge[data-from="${hi.id}"]`).nth(1).waitFor();
    expect(await victims.evaluateAll((els) => els.map((e) => e.getAttribute('data-alloc')).sort())).to.deep.equal([lo[0]!.id, lo[1]!.id].sort());
    expect(await page.locator('#waits g.victim.released').count()).to.equal(0);
    expect(await page.locator('#tree').innerText()).to.include(`hi · ${hi.id.slice(0, 8)}`);
    await browser!.screenshot('1-waiting');

    for (const i of [0, 1]) client.updateAlloc({ ...lo[i]!, desiredStatus: 'evict', allocModifyIndex: 2 });
    await hiR.waitFor('running');
    await page.locator('#alloc-chart g.st.active[data-id="running"]').waitFor();
    await page.locator('#waits g.victim.released').nth(1).waitFor();
    expect(await page.locator('#alloc-chart g.st.active[data-id="waiting-prev"]').count()).to.equal(0);
    await page.locator('#timeline li', { hasText: 'worker: Started — Task started by client' }).waitFor();
    expect(await page.locator('#timeline').innerText()).to.include(`released by ${lo[0]!.id.slice(0, 8)}: terminated`);

    // The log tail follows: a line appears, then a later one.
    await page.locator('#log', { hasText: 'hi tick' }).waitFor();
    const first = Number((await page.locator('#log').innerText()).match(/hi tick (\d+)\s*$/)?.[1]);
    await page.locator('#log', { hasText: `hi tick ${first + 1}` }).waitFor();
    const shot = await browser!.screenshot('2-running');
    if (process.env.BERTH_VIEWER_SCREENSHOT) copyFileSync(shot, process.env.BERTH_VIEWER_SCREENSHOT);

    for (const r of client.runners()) client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: 5 });
    await Promise.all(client.runners().map((r) => r.waitFor('stopping')));
    await Promise.all(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    expect(viewer.pages()).to.equal(0); // shutdown ended the page's stream
  });

  it('replays the recording: the slider moves the highlighted state', async function () {
    if (!ids.hi) this.skip(); // the live run failed: nothing recorded
    const { page } = browser!;
    const rec = readRecording(recordFile);
    expect(rec.complete).to.equal(true);
    const hiKey = `alloc-${ids.hi}`;
    const at = (state: string) =>
      rec.records.findIndex((r) => r.k === 'state' && r.id === hiKey && (r.state === state || r.state?.startsWith(`${state}.`))) + 1;
    // Once both watchers said they wait (the bus follows the state change).
    const waits = rec.records.map((r, i) => (r.k === 'bus' && r.type === 'watcher.waiting' && r.alloc === ids.hi ? i + 1 : 0)).filter(Boolean);
    expect(waits).to.have.length(2);
    const waiting = Math.max(at('waiting-prev.waiting'), waits[1]!);
    const running = at('running.tasks');
    expect(waiting).to.be.greaterThan(0);
    expect(running).to.be.greaterThan(waiting);
    replayServer = await serveRecording(recordFile);
    await page.goto(replayServer.url);
    await page.locator('#replay input#slider').waitFor();
    await page.locator('#slider').fill(String(waiting));
    await page.locator(`#tree li[data-key="${hiKey}"] > .row`).click();
    await page.locator('#alloc-chart g.st.active[data-id="waiting-prev.waiting"]').waitFor();
    expect(await page.locator(`#waits g.edge[data-from="${ids.hi}"]`).count()).to.equal(2);
    await browser!.screenshot('3-replay-waiting');
    await page.locator('#slider').fill(String(running));
    await page.locator('#alloc-chart g.st.active[data-id="running.tasks"]').waitFor();
    expect(await page.locator('#alloc-chart g.st.active[data-id="waiting-prev"]').count()).to.equal(0);
    expect(await page.locator('#waits g.victim.released').count()).to.equal(2);
    await page.locator('#slider').fill(String(rec.records.length));
    await page.locator('#alloc-chart g.st.active[data-id="destroyed"]').waitFor();
    await browser!.screenshot('4-replay-end');
    console.log(`      screenshots: ${SCREENSHOT_DIR}`);
  });
});
