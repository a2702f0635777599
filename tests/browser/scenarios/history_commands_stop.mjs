// The rest of a day's use, on the echo agent: a chat with 130 earlier messages (published
// through the server API) loads its newest page and scrolls back through all of them, each
// once and in order; slash commands autocomplete (`/ti` → `/title`) and rename the chat on
// both devices; a notification published by the server shows as a toast on both; a page
// reloaded during a long answer still shows the chat busy, and the answer is stopped with the
// Stop button and ends at once, cut short; a message sent during an answer shows at once on
// both pages, marked queued, and is answered after it; the busy policy picker changes the
// chat's policy; read receipts of the other device show on each.

import assert from 'node:assert/strict';
import { gateways, run } from '../lib/harness.mjs';
import {
  LAPTOP,
  byTestId,
  finishedAnswer,
  messages,
  openAndPair,
  userMessage,
  send,
  waitForState,
  waitIdle,
} from '../lib/web_client.mjs';

const ACCOUNT = process.env.IRIS_WEB_ACCOUNT;
const ADMIN_KEY = process.env.IRIS_WEB_ADMIN_KEY;
/** Messages published before the pages open: more than one history page. */
const EARLIER = 130;
const earlierText = (n) => `digest ${String(n).padStart(3, '0')}`;
const TITLE = 'Digests';
/** Long enough that the echo agent streams it for several seconds at the test's delay. */
const LONG_PROMPT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/** Calls the server API of gateway 0. */
async function api(path, body) {
  const response = await fetch(`${gateways[0]}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 202, `${path}: ${await response.text()}`);
}

/** The texts of the open chat's messages that are earlier digests, in page order. */
async function digestsShown(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="messages"] [data-testid="message-text"]')]
      .map((node) => node.textContent.trim())
      .filter((text) => /^digest \d{3}$/.test(text)),
  );
}

await run('history_commands_stop', async (scenario) => {
  assert.ok(ACCOUNT && ADMIN_KEY, 'IRIS_WEB_ACCOUNT and IRIS_WEB_ADMIN_KEY are needed');

  await scenario.step(`${EARLIER} earlier messages are published`, async () => {
    for (let n = 1; n <= EARLIER; n += 1) {
      await api(`/accounts/${ACCOUNT}/messages`, { text: earlierText(n), key: `digest-${n}` });
    }
  });

  const laptop = await scenario.profile('laptop', LAPTOP);
  const desktop = await scenario.profile('desktop', LAPTOP);

  await scenario.step('the chat opens on its newest page and scrolls back through all', async () => {
    await openAndPair(laptop, 0, 'Laptop');
    const newest = messages(laptop).filter({ hasText: earlierText(EARLIER) });
    await newest.first().waitFor({ timeout: 30_000 });
    const first = await digestsShown(laptop);
    assert.ok(first.length < EARLIER, `the first page already holds all ${first.length}`);
    const list = laptop.locator(byTestId('messages'));
    for (let attempt = 0; attempt < 60; attempt += 1) {
      const shown = await digestsShown(laptop);
      if (shown.includes(earlierText(1))) break;
      await list.evaluate((node) => {
        node.scrollTop = 0;
      });
      await laptop.waitForTimeout(250);
    }
    const all = await digestsShown(laptop);
    const expected = Array.from({ length: EARLIER }, (_, i) => earlierText(i + 1));
    assert.deepEqual(all, expected, 'history is missing, doubling or reordering messages');
    await scenario.shot(laptop, '01-history-scrolled-back-laptop');
  });

  await scenario.step('a slash command autocompletes and renames the chat on both', async () => {
    await openAndPair(desktop, 1, 'Desktop');
    const composer = laptop.locator(`textarea${byTestId('composer')}`);
    await composer.fill('/ti');
    const suggestion = laptop.locator(`${byTestId('command-suggestion')}[data-name="/title"]`);
    await suggestion.waitFor();
    await scenario.shot(laptop, '02-slash-suggestions-laptop');
    await composer.press('Tab');
    assert.match(await composer.inputValue(), /^\/title\s/, 'Tab did not take the suggestion');
    await composer.pressSequentially(TITLE);
    await composer.press('Enter');
    for (const page of [laptop, desktop]) {
      await page
        .locator(`${byTestId('channel')}[data-default="true"] ${byTestId('channel-name')}`)
        .filter({ hasText: TITLE })
        .waitFor();
    }
  });

  await scenario.step('a notification from the server shows on both', async () => {
    await api(`/accounts/${ACCOUNT}/notifications`, {
      title: 'Backup finished',
      body: 'All 3 volumes',
    });
    for (const page of [laptop, desktop]) {
      await page.locator(byTestId('toast')).filter({ hasText: 'Backup finished' }).waitFor();
    }
    await scenario.shot(desktop, '03-notification-desktop');
  });

  await scenario.step('a page reloaded during a long answer shows it busy; Stop ends it at once, cut short', async () => {
    await send(desktop, LONG_PROMPT);
    const streaming = messages(desktop).and(
      desktop.locator('[data-role="assistant"][data-state="streaming"]'),
    );
    await streaming.last().waitFor();
    await desktop.locator(byTestId('agent-busy')).waitFor();
    // The reloaded page syncs from past the turn's agent.busy and still knows the turn runs.
    await laptop.locator(byTestId('agent-busy')).waitFor();
    await laptop.reload();
    await waitForState(laptop, 'online');
    await laptop.locator(byTestId('agent-busy')).waitFor({ timeout: 3_000 });
    assert.equal(await laptop.locator(byTestId('stop')).isDisabled(), false, 'Stop is offered after the reload');
    const stop = desktop.locator(byTestId('stop'));
    const stoppedAt = Date.now();
    await stop.click();
    await waitIdle(desktop, 10_000);
    const tookMs = Date.now() - stoppedAt;
    assert.ok(tookMs < 5_000, `the turn went on for ${tookMs} ms after Stop`);
    const last = messages(desktop).and(desktop.locator('[data-role="assistant"]')).last();
    assert.equal(await last.getAttribute('data-state'), 'done');
    const text = await last.locator(byTestId('message-text')).textContent();
    assert.ok(!text.includes('word39'), `the whole answer was written after Stop: ${text}`);
    await waitIdle(laptop, 10_000);
    await scenario.shot(desktop, '04-stopped-desktop');
  });

  await scenario.step('a message sent during an answer shows queued on both at once, then is answered', async () => {
    await send(desktop, LONG_PROMPT);
    await messages(desktop).and(desktop.locator('[data-role="assistant"][data-state="streaming"]')).last().waitFor();
    await send(laptop, 'a queued question');
    for (const page of [laptop, desktop]) {
      const queued = await userMessage(page, 'a queued question');
      await queued.and(page.locator('[data-queue="queued"]')).waitFor({ timeout: 3_000 });
    }
    // Still streaming the long answer: the question did not wait for it to be shown.
    assert.equal(await desktop.locator(byTestId('agent-busy')).isHidden(), false, 'the long answer ended first');
    await scenario.shot(desktop, '05-queued-desktop');
    for (const page of [laptop, desktop]) {
      await finishedAnswer(page, 'a queued question', 'echo: a queued question');
      await waitIdle(page, 30_000);
      const answered = await userMessage(page, 'a queued question');
      assert.equal(await answered.getAttribute('data-queue'), null, `${page.label}: still marked after its answer`);
    }
  });

  await scenario.step('the busy policy picker sets the chat to interrupt', async () => {
    await desktop.locator(`select${byTestId('busy-policy')}`).selectOption('interrupt');
    for (const page of [laptop, desktop]) {
      await messages(page)
        .and(page.locator('[data-role="system"]'))
        .filter({ hasText: 'Busy policy for this chat: interrupt' })
        .waitFor();
    }
  });

  await scenario.step('each device shows the other one read the answer', async () => {
    await send(laptop, 'hello again');
    for (const page of [laptop, desktop]) {
      const answer = await finishedAnswer(page, 'hello again', 'hello again');
      await answer.locator(byTestId('message-read')).waitFor();
    }
  });
});
