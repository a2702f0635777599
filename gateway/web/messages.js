// The message list: one timeline per chat (history pages merged with live frames by
// message_id), streamed answers, reasoning above the text, scrolling back through history,
// jumping to a message, and the read marker.

import { $, el, formatTime, renderMarkdown } from './dom.js';
import { emit, net, state } from './store.js';
import { mediaNode } from './media.js';

const PAGE = 50;
const ROLE_NAMES = { user: 'You', assistant: 'Agent', system: 'System', cron: 'Scheduled' };
const list = () => $('#messages');
const timelines = new Map();

class Timeline {
  constructor(chat) {
    this.chat = chat;
    this.el = el('div', { class: 'timeline', dataset: { chatId: chat } });
    this.byId = new Map();
    this.loaded = false;
    this.hasMore = true;
    this.oldest = null;
    this.loading = null;
    this.scrollTop = null;
  }
}

export function timeline(chat) {
  if (!timelines.has(chat)) timelines.set(chat, new Timeline(chat));
  return timelines.get(chat);
}

/** Forgets every loaded message (after a reset or a deleted chat). */
export function dropTimelines(chat) {
  if (chat) timelines.delete(chat);
  else timelines.clear();
}

/** Puts `chat` on screen and loads its newest page when it has none yet. */
export async function showChat(chat) {
  const current = list().firstElementChild;
  const previous = current && timelines.get(current.dataset.chatId);
  if (previous) previous.scrollTop = list().scrollTop;
  const tl = timeline(chat);
  list().replaceChildren(tl.el);
  if (tl.scrollTop === null) scrollToEnd();
  else list().scrollTop = tl.scrollTop;
  if (!tl.loaded) await loadOlder(chat);
}

/** Appends `node` to the chat's timeline, keeping the view at the end if it was there. */
export function append(chat, node) {
  keepingEnd(chat, () => timeline(chat).el.append(node));
}

function keepingEnd(chat, change) {
  const box = list();
  const onScreen = state.current === chat;
  const atEnd = onScreen && box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  change();
  if (atEnd) scrollToEnd();
  if (onScreen) emit('timeline-changed', chat);
}

const scrollToEnd = () => {
  list().scrollTop = list().scrollHeight;
};

/** Loads the page before the oldest loaded message (the newest page first). */
function loadOlder(chat) {
  const tl = timeline(chat);
  if (tl.loading) return tl.loading;
  if (tl.loaded && !tl.hasMore) return Promise.resolve();
  const payload = { limit: PAGE };
  if (tl.loaded && tl.oldest) payload.before_message_id = tl.oldest;
  tl.loading = net.conn
    .request('history', payload, { chat, expect: ['history'] })
    .then((frame) => {
      const page = frame.payload || {};
      const box = list();
      const heightBefore = box.scrollHeight;
      mergePage(tl, page.messages || []);
      // Keep the messages that were on screen where they were.
      if (state.current === chat && tl.loaded) box.scrollTop += box.scrollHeight - heightBefore;
      if (!tl.loaded && state.current === chat) scrollToEnd();
      tl.loaded = true;
      tl.hasMore = Boolean(page.has_more);
      tl.oldest = page.oldest_message_id || page.messages?.[0]?.message_id || tl.oldest;
      emit('timeline-changed', chat);
    })
    .catch((err) => {
      if (err.code === 'not_found') tl.hasMore = false;
      else if (err.code !== 'disconnected') emit('toast', { kind: 'error', title: 'History', body: err.message });
    })
    .finally(() => {
      tl.loading = null;
    });
  return tl.loading;
}

/** Inserts a page (oldest → newest) before the messages already shown, updating those it
 * shares with them in place. */
function mergePage(tl, messages) {
  let anchor = tl.el.firstElementChild;
  for (const data of messages) {
    const known = tl.byId.get(data.message_id);
    if (known) {
      fill(known, data, 'done');
      anchor = known.el.nextElementSibling;
    } else {
      const record = create(tl, data, 'done');
      tl.el.insertBefore(record.el, anchor);
    }
  }
}

function create(tl, data, messageState) {
  const record = {
    id: data.message_id,
    role: data.role || 'assistant',
    chat: tl.chat,
    text: el('div', { testid: 'message-text', class: 'text' }),
    steps: el('div', { class: 'steps' }),
    media: el('div', { class: 'media' }),
    meta: el('footer', { testid: 'message-meta', class: 'meta', hidden: true }),
    when: el('time', { class: 'when' }),
    reasoning: null,
    mediaIds: new Set(),
  };
  record.el = el(
    'article',
    { testid: 'message', class: `message ${record.role}`, dataset: { messageId: record.id, role: record.role, state: messageState } },
    el('header', {}, el('span', { class: 'who', text: ROLE_NAMES[record.role] || record.role }), record.when),
    record.steps,
    record.text,
    record.media,
    record.meta,
  );
  tl.byId.set(record.id, record);
  fill(record, data, messageState);
  markRead(tl.chat);
  return record;
}

function fill(record, data, messageState) {
  record.el.dataset.state = messageState;
  const text = data.text ?? data.final_text;
  if (text !== undefined && (text !== '' || !data.interrupted)) renderMarkdown(record.text, text);
  if (data.interrupted) record.el.dataset.interrupted = 'true';
  if (data.reasoning) setReasoning(record, data.reasoning);
  const ts = data.ts ?? record.ts ?? Date.now();
  record.ts = ts;
  record.when.dateTime = new Date(ts).toISOString();
  record.when.textContent = formatTime(ts);
  if (data.model) record.model = data.model;
  if (Number.isInteger(data.tokens)) record.tokens = data.tokens;
  const meta = [record.model, record.tokens !== undefined ? `${record.tokens} tokens` : null].filter(Boolean);
  record.meta.textContent = meta.join(' · ');
  record.meta.hidden = !meta.length;
  for (const ref of data.media || []) addMedia(record, ref);
}

