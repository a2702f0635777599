// The Redis keys and Socket.IO room names the baseline uses, in one place.
"use strict";

module.exports = {
  // Stream the Redis Streams adapter broadcasts through (and recovers sessions from).
  adapterStream: "sio:broadcast",
  // Stream of `message.send` events from the gateways to the worker, and its group.
  inbound: "sio:inbound",
  inboundGroup: "workers",
  // Hash: SHA-256 of a token -> account.
  tokens: "sio:tokens",
  accountRoom: (account) => `a:${account}`,
};
