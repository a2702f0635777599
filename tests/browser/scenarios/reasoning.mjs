// Reasoning on two devices of one account: an answer streamed by an OpenAI-compatible
// upstream with reasoning shows it on both pages in a collapsible block above the text,
// collapsed until opened, with the model and the token count below.

import assert from 'node:assert/strict';
import { NO_TOOLS_ANSWER as ANSWER, NO_TOOLS_REASONING as REASONING } from '../lib/fake_llm.mjs';
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

const PROMPT = 'what do you think?';

await run('reasoning', async (scenario) => {
  const laptop = await scenario.profile('laptop', LAPTOP);
  const phone = await scenario.profile('phone', PHONE);
  await openAndPair(laptop, 0, 'Laptop');
  await openAndPair(phone, 1, 'Phone');

  await scenario.step('the answer shows its reasoning above the text on both', async () => {
    await send(phone, PROMPT);
    for (const page of [laptop, phone]) {
      const answer = await finishedAnswer(page, PROMPT, ANSWER);
      const id = await answer.getAttribute('data-message-id');
      assert.ok(await sawStreaming(page, id), `${page.label} never showed ${id} streaming`);
      const reasoning = answer.locator(`details${byTestId('message-reasoning')}`);
      assert.match(await reasoning.textContent(), new RegExp(REASONING));
      const layout = await answer.evaluate((node) => {
        const block = node.querySelector('[data-testid="message-reasoning"]');
        const text = node.querySelector('[data-testid="message-text"]');
        return {
          above: Boolean(block.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING),
          open: block.open,
        };
      });
      assert.ok(layout.above, `${page.label}: the reasoning is not above the text`);
      assert.equal(layout.open, false, `${page.label}: the reasoning is not collapsed`);
      const meta = await answer.locator(byTestId('message-meta')).textContent();
      assert.match(meta, /\d+\s*tokens/, `${page.label}: no token count in "${meta}"`);
      await waitIdle(page);
    }
    const block = laptop.locator(`details${byTestId('message-reasoning')}`).last();
    await block.locator('summary').click();
    assert.equal(await block.evaluate((node) => node.open), true, 'the reasoning does not open');
    await scenario.shot(laptop, '01-reasoning-open-laptop');
    await scenario.shot(phone, '02-answer-phone');
  });
});
