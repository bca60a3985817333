import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { seedDemoData, type DemoCredentials } from '../../src/seed/index.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { DOCUMENTS } from '../helpers/readme.js';
import { toolCommand } from '../helpers/tools.js';

/** The browser the tests drive: Debian's Chromium (`apt-get install -y chromium`). */
const CHROMIUM = toolCommand('chromium');

/** Screenshots of what a person would see, for a look after a run (not kept in git). */
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
/** The screenshots the documents show: kept in git, and rewritten by every run so they stay current. */
const README_SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A browser test drives a whole page (on a machine that may be busy): more time than the suite's default. */
export const BROWSER_TIMEOUT = { timeout: 90_000 };

/** Headless Chromium (the tools suite stops before any test, naming what to install, on a machine without it). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/**
 * For a test file: a server with the demo store (its credentials in `demo`) and Chromium, started before the
 * file's tests and closed after them.
 */
export function demoStoreAndBrowser(options: { workers?: boolean } = {}) {
  const store = {} as { app: TestApp; demo: DemoCredentials; browser: Browser };
  beforeAll(async () => {
    store.app = await startTestApp(options);
    store.demo = await seedDemoData(store.app.services.db, store.app.services.config);
    store.browser = await launchChromium();
  });
  afterAll(async () => {
    await store.browser?.close();
    await store.app?.close();
  });
  return store;
}

/**
 * A browser context that may reach `origin` only: every other request is aborted and listed in
 * `blocked`, so a page that needs the internet shows it (and a test can say so).
 */
export async function offlineContext(browser: Browser, origin: string, options: BrowserContextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  // Well within the test's own time limit, so a step that finds nothing says which step it was.
  context.setDefaultTimeout(10_000);
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
    blocked.push(url);
    return route.abort('internetdisconnected');
  });
  return { context, blocked };
}

/** What went wrong on a page: uncaught errors and console errors (a refused script or request shows here). */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  return problems;
}

/**
 * Saves what `target` (a page, or one element of it) shows as screenshots/<name>.png, or with `readme` as
 * docs/screenshots/<name>.png; animations are stopped so that a run's picture differs from the last one only in its data.
 */
export async function screenshot(target: Page | Locator, name: string, { readme = false } = {}): Promise<void> {
  const folder = readme ? README_SCREENSHOTS : SCREENSHOTS;
  mkdirSync(folder, { recursive: true });
  await target.screenshot({ path: `${folder}${name}.png`, animations: 'disabled' });
  // The README links it as docs/screenshots/…, a document of docs/ as screenshots/….
  const shows = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8').includes(`](${file.startsWith('docs/') ? '' : 'docs/'}screenshots/${name}.png)`);
  if (readme && !DOCUMENTS.some(shows)) throw new Error(`no document shows docs/screenshots/${name}.png, kept for it`);
}

