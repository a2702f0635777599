// Client state: the pairing and sync cursor kept in localStorage, the chats, and a small event
// bus the modules talk over.

const PAIRING_KEY = 'iris.pairing';
const CURSOR_KEY = 'iris.cursor';
const BUSY_KEY = 'iris.busy';
export const DEFAULT_CHAT = 'android:default';

/** The connection in use (set by app.js once paired). */
export const net = { conn: null };

const bus = new EventTarget();
export const emit = (name, detail) => bus.dispatchEvent(new CustomEvent(name, { detail }));
export const on = (name, handler) => bus.addEventListener(name, (event) => handler(event.detail));

export const state = {
  /** chat id → channel object ({chat_id, name, kind, parent_chat_id, is_default, last_read_message_id}). */
  chats: new Map(),
  /** The chat (channel or thread) on screen. */
  current: DEFAULT_CHAT,
  /** chat id → busy reason, while a turn runs there (kept with the cursor, see setBusy). */
  busy: loadBusy(),
  /** chat id → unread answers. */
  unread: new Map(),
  caps: {},
};

/** The chat a frame belongs to: its thread when it names one, else its channel. */
export const chatOf = (frame) => frame.thread_id || frame.chat_id || DEFAULT_CHAT;

export function loadPairing() {
  try {
    return JSON.parse(localStorage.getItem(PAIRING_KEY));
  } catch {
    return null;
  }
}

export function savePairing(pairing) {
  localStorage.setItem(PAIRING_KEY, JSON.stringify(pairing));
}

export function forgetPairing() {
  clearTimeout(cursorWrite.timer);
  cursorWrite.pending = null;
  localStorage.removeItem(PAIRING_KEY);
  localStorage.removeItem(CURSOR_KEY);
  localStorage.removeItem(BUSY_KEY);
}

/** The chats' busy state as this profile last handled it. `agent.busy` and `agent.idle` are
 * outboxed, but a page reloaded (or a second tab opened) during a turn syncs from a cursor
 * past the turn's `agent.busy`: without this it would show the chat idle until the next turn.
 * A turn that ended meanwhile sends its `agent.idle` in the replay, which clears it. */
function loadBusy() {
  try {
    return new Map(Object.entries(JSON.parse(localStorage.getItem(BUSY_KEY)) || {}));
  } catch {
    return new Map();
  }
}

function saveBusy() {
  if (state.busy.size === 0) localStorage.removeItem(BUSY_KEY);
  else localStorage.setItem(BUSY_KEY, JSON.stringify(Object.fromEntries(state.busy)));
}

/** Marks `chat` busy for `reason`, or idle when `reason` is null. */
export function setBusy(chat, reason) {
  if (reason === null) state.busy.delete(chat);
  else state.busy.set(chat, reason);
  saveBusy();
}

/** Marks every chat idle (a reset outbox, a forgotten device). */
export function clearBusy() {
  state.busy.clear();
  saveBusy();
}

/** The highest outbox seq handled, or null before the first pairing. */
export function loadCursor() {
  const stored = localStorage.getItem(CURSOR_KEY);
  return stored === null || !Number.isSafeInteger(Number(stored)) ? null : Number(stored);
}

/** How long a new cursor may wait before it is written: a replay moves it once per frame,
 * and a localStorage write is synchronous. A cursor lost with a crash only means the
 * frames of those moments come again after a reload, merged by message id. */
const CURSOR_WRITE_DELAY_MS = 250;
const cursorWrite = { pending: null, timer: 0 };

function writeCursor() {
  clearTimeout(cursorWrite.timer);
  if (cursorWrite.pending === null) return;
  localStorage.setItem(CURSOR_KEY, String(cursorWrite.pending));
  cursorWrite.pending = null;
}

export function saveCursor(cursor) {
  if (cursorWrite.pending === null) cursorWrite.timer = setTimeout(writeCursor, CURSOR_WRITE_DELAY_MS);
  cursorWrite.pending = cursor;
}

// A page being closed or hidden (a phone switching apps) writes the cursor at once.
addEventListener('pagehide', writeCursor);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') writeCursor();
});

/** Turns the pairing form's text into WebSocket URLs: `http(s)` becomes `ws(s)`, a missing
 * scheme follows the page, and `/ws` is appended when the path does not end with it. */
export function parseGateways(text) {
  const urls = [];
  for (const raw of String(text).split(/[\s,]+/).filter(Boolean)) {
    let spec = raw;
    if (!/^[a-z]+:\/\//i.test(spec)) spec = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${spec}`;
    let url;
    try {
      url = new URL(spec);
    } catch {
      throw new Error(`"${raw}" is not a URL`);
    }
    const scheme = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' }[url.protocol];
    if (!scheme) throw new Error(`"${raw}" is not an http(s) or ws(s) URL`);
    url.protocol = scheme;
    if (!url.pathname.endsWith('/ws')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws`;
    url.hash = '';
    if (!urls.includes(url.href)) urls.push(url.href);
  }
  if (!urls.length) throw new Error('Enter at least one gateway URL');
  return urls;
}
