/**
 * Headless Chromium for the viewer's browser specs: Debian's `chromium` driven by playwright-core,
 * a fresh profile per launch, and every request to a host other than this machine recorded and
 * refused (a spec then fails: the page must load nothing from outside).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

/**
 * The browser binary, found the way .ci/run installs it: BERTH_CHROMIUM when set, else Debian's
 * /usr/bin/chromium, else `chromium` (or `chromium-browser`) on PATH; undefined when none.
 */
export const CHROMIUM = findChromium();

/** {@link CHROMIUM}'s lookup, from an environment and Debian's path (a spec passes its own). */
export function findChromium(env: NodeJS.ProcessEnv = process.env, debian = '/usr/bin/chromium'): string | undefined {
  if (env.BERTH_CHROMIUM) return env.BERTH_CHROMIUM;
  if (existsSync(debian)) return debian;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of ['chromium', 'chromium-browser']) if (existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}
/** Where the specs leave their screenshots (one fixed dir, overwritten each run). */
export const SCREENSHOT_DIR = join(tmpdir(), 'berth-viewer-screenshots');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why no browser can run here, or undefined when one can. */
export async function browserUnavailable(): Promise<string | undefined> {
  if (!CHROMIUM) return 'no Chromium at /usr/bin/chromium or on PATH (apt-get install chromium, or set BERTH_CHROMIUM)';
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (BERTH_CHROMIUM)`;
  try {
    await import('playwright-core');
  } catch (e) {
    return `playwright-core cannot be loaded: ${(e as Error).message}`;
  }
  return undefined;
}

/** A launched browser with one page. */
export interface TestBrowser {
  page: Page;
  context: BrowserContext;
  /** URLs the page tried to load from other hosts (refused). */
  external: string[];
  /** Uncaught errors in the page. */
  errors: string[];
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!CHROMIUM) throw new Error('no Chromium found (see browserUnavailable)');
  const executablePath = CHROMIUM;
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'berth-chromium-'));
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: FLAGS,
      viewport: { width: 1600, height: 1000 },
      timeout: 20_000,
    });
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  const external: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || LOCAL.has(url.hostname)) return route.continue();
    external.push(url.href);
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => errors.push(e.message));
  return {
    page,
    context,
    external,
    errors,
    async screenshot(name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
