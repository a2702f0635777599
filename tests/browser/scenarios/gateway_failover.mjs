// Nothing is missed when the gateway a page is connected to dies. The laptop's page is
// connected to gateway 0 and the phone's to gateway 1. The laptop's browser goes offline
// and gateway 0 is killed, so its page loses its connection and cannot get a new one;
// meanwhile the phone sends a message and gets its answer. When the laptop is back online
// its page reconnects, to gateway 1, and catches up: the message and the answer show
// once each, in order.

import assert from 'node:assert/strict';
import { PLAIN_ANSWER, PLAIN_PROMPT } from '../lib/fake_llm.mjs';
import { ask, gateways, run } from '../lib/harness.mjs';
import {
  LAPTOP,
  PHONE,
  byTestId,
  connectedGateway,
  countMessagesWith,
  finishedAnswer,
  openAndPair,
  send,
  statesSeen,
  waitForState,
  waitIdle,
} from '../lib/web_client.mjs';

const WARM_UP = PLAIN_PROMPT;
const MISSED = `${PLAIN_PROMPT}, sent while the laptop was away`;
/** How long the laptop stays cut off after it noticed, to prove it cannot reconnect. */
const AWAY_MS = 3_000;

await run('gateway_failover', async (scenario) => {
  const laptop = await scenario.profile('laptop', LAPTOP);
  const phone = await scenario.profile('phone', PHONE);
  await openAndPair(laptop, 0, 'Laptop');
  await openAndPair(phone, 1, 'Phone');

  await scenario.step('both see a first turn', async () => {
    assert.match(await connectedGateway(laptop), new RegExp(new URL(gateways[0]).host));
    await send(laptop, WARM_UP);
    for (const page of [laptop, phone]) {
      await finishedAnswer(page, WARM_UP, PLAIN_ANSWER);
      await waitIdle(page);
    }
  });

  await scenario.step('the laptop goes offline and its gateway is killed', async () => {
    await laptop.context().setOffline(true);
    await ask('kill-gateway 0');
    await laptop.waitForFunction(
      () => document.querySelector('[data-testid="conn-state"]')?.dataset.state !== 'online',
    );
    await scenario.shot(laptop, '01-reconnecting-laptop');
    await laptop.waitForTimeout(AWAY_MS);
    const state = await laptop.locator(byTestId('conn-state')).getAttribute('data-state');
    assert.notEqual(state, 'online', 'the laptop reconnected while offline');
  });

  await scenario.step('the phone sends a message and gets its answer meanwhile', async () => {
    await send(phone, MISSED);
    await finishedAnswer(phone, MISSED, PLAIN_ANSWER);
    await waitIdle(phone);
  });

  await scenario.step('back online, the laptop reconnects to gateway 1 and catches up', async () => {
    await laptop.context().setOffline(false);
    await waitForState(laptop, 'online', 30_000);
    const via = await connectedGateway(laptop);
    assert.match(via, new RegExp(new URL(gateways[1]).host), `reconnected through ${via}`);
    await finishedAnswer(laptop, MISSED, PLAIN_ANSWER, 30_000);
    assert.equal(await countMessagesWith(laptop, MISSED), 1, 'the missed message twice');
    assert.equal(await countMessagesWith(laptop, PLAIN_ANSWER), 2, 'answers lost or doubled');
    const states = await statesSeen(laptop);
    assert.ok(
      states.some((state) => state === 'connecting' || state === 'offline'),
      `the laptop never showed it was disconnected: ${states.join(' → ')}`,
    );
    await scenario.shot(laptop, '02-caught-up-laptop');
  });
});
