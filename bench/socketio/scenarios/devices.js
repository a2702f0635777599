// Creates accounts with one token per device and opens their connections with bounded
// concurrency; device i of the whole population goes to gateway gatewayOf(i).
"use strict";

const { createTokens } = require("../lib/api");
const { connect, bounded } = require("../lib/client");

const accountName = (i) => `acct-${i}`;

/**
 * @returns {Promise<{devices: object[], errors: number}>} devices have
 *   {account, accountIndex, device, index, gateway, token, socket}
 */
async function openDevices(cluster, { accounts, devices, gatewayOf, onFrame, concurrency = 200, connectHistogram, onOpen }) {
  const api = cluster.gateways[0].url;
  const population = [];
  await bounded(
    Array.from({ length: accounts }, (_, a) => a),
    16,
    async (a) => {
      const tokens = await createTokens(api, cluster.adminKey, accountName(a), devices);
      tokens.forEach((token, d) => population.push({ account: accountName(a), accountIndex: a, device: d, token }));
    }
  );
  population.sort((x, y) => x.accountIndex - y.accountIndex || x.device - y.device);
  population.forEach((dev, i) => {
    dev.index = i;
    dev.gateway = gatewayOf(i);
  });
  let errors = 0;
  await bounded(population, concurrency, async (dev) => {
    const started = performance.now();
    try {
      dev.socket = await connect(cluster.gateways[dev.gateway].url, { token: dev.token }, onFrame ? (e, p, o) => onFrame(dev, e, p, o) : null);
      if (connectHistogram) connectHistogram.recordValue(Math.max(1, Math.round((performance.now() - started) * 1000)));
      if (onOpen) onOpen(dev);
    } catch (err) {
      errors++;
      if (errors <= 5) console.error(`connect ${dev.account}/${dev.device}: ${err.message}`);
    }
  });
  return { devices: population, errors };
}

function closeAll(devices) {
  for (const dev of devices) if (dev.socket) dev.socket.close();
}

module.exports = { openDevices, closeAll, accountName };
