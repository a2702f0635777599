// The sidebar, search and media across two devices of one account, a laptop and a
// desktop: a channel created on the laptop shows on the desktop and is renamed there; a
// search on the desktop finds a message of that channel and jumps to it; an image uploaded
// on the laptop is shown, decoded, on both; a scratch channel deleted on the desktop
// disappears from the laptop.

import assert from 'node:assert/strict';
import { PLAIN_ANSWER, PLAIN_PROMPT } from '../lib/fake_llm.mjs';
import { run } from '../lib/harness.mjs';
import { png } from '../lib/png.mjs';
import {
  LAPTOP,
  byTestId,
  finishedAnswer,
  openAndPair,
  send,
  userMessage,
  waitIdle,
} from '../lib/web_client.mjs';

const CHANNEL = 'Research';
const RENAMED = 'Research notes';
const SCRATCH = 'Scratch';
/** A word no other message has, to search for. */
const NEEDLE = 'zephyrine';
const NEEDLE_PROMPT = `${PLAIN_PROMPT}, remember the word ${NEEDLE}`;
const IMAGE_CAPTION = 'a picture of a square';

/** The sidebar entry named `name` (exactly). */
function channelNamed(page, name) {
  return page
    .locator(`${byTestId('channel-list')} ${byTestId('channel')}`)
    .filter({ has: page.locator(byTestId('channel-name'), { hasText: new RegExp(`^${name}$`) }) });
}

/** Answers the page's open dialog with `value` (when it asks for a name). */
async function answerDialog(page, value) {
  const dialog = page.locator(byTestId('dialog'));
  await dialog.waitFor();
  if (value !== undefined) await dialog.locator(byTestId('dialog-input')).fill(value);
  await dialog.locator(byTestId('dialog-ok')).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** Selects the sidebar entry named `name` and waits until it is the open chat. */
async function openChannel(page, name) {
  const entry = channelNamed(page, name);
  await entry.click();
  await page.waitForFunction(
    (wanted) =>
      [...document.querySelectorAll('[data-testid="channel"][aria-current="true"]')].some(
        (node) => node.querySelector('[data-testid="channel-name"]')?.textContent === wanted,
      ),
    name,
  );
}

await run('channels_search_media', async (scenario) => {
  const laptop = await scenario.profile('laptop', LAPTOP);
  const desktop = await scenario.profile('desktop', LAPTOP);
  await openAndPair(laptop, 0, 'Laptop');
  await openAndPair(desktop, 1, 'Desktop');
  let channelId;

  await scenario.step('a channel created on the laptop shows on the desktop', async () => {
    await laptop.locator(byTestId('new-channel')).click();
    await answerDialog(laptop, CHANNEL);
    await channelNamed(laptop, CHANNEL).waitFor();
    await channelNamed(desktop, CHANNEL).waitFor();
    channelId = await channelNamed(laptop, CHANNEL).getAttribute('data-chat-id');
    assert.equal(await channelNamed(desktop, CHANNEL).getAttribute('data-chat-id'), channelId);
  });

  await scenario.step('a message in the new channel is answered', async () => {
    await openChannel(laptop, CHANNEL);
    await send(laptop, NEEDLE_PROMPT);
    await finishedAnswer(laptop, NEEDLE_PROMPT, PLAIN_ANSWER);
    await waitIdle(laptop);
  });

  await scenario.step('the desktop renames the channel and the laptop shows the new name', async () => {
    await openChannel(desktop, CHANNEL);
    await desktop.locator(byTestId('rename-channel')).click();
    await answerDialog(desktop, RENAMED);
    await channelNamed(laptop, RENAMED).waitFor();
    assert.equal(await channelNamed(laptop, RENAMED).getAttribute('data-chat-id'), channelId);
  });

  await scenario.step('a search on the desktop jumps to the message in its channel', async () => {
    const channels = desktop.locator(byTestId('channel')).first();
    await channels.click();
    const search = desktop.locator(`input${byTestId('search-input')}`);
    await search.fill(NEEDLE);
    await search.press('Enter');
    const hit = desktop.locator(`${byTestId('search-result')}[data-chat-id="${channelId}"]`).first();
    await hit.waitFor();
    const messageId = await hit.getAttribute('data-message-id');
    await hit.click();
    const target = desktop.locator(
      `${byTestId('message')}[data-message-id="${messageId}"][data-highlight="true"]`,
    );
    await target.waitFor();
    assert.match(await target.textContent(), new RegExp(NEEDLE));
    await desktop.waitForFunction(
      (id) => document.querySelector(`[data-testid="channel"][data-chat-id="${id}"]`)
        ?.getAttribute('aria-current') === 'true',
      channelId,
    );
    await scenario.shot(desktop, '01-search-jump-desktop');
  });

  await scenario.step('an image uploaded on the laptop is shown on both', async () => {
    await laptop
      .locator(`input[type="file"]${byTestId('attach')}`)
      .setInputFiles({ name: 'square.png', mimeType: 'image/png', buffer: png(48, 48) });
    await laptop.locator(`${byTestId('attachment')}[data-state="ready"]`).waitFor();
    await send(laptop, IMAGE_CAPTION);
    for (const page of [laptop, desktop]) {
      const message = await userMessage(page, IMAGE_CAPTION);
      const image = message.locator(`img${byTestId('media-image')}`);
      await image.waitFor();
      await page.waitForFunction(
        (node) => node.complete && node.naturalWidth === 48,
        await image.elementHandle(),
      );
    }
    await scenario.shot(laptop, '02-image-laptop');
    await waitIdle(laptop, 90_000);
  });

  await scenario.step('a channel deleted on the desktop disappears from the laptop', async () => {
    await laptop.locator(byTestId('new-channel')).click();
    await answerDialog(laptop, SCRATCH);
    await channelNamed(desktop, SCRATCH).waitFor();
    await openChannel(desktop, SCRATCH);
    await desktop.locator(byTestId('delete-channel')).click();
    await answerDialog(desktop);
    await channelNamed(laptop, SCRATCH).waitFor({ state: 'detached' });
    await channelNamed(desktop, SCRATCH).waitFor({ state: 'detached' });
    await scenario.shot(laptop, '03-channels-laptop');
  });
});
