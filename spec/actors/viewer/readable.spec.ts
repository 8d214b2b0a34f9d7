/// <reference lib="dom" />
/**
 * The viewer at 1400x900, as a person would first open it: the charts must be readable (focus
 * mode keeps the active state's neighbourhood at labels of at least 11 px; wheel and drag zoom
 * and pan; fit shows the whole chart), and a page opened after a preemptor started waiting must
 * show the wait. Real processes, headless Chromium; skips (saying why) where no browser can run.
 *
 * `BERTH_VIEWER_SCREENSHOT=docs/viewer.png` copies the screenshot of the preemptor running after
 * its victims stopped there (how the README's picture is made).
 */
import { expect } from 'chai';
import { copyFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { Allocation, Task } from '../../../model/types.ts';
import { browserUnavailable, launchBrowser, type TestBrowser } from '../../support/browser.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';

function jobAlloc(job: string, tasks: Task[], over: Partial<Allocation> = {}): Allocation {
  const a = makeAlloc(tasks, { group: { count: 3 }, ...over });
  return { ...a, jobId: job, job: { ...a.job, id: job, name: job, priority: job === 'hi' ? 80 : 20 } };
}

function shellLoop(label: string): Task {
  const script = `trap 'exit 0' INT TERM; i=0; while true; do echo "${label} tick $i"; i=$((i+1)); sleep 0.2; done`;
  return { name: 'worker', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, killTimeoutMs: 2000 };
}

/** On-screen size in px of the label of chart state `id` in chart `chart`. */
function labelPx(page: Page, chart: string, id: string): Promise<number> {
  return page.evaluate(
    ([c, s]) => {
      const text = document.querySelector(`#${c} g.st[data-id="${s}"] > text`) as SVGTextElement;
      return parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM()!.a;
    },
    [chart, id] as const,
  );
}

/** Whether the label of state `id` lies inside its chart's visible area. */
function labelVisible(page: Page, chart: string, id: string): Promise<boolean> {
  return page.evaluate(
    ([c, s]) => {
      const box = document.getElementById(c)!.getBoundingClientRect();
      const t = document.querySelector(`#${c} g.st[data-id="${s}"] > text`)!.getBoundingClientRect();
      return t.left >= box.left && t.right <= box.right && t.top >= box.top && t.bottom <= box.bottom;
    },
    [chart, id] as const,
  );
}

const viewBox = (page: Page, chart: string) => page.locator(`#${chart} svg`).getAttribute('viewBox');

describe('viewer: readable at 1400x900, and right when opened late (headless Chromium)', function () {
  this.timeout(60_000);
  const newClient = useTempClients();
  let browser: TestBrowser | undefined;

  before(async function () {
    let why = await browserUnavailable();
    if (!why) {
      try {
        browser = await launchBrowser();
      } catch (e) {
        why = `Chromium did not start: ${(e as Error).message.split('\n')[0]}`;
      }
    }
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });
  afterEach(function () {
    if (browser) {
      expect(browser.external, 'requests to other hosts').to.deep.equal([]);
      expect(browser.errors, 'errors in the page').to.deep.equal([]);
    }
  });
  after(async () => {
    await browser?.close();
  });

  it('a page opened after a preemptor started waiting shows the wait; focus mode draws the labels at 11 px or more, zoom and pan work', async () => {
    const { page } = browser!;
    await page.setViewportSize({ width: 1400, height: 900 });
    const client = newClient();
    const lo = [0, 1].map((i) => jobAlloc('lo', [shellLoop(`lo[${i}]`)]));
    const loR = lo.map((a) => client.addAlloc(a));
    await Promise.all(loR.map((r) => r.waitFor('running')));
    const hi = jobAlloc('hi', [shellLoop('hi')], { preemptedAllocations: lo.map((a) => a.id) });
    const hiR = client.addAlloc(hi);
    await hiR.waitFor('waiting-prev');

    // Only now a viewer and a page: what happened before must be rebuilt.
    const viewer = await client.serveViewer();
    await page.goto(viewer.url);
    await page.locator(`#waits g.edge[data-from="${hi.id}"]`).nth(1).waitFor();
    expect(await page.locator('#waits g.victim.released').count()).to.equal(0);
    expect(await page.locator('#waits .none').count()).to.equal(0);
    await page.locator('#alloc-chart g.st.active[data-id="waiting-prev.waiting"]').waitFor();
    await page.locator('#timeline li', { hasText: `waits for preempted ${lo[0]!.id.slice(0, 8)}` }).waitFor();

    // Focus mode (the default): the active state's label is in view and readable.
    expect(await page.locator('#alloc-chart').getAttribute('class')).to.include('focus');
    const focused = await labelPx(page, 'alloc-chart', 'waiting-prev.waiting');
    expect(focused).to.be.at.least(11);
    expect(await labelVisible(page, 'alloc-chart', 'waiting-prev.waiting')).to.equal(true);
    const taskFocused = await labelPx(page, 'task-chart', 'boot'); // not started yet: where it will start
    expect(taskFocused).to.be.at.least(11);
    await browser!.screenshot('readable-1-waiting-focus');

    // Fit: the whole chart, which is what made the labels unreadable before.
    await page.locator('button[data-chart="alloc-chart"][data-act="fit"]').click();
    const fitted = await labelPx(page, 'alloc-chart', 'waiting-prev.waiting');
    expect(fitted).to.be.below(focused);
    console.log(`      alloc chart label at 1400x900: ${focused.toFixed(1)} px in focus mode, ${fitted.toFixed(1)} px fitted`);

    // The wheel zooms around the pointer; dragging pans; both leave focus mode.
    const box = (await page.locator('#alloc-chart').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -600);
    await page.waitForFunction((f) => parseFloat(document.getElementById('alloc-chart')!.dataset.scale!) > f * 1.5, fitted / 12);
    const before = await viewBox(page, 'alloc-chart');
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 120, box.y + box.height / 2 - 80, { steps: 4 });
    await page.mouse.up();
    const after = await viewBox(page, 'alloc-chart');
    const [bx, by] = before!.split(' ').map(Number);
    const [ax, ay] = after!.split(' ').map(Number);
    expect(ax).to.be.greaterThan(bx!);
    expect(ay).to.be.greaterThan(by!);
    expect(await page.locator('#alloc-chart').getAttribute('class')).not.to.include('focus');

    // Focus again, then the alloc moves on: focus follows the active state.
    await page.locator('button[data-chart="alloc-chart"][data-act="focus"]').click();
    for (const a of lo) client.updateAlloc({ ...a, desiredStatus: 'evict', allocModifyIndex: 2 });
    await hiR.waitFor('running');
    await page.locator('#alloc-chart g.st.active[data-id="running.tasks"]').waitFor();
    await page.locator('#waits g.victim.released').nth(1).waitFor();
    await page.waitForFunction(() => {
      const t = document.querySelector('#alloc-chart g.st[data-id="running.tasks"] > text') as SVGTextElement;
      const c = document.getElementById('alloc-chart')!.getBoundingClientRect();
      const r = t.getBoundingClientRect();
      return r.left >= c.left && r.right <= c.right && r.top >= c.top && r.bottom <= c.bottom;
    });
    expect(await labelPx(page, 'alloc-chart', 'running.tasks')).to.be.at.least(11);
    await page.locator('#task-chart g.st.active[data-id="running"]').waitFor();
    expect(await labelPx(page, 'task-chart', 'running')).to.be.at.least(11);
    await page.locator('#log', { hasText: 'hi tick 2' }).waitFor();
    const shot = await browser!.screenshot('readable-2-running-focus');
    if (process.env.BERTH_VIEWER_SCREENSHOT) copyFileSync(shot, process.env.BERTH_VIEWER_SCREENSHOT);

    for (const r of client.runners()) client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: 5 });
    await Promise.all(client.runners().map((r) => r.waitFor('stopping')));
    await Promise.all(client.runners().map((r) => r.destroy()));
    await client.shutdown();
  });
});