function setReasoning(record, reasoning) {
  if (!record.reasoning) {
    const body = el('div', { class: 'reasoning-text' });
    record.reasoning = el('details', { testid: 'message-reasoning', class: 'reasoning' }, el('summary', { text: 'Reasoning' }), body);
    // Reasoning is shown above the answer.
    record.el.insertBefore(record.reasoning, record.steps);
  }
  renderMarkdown(record.reasoning.lastElementChild, reasoning);
}

export function addMedia(record, ref) {
  if (!ref?.media_id || record.mediaIds.has(ref.media_id)) return;
  record.mediaIds.add(ref.media_id);
  record.media.append(mediaNode(ref));
}

/** The message, created when a frame names one not seen yet. */
function upsert(chat, data, messageState) {
  const tl = timeline(chat);
  const known = tl.byId.get(data.message_id);
  if (known) {
    keepingEnd(chat, () => fill(known, data, messageState === 'done' || known.el.dataset.state === 'done' ? 'done' : messageState));
    return known;
  }
  let record;
  keepingEnd(chat, () => {
    record = create(tl, data, messageState);
    tl.el.append(record.el);
  });
  return record;
}

/** Marks the user's messages of `chat` as the agent reports them (`agent.busy`): the one
 * `answering` now, and those `queued` behind it, in order. `queued` null (`agent.idle`)
 * keeps the queue and only clears the answered mark. */
export function markQueue(chat, answering, queued) {
  const tl = timelines.get(chat);
  if (!tl) return;
  for (const record of tl.byId.values()) {
    if (record.role !== 'user') continue;
    if (record.id === answering) record.el.dataset.queue = 'answering';
    else if (queued?.includes(record.id)) record.el.dataset.queue = 'queued';
    else if (queued || record.el.dataset.queue === 'answering') delete record.el.dataset.queue;
  }
}

/** The answer being streamed in `chat`, if any. */
export function streaming(chat) {
  const tl = timelines.get(chat);
  if (!tl) return null;
  return [...tl.byId.values()].reverse().find((r) => r.el.dataset.state === 'streaming') || null;
}

export function onMessage(chat, payload) {
  const record = upsert(chat, payload, 'done');
  if (record.role !== 'user') emit('answer', chat);
}

export const onStart = (chat, payload) => upsert(chat, { role: payload.role || 'assistant', ...payload }, 'streaming');
export const onUpdate = (chat, payload) => upsert(chat, { role: 'assistant', ...payload }, 'streaming');

export function onStop(chat, payload) {
  upsert(chat, { role: 'assistant', ...payload }, 'done');
  emit('answer', chat);
}

export function onCommentary(chat, payload) {
  const record = upsert(chat, { role: 'assistant', message_id: payload.message_id }, 'streaming');
  const note = el('p', { class: 'commentary', testid: 'commentary' });
  renderMarkdown(note, payload.text);
  keepingEnd(chat, () => record.steps.append(note));
}

/** Adds a turn's tool card or picker to the answer being streamed (next to the steps it
 * belongs to), else to the end of the timeline. */
export function appendToTurn(chat, node) {
  const answer = streaming(chat);
  keepingEnd(chat, () => (answer ? answer.steps : timeline(chat).el).append(node));
}

/** Loads history until `messageId` is in `chat`, then scrolls to it and highlights it. */
export async function jumpTo(chat, messageId) {
  const tl = timeline(chat);
  for (let pages = 0; !tl.byId.has(messageId) && pages < 40; pages += 1) {
    if (tl.loaded && !tl.hasMore) break;
    await loadOlder(chat);
  }
  const record = tl.byId.get(messageId);
  if (!record) return emit('toast', { kind: 'error', title: 'Search', body: 'That message is no longer in the history.' });
  for (const lit of tl.el.querySelectorAll('[data-highlight]')) delete lit.dataset.highlight;
  record.el.dataset.highlight = 'true';
  record.el.scrollIntoView({ block: 'center' });
  record.el.focus?.();
}

/** Shows the chat's read marker on the message it names. */
export function markRead(chat) {
  const tl = timelines.get(chat);
  const marker = state.chats.get(chat)?.last_read_message_id;
  if (!tl) return;
  for (const old of tl.el.querySelectorAll('[data-testid=message-read]')) {
    if (old.parentElement.dataset.messageId !== marker) old.remove();
  }
  const record = marker && tl.byId.get(marker);
  if (record && !record.el.querySelector('[data-testid=message-read]')) {
    record.el.append(el('span', { testid: 'message-read', class: 'read', text: 'Read ✓' }));
  }
}

/** The newest finished answer of the chat on screen, when it is visible. */
export function visibleNewestAnswer() {
  const tl = timelines.get(state.current);
  if (!tl || document.visibilityState !== 'visible') return null;
  const records = [...tl.el.querySelectorAll('[data-testid=message][data-role=assistant][data-state=done]')];
  const newest = records[records.length - 1];
  if (!newest) return null;
  const box = list().getBoundingClientRect();
  const rect = newest.getBoundingClientRect();
  return rect.bottom > box.top && rect.top < box.bottom ? newest.dataset.messageId : null;
}

export function setupScrolling() {
  list().addEventListener('scroll', () => {
    const tl = timelines.get(state.current);
    if (tl && list().scrollTop < 120 && tl.loaded && tl.hasMore) loadOlder(state.current);
    emit('timeline-changed', state.current);
  });
}
