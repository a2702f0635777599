// Publishes frames through the gateways' HTTP publish endpoint at a fixed total rate,
// round-robin over accounts and gateways. Each frame carries the bench's own per-account
// sequence number `seq` (Socket.IO frames have none) and its send time `t` (epoch ms).
"use strict";

const { publish } = require("./api");
const { nowMs } = require("./client");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class Publisher {
  constructor(cluster, accounts, rate, { maxInFlight = 256 } = {}) {
    this.cluster = cluster;
    this.accounts = accounts;
    this.rate = rate;
    this.maxInFlight = maxInFlight;
    this.nextSeq = new Map(accounts.map((a) => [a, 0]));
    this.acked = new Map(accounts.map((a) => [a, new Set()])); // seqs accepted (202)
    this.issued = 0;
    this.accepted = 0;
    this.errors = 0;
    this.inFlight = 0;
    this.running = false;
    if (process.env.SIO_DEBUG) this.sentAt = new Map();
  }

  start() {
    this.running = true;
    this.done = this.loop();
    return this;
  }

  async loop() {
    const started = performance.now();
    const G = this.cluster.gateways.length;
    while (this.running) {
      const due = Math.floor(((performance.now() - started) / 1000) * this.rate);
      while (this.issued < due && this.inFlight < this.maxInFlight) {
        const k = this.issued++;
        this.send(this.accounts[k % this.accounts.length], this.cluster.gateways[k % G].url);
      }
      await sleep(2);
    }
    while (this.inFlight) await sleep(5);
  }

  send(account, url) {
    const seq = this.nextSeq.get(account) + 1;
    this.nextSeq.set(account, seq);
    this.inFlight++;
    const t = nowMs();
    if (this.sentAt) this.sentAt.set(`${account}/${seq}`, t);
    return publish(url, this.cluster.adminKey, account, { text: "bench frame", seq, t })
      .then(
        () => {
          this.acked.get(account).add(seq);
          this.accepted++;
        },
        (err) => {
          if (++this.errors <= 5) console.error(`publish: ${err.message}`);
        }
      )
      .finally(() => this.inFlight--);
  }

  async stop() {
    if (!this.done) return;
    this.running = false;
    await this.done;
  }
}

module.exports = { Publisher };
