// Two devices of one account, a laptop on gateway 0 and a phone on gateway 1: a message
// sent on the laptop shows on both with Hermes' answer streamed (model and tokens); a
// dangerous command's approval picker shows on both and is answered on the phone; the
// tool card ends ok on both and the turn ends.

import assert from 'node:assert/strict';
import {
  DANGEROUS_PROMPT,
  PLAIN_ANSWER,
  PLAIN_PROMPT,
  TOOL_ANSWER_PREFIX,
} from '../lib/fake_llm.mjs';
import { run } from '../lib/harness.mjs';
import {
  LAPTOP,
  PHONE,
  byTestId,
  finishedAnswer,
  openAndPair,
  sawStreaming,
  send,
  waitIdle,
} from '../lib/web_client.mjs';

await run('turn_and_approval', async (scenario) => {
  const laptop = await scenario.profile('laptop', LAPTOP);
  const phone = await scenario.profile('phone', PHONE);

  await scenario.step('both devices pair and are online', async () => {
    await openAndPair(laptop, 0, 'Laptop');
    await openAndPair(phone, 1, 'Phone');
    await scenario.shot(laptop, '01-paired-laptop');
  });

  await scenario.step('a message sent on the laptop is answered, streamed, on both', async () => {
    await send(laptop, PLAIN_PROMPT);
    for (const page of [laptop, phone]) {
      const answer = await finishedAnswer(page, PLAIN_PROMPT, PLAIN_ANSWER);
      const id = await answer.getAttribute('data-message-id');
      assert.ok(await sawStreaming(page, id), `${page.label} never showed ${id} streaming`);
      const meta = await answer.locator(byTestId('message-meta')).textContent();
      assert.match(meta, /\d/, `${page.label}: no token count in "${meta}"`);
      await waitIdle(page);
    }
    await scenario.shot(laptop, '02-streamed-answer-laptop');
    await scenario.shot(phone, '03-streamed-answer-phone');
  });

  await scenario.step('the approval picker shows on both and is answered on the phone', async () => {
    await send(laptop, DANGEROUS_PROMPT);
    const pickers = [];
    for (const page of [laptop, phone]) {
      const picker = page.locator(`${byTestId('picker')}[data-kind="approval"]`).last();
      await picker.waitFor();
      assert.match(await picker.textContent(), /rm -rf/, `${page.label}: no command shown`);
      pickers.push(picker);
    }
    const ids = await Promise.all(pickers.map((picker) => picker.getAttribute('data-picker-id')));
    assert.equal(ids[0], ids[1], 'the two devices show different pickers');
    await scenario.shot(phone, '04-approval-phone');
    await pickers[1].locator(`${byTestId('picker-option')}[data-value="once"]`).click();
    await phone
      .locator(`${byTestId('picker')}[data-picker-id="${ids[1]}"][data-answered="true"]`)
      .waitFor();
  });

  await scenario.step('the approved tool ends ok and the turn finishes on both', async () => {
    for (const page of [laptop, phone]) {
      await page.locator(`${byTestId('tool-card')}[data-state="ok"]`).last().waitFor();
      await finishedAnswer(page, DANGEROUS_PROMPT, TOOL_ANSWER_PREFIX);
      await waitIdle(page);
    }
    await scenario.shot(laptop, '05-tool-done-laptop');
  });
});
