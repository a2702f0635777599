// The WebSocket to a gateway: `hello`, `sync` from the last seq handled, request ids and their
// one answer, heartbeats, and reconnecting with jittered backoff through the configured
// gateways. Outboxed frames are handled once each, in seq order, across reconnects.

import { emit, loadCursor, saveCursor } from './store.js';

const HEARTBEAT_MS = 15000;
/** Silence after which the socket is taken for dead (the server pings every 15 s). */
const SILENCE_MS = 40000;
const BACKOFF_CAP_MS = 5000;
/** How long a gateway may take to open the socket and answer `hello` before the next is tried. */
const CONNECT_TIMEOUT_MS = 10000;
/** A connection that lasts this long proves the gateway good: backoff starts afresh. */
const STABLE_MS = 5000;
/** How long an answer that travels through the outbox may take, across reconnects. */
const ANSWER_TIMEOUT_MS = 30000;
/** Close codes after which reconnecting with the same token fails again. */
const FINAL_CODES = new Map([
  [4001, 'The gateway refused the token (unknown or revoked). Pair again with a new token.'],
  [4003, 'This device’s token was revoked. Pair again with a new token.'],
]);
/** Requests whose answers are not kept in the outbox: a lost socket loses them. */
const LIVE_ANSWERS = new Set(['ping', 'history', 'search', 'media.upload.start', 'media.upload.end', 'media.pull']);

export class Connection {
  constructor({ urls, token, deviceId, deviceName }) {
    Object.assign(this, { urls, token, deviceId, deviceName });
    this.index = 0;
    this.attempt = 0;
    this.socket = null;
    this.paired = false;
    this.stopped = false;
    this.cursor = loadCursor();
    // Ids stay unique across reconnects and reloads, so an answer replayed from the outbox
    // cannot be taken for the answer to a newer request.
    this.nextId = Date.now();
    this.pending = new Map();
    this.queue = [];
    this.onBinary = () => {};
    this.onFrame = () => {};
  }

  get url() {
    return this.urls[this.index % this.urls.length];
  }

