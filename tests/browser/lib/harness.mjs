// What every browser scenario shares: the setting from the test (gateway URLs, token,
// screenshot folder, Chromium), named steps with a time limit and a screenshot of every
// page when one fails, requests to the test on stdout (`@kill-gateway 0`, answered `done`
// on stdin), and page errors treated as failures.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

/** The gateways' base URLs, in the cluster's order. */
export const gateways = required('IRIS_WEB_GATEWAYS').split(/\s+/).filter(Boolean);
/** The device token of the account both profiles pair as. */
export const token = required('IRIS_WEB_TOKEN');
const screenshots = required('IRIS_WEB_SCREENSHOTS');
const chromiumPath = process.env.IRIS_CHROMIUM || '/usr/bin/chromium';

/** How long one step may take unless it says otherwise. */
const STEP_TIMEOUT_MS = 60_000;

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set: run this through tests/tests/web_client.rs`);
    process.exit(2);
  }
  return value;
}

const answers = createInterface({ input: process.stdin });
const pendingAnswers = [];
answers.on('line', (line) => pendingAnswers.shift()?.(line));

/** Asks the test to do `request` to the cluster and waits until it is done. */
export function ask(request) {
  return new Promise((resolve) => {
    pendingAnswers.push(resolve);
    console.log(`@${request}`);
  });
}

/** A scenario: a browser, its pages (one per device) and its steps. */
export class Scenario {
  constructor(name) {
    this.name = name;
    this.pages = [];
    this.pageErrors = [];
    this.dir = join(screenshots, name);
    mkdirSync(this.dir, { recursive: true });
  }

  async start() {
    this.browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    return this;
  }

  /**
   * A new browser profile (its own storage, so its own device) with one page, which
   * records every page error and logs the console.
   */
  async profile(label, viewport) {
    const context = await this.browser.newContext({ viewport, deviceScaleFactor: 1 });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    page.on('pageerror', (error) => {
      this.pageErrors.push(`${label}: ${error.stack || error}`);
      console.error(`[${label}] page error: ${error.stack || error}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') {
        console.error(`[${label}] console.${message.type()}: ${message.text()}`);
      }
    });
    page.label = label;
    this.pages.push(page);
    return page;
  }

  /** Runs `body` as the step `title`; on failure screenshots every page and says why. */
  async step(title, body, timeoutMs = STEP_TIMEOUT_MS) {
    const started = Date.now();
    console.log(`step: ${title}`);
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`took longer than ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([body(), limit]);
    } catch (error) {
      await this.failureShots(title);
      throw new Error(`step "${title}" failed: ${error.message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (this.pageErrors.length > 0) {
      throw new Error(`step "${title}": the page threw: ${this.pageErrors.join('\n')}`);
    }
    console.log(`  ok in ${Date.now() - started} ms`);
  }

  /** Keeps a screenshot of `page` as `NN-name.png`. */
  async shot(page, name) {
    const file = join(this.dir, `${name}.png`);
    await page.screenshot({ path: file, fullPage: false });
    console.log(`  screenshot ${file}`);
  }

  async failureShots(title) {
    const slug = title.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    for (const page of this.pages) {
      try {
        await page.screenshot({ path: join(this.dir, `failed-${slug}-${page.label}.png`) });
        const text = await page.locator('body').innerText({ timeout: 2_000 });
        console.error(`--- ${page.label} shows ---\n${text.slice(0, 4_000)}`);
      } catch (error) {
        console.error(`(no screenshot of ${page.label}: ${error.message})`);
      }
    }
  }

  async close() {
    answers.close();
    await this.browser?.close();
  }
}

/** Runs `scenario` (an async function of a started Scenario) and exits with its outcome. */
export async function run(name, scenario) {
  const started = Date.now();
  const run = new Scenario(name);
  try {
    await run.start();
    await scenario(run);
    console.log(`scenario ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await run.close();
    process.exit(0);
  } catch (error) {
    console.error(`scenario ${name} FAILED: ${error.stack || error}`);
    await run.close().catch(() => {});
    process.exit(1);
  }
}
