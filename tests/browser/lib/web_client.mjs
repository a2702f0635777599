// The web client as the scenarios see it: pairing, the connection state, sending, and
// the message list, through the page's stable test hooks (`data-testid` and the data
// attributes listed in docs/web-client.md).

import assert from 'node:assert/strict';
import { gateways, token } from './harness.mjs';

/** A laptop-sized window. */
export const LAPTOP = { width: 1280, height: 800 };
/** A phone-sized window (the page must stay readable on it). */
export const PHONE = { width: 390, height: 844 };

const byTestId = (id) => `[data-testid="${id}"]`;

/**
 * Records, inside the page, every connection state shown and every message ever shown
 * while streaming, so that a step can later ask what happened between two looks.
 */
function recordHistory() {
  window.__seen = { states: [], streamed: new Set() };
  const look = () => {
    const state = document.querySelector('[data-testid="conn-state"]')?.dataset.state;
    const states = window.__seen.states;
    if (state && states[states.length - 1] !== state) states.push(state);
    for (const message of document.querySelectorAll(
      '[data-testid="message"][data-state="streaming"]',
    )) {
      window.__seen.streamed.add(message.dataset.messageId);
    }
  };
  new MutationObserver(look).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['data-state'],
  });
}

/**
 * Opens the page from gateway `home` in `page`, pairs it with the scenario's token as
 * `deviceName` (listing every gateway, its own first) and waits until it is online.
 */
export async function openAndPair(page, home, deviceName) {
  await page.addInitScript(recordHistory);
  await page.goto(gateways[home] + '/');
  const form = page.locator(`form${byTestId('pair-form')}`);
  await form.waitFor();
  const urls = [...gateways.slice(home), ...gateways.slice(0, home)];
  await form.locator('[name="gateways"]').fill(urls.join(' '));
  await form.locator('[name="token"]').fill(token);
  await form.locator('[name="device_name"]').fill(deviceName);
  await form.locator('[type="submit"]').click();
  await waitForState(page, 'online');
}

/** Waits until the page shows connection state `state`. */
export async function waitForState(page, state, timeout = 30_000) {
  await page.locator(`${byTestId('conn-state')}[data-state="${state}"]`).waitFor({ timeout });
}

/** The ws URL the page is connected through. */
export async function connectedGateway(page) {
  return page.locator(byTestId('conn-state')).getAttribute('data-gateway');
}

/** Every connection state the page has shown, in order. */
export async function statesSeen(page) {
  return page.evaluate(() => window.__seen.states);
}

/** Whether the page showed message `messageId` while it was streaming. */
export async function sawStreaming(page, messageId) {
  return page.evaluate((id) => window.__seen.streamed.has(id), messageId);
}

/** Types `text` in the composer and sends it with Enter. */
export async function send(page, text) {
  const composer = page.locator(`textarea${byTestId('composer')}`);
  await composer.fill(text);
  await composer.press('Enter');
}

/** The messages of the open chat. */
export function messages(page) {
  return page.locator(`${byTestId('messages')} ${byTestId('message')}`);
}

/** The user message whose text contains `text` (waits until there is exactly one). */
export async function userMessage(page, text) {
  const found = messages(page)
    .filter({ has: page.locator(byTestId('message-text'), { hasText: text }) })
    .and(page.locator('[data-role="user"]'));
  await found.first().waitFor();
  assert.equal(await found.count(), 1, `${page.label}: "${text}" is shown more than once`);
  return found;
}

/**
 * The finished assistant message after the user message containing `prompt`, once its
 * text contains `answer`; returns its locator.
 */
export async function finishedAnswer(page, prompt, answer, timeout = 60_000) {
  await userMessage(page, prompt);
  const done = messages(page)
    .and(page.locator('[data-role="assistant"][data-state="done"]'))
    .filter({ has: page.locator(byTestId('message-text'), { hasText: answer }) });
  await done.last().waitFor({ timeout });
  return done.last();
}

/** The number of messages of the open chat whose text contains `text`. */
export async function countMessagesWith(page, text) {
  return messages(page)
    .filter({ has: page.locator(byTestId('message-text'), { hasText: text }) })
    .count();
}

/** Waits until the agent is idle on `page` (the busy indicator hidden). */
export async function waitIdle(page, timeout = 60_000) {
  await page.locator(byTestId('agent-busy')).waitFor({ state: 'hidden', timeout });
}

export { byTestId };