  start() {
    this.stopped = false;
    this.connect();
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.wake = () => this.socket || this.retryNow();
    // The browser knows the network is gone before a heartbeat could tell: drop the socket
    // (its close may never arrive) and retry once the network is back.
    this.lost = () => this.socket && this.reconnect();
    addEventListener('online', this.wake);
    addEventListener('offline', this.lost);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.retryTimer);
    removeEventListener('online', this.wake);
    removeEventListener('offline', this.lost);
    this.socket?.close(1000, 'unpaired');
    this.socket = null;
    this.failPending(() => true, 'disconnected');
    this.setState('offline', '');
  }

  setState(state, gateway = this.url) {
    emit('conn-state', { state, gateway });
  }

  connect() {
    if (this.stopped) return;
    // No network: wait for the browser's `online` event (or the next retry) instead.
    if (navigator.onLine === false) {
      this.setState('offline', '');
      return this.scheduleRetry();
    }
    const url = this.url;
    this.setState('connecting', url);
    let socket;
    try {
      socket = new WebSocket(url);
    } catch (err) {
      emit('conn-error', `Bad gateway URL ${url}: ${err.message}`);
      return this.scheduleRetry();
    }
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.paired = false;
    this.heard = Date.now();
    socket.onopen = () => this.hello();
    socket.onmessage = (event) => {
      this.heard = Date.now();
      if (typeof event.data === 'string') this.receive(event.data);
      else this.onBinary(new Uint8Array(event.data));
    };
    socket.onclose = (event) => this.closed(socket, event);
    clearTimeout(this.connectTimer);
    this.connectTimer = setTimeout(() => {
      if (this.socket !== socket || this.paired) return;
      socket.close(4000, 'too slow');
      this.closed(socket, { code: 1006 });
    }, CONNECT_TIMEOUT_MS);
  }

  hello() {
    const id = this.id();
    const payload = { token: this.token, device_id: this.deviceId, device_name: this.deviceName, caps: { min_protocol: 1, media: true } };
    // A page with a cursor resumes: its replay comes before newer frames. A new page streams at once.
    if (this.cursor !== null) payload.resume = true;
    this.pending.set(id, { expect: new Set(['hello.ack']), type: 'hello', resolve: () => {}, reject: () => {} });
    this.sendFrame({ v: 1, id, type: 'hello', payload });
    // Pipelined right behind hello, so the replay comes before any newer frame.
    if (this.cursor !== null) this.raw('sync', { cursor: this.cursor }, ['sync.done']);
  }

  closed(socket, event) {
    if (socket !== this.socket) return;
    this.socket = null;
    this.paired = false;
    clearTimeout(this.stableTimer);
    this.failPending((p) => LIVE_ANSWERS.has(p.type) || p.type === 'hello' || p.type === 'sync', 'connection lost');
    if (this.stopped) return;
    const final = FINAL_CODES.get(event.code);
    if (final) {
      this.stop();
      return emit('auth-failed', final);
    }
    // 4100: the node is draining, the next one is ready at once; others back off.
    if (event.code === 4105) this.attempt = Math.max(this.attempt, 3);
    this.index += 1;
    this.setState('offline', '');
    if (event.code === 4100) this.retryNow();
    else this.scheduleRetry();
  }

  scheduleRetry() {
    const base = Math.min(BACKOFF_CAP_MS, 250 * 2 ** this.attempt);
    this.attempt += 1;
    const delay = base / 2 + Math.random() * (base / 2);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** Drops the socket and pairs again at once (on the next gateway). */
  reconnect() {
    const socket = this.socket;
    if (!socket) return this.retryNow();
    socket.close(4000, 'reconnect');
    this.closed(socket, { code: navigator.onLine === false ? 1006 : 4100 });
  }

  retryNow() {
    clearTimeout(this.retryTimer);
    if (!this.stopped && !this.socket) this.connect();
  }

  beat() {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return;
    if (Date.now() - this.heard > SILENCE_MS) {
      // Half-open socket: nothing heard for too long, so move on.
      this.socket.close(4000, 'silent');
      return this.closed(this.socket, { code: 4101 });
    }
    if (this.paired) this.request('ping', { ts: Date.now() }, { expect: ['pong'] }).catch(() => {});
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (Number.isSafeInteger(frame.seq)) {
      if (this.cursor !== null && frame.seq <= this.cursor) return; // already handled
      this.cursor = frame.seq;
      saveCursor(frame.seq);
    }
    const payload = frame.payload || {};
    if (frame.type === 'hello.ack') this.acked(payload);
    if (frame.type === 'sync.done') this.synced(payload);
    const waiting = frame.id !== undefined && this.pending.get(frame.id);
    if (waiting && (waiting.expect.has(frame.type) || frame.type === 'error')) {
      this.pending.delete(frame.id);
      clearTimeout(waiting.timer);
      if (frame.type === 'error') {
        if (waiting.type === 'hello') this.helloRefused(payload);
        waiting.reject(Object.assign(new Error(payload.message || payload.code), { code: payload.code, frame }));
      } else waiting.resolve(frame);
    }
    if (frame.type === 'status') this.setState(payload.state === 'online' ? 'online' : payload.state);
    this.onFrame(frame, Boolean(waiting));
  }

  acked(payload) {
    this.paired = true;
    clearTimeout(this.connectTimer);
    this.stableTimer = setTimeout(() => (this.attempt = 0), STABLE_MS);
    const first = this.cursor === null;
    if (first) {
      this.cursor = payload.sync_cursor ?? 0;
      saveCursor(this.cursor);
    }
    this.setState('online');
    emit('paired', { ...payload, first });
    const queued = this.queue.splice(0);
    for (const send of queued) send();
    if (first) emit('synced', { reset: false });
  }

  synced(payload) {
    if (payload.reset) {
      this.cursor = payload.cursor;
      saveCursor(payload.cursor);
      emit('synced', { reset: true });
    } else {
      if (Number.isSafeInteger(payload.cursor) && payload.cursor > this.cursor) {
        this.cursor = payload.cursor;
        saveCursor(payload.cursor);
      }
      emit('synced', { reset: false });
    }
  }

  helloRefused(payload) {
    if (payload.code === 'auth') {
      this.stop();
      emit('auth-failed', payload.message ? `The gateway refused the token: ${payload.message}` : 'The gateway refused the token.');
    } else if (payload.code === 'rate_limited') {
      this.attempt = Math.max(this.attempt, 3);
    }
  }

  id() {
    this.nextId += 1;
    return this.nextId;
  }

  sendFrame(frame) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  /** Sends a frame for the connection's own protocol (not queued while offline). */
  raw(type, payload, expect) {
    const id = this.id();
    this.pending.set(id, { expect: new Set(expect), type, resolve: () => {}, reject: () => {} });
    this.sendFrame({ v: 1, id, type, payload });
  }

  /** Sends a request and resolves with its answer frame (rejects on `error`). While not paired
   * the request waits and goes out right after the next `hello.ack`. A `timeout` of 0 waits
   * for as long as the connection lasts; the promise's `id` lets `forget` stop waiting. */
  request(type, payload = {}, { chat, thread, expect = [], timeout = ANSWER_TIMEOUT_MS } = {}) {
    const id = this.id();
    const answered = new Promise((resolve, reject) => {
      const frame = { v: 1, id, type, payload };
      if (chat) frame.chat_id = chat;
      if (thread) frame.thread_id = thread;
      const entry = { expect: new Set(expect), type, resolve, reject };
      if (expect.length) {
        if (timeout > 0) {
          entry.timer = setTimeout(() => {
            if (this.pending.delete(id)) reject(new Error(`no answer to ${type}`));
          }, timeout);
        }
        this.pending.set(id, entry);
      }
      const send = () => {
        this.sendFrame(frame);
        if (!expect.length) resolve(null);
      };
      if (this.paired && this.socket?.readyState === WebSocket.OPEN) send();
      else this.queue.push(send);
    });
    answered.id = id;
    return answered;
  }

  /** Stops waiting for the answer to request `id` (one that is answered only when refused). */
  forget(id) {
    clearTimeout(this.pending.get(id)?.timer);
    this.pending.delete(id);
  }

  /** Sends a binary frame; false when there is no open socket. */
  sendBinary(bytes) {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(bytes);
    return true;
  }

  get buffered() {
    return this.socket?.bufferedAmount ?? 0;
  }

  failPending(which, reason) {
    for (const [id, entry] of this.pending) {
      if (!which(entry)) continue;
      this.pending.delete(id);
      clearTimeout(entry.timer);
      entry.reject(Object.assign(new Error(reason), { code: 'disconnected' }));
    }
  }
}
