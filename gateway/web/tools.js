// Tool cards: one per tool call of a turn (`tool.start`, `tool.progress`, `tool.end`), with
// its name, preview, progress notes, duration and outcome.

import { el } from './dom.js';
import { appendToTurn } from './messages.js';

/** chat id → (tool index → card) for the turn running there. */
const open = new Map();

function card(chat, payload) {
  const tools = open.get(chat) || new Map();
  open.set(chat, tools);
  let entry = tools.get(payload.index);
  if (!entry) {
    entry = {
      name: el('strong', { class: 'tool-name' }),
      preview: el('code', { class: 'tool-preview' }),
      notes: el('ul', { class: 'tool-notes' }),
      outcome: el('span', { class: 'tool-outcome', text: 'running…' }),
    };
    entry.el = el(
      'div',
      { testid: 'tool-card', class: 'tool', dataset: { index: String(payload.index ?? 0), state: 'running' } },
      el('div', { class: 'tool-head' }, entry.name, ' ', entry.outcome),
      entry.preview,
      entry.notes,
    );
    tools.set(payload.index, entry);
    appendToTurn(chat, entry.el);
  }
  if (payload.name) entry.name.textContent = payload.name;
  return entry;
}

export function onToolStart(chat, payload) {
  // A new start with an index already used belongs to a new turn.
  open.get(chat)?.delete(payload.index);
  const entry = card(chat, payload);
  entry.preview.textContent = payload.preview || '';
  entry.preview.hidden = !payload.preview;
}

export function onToolProgress(chat, payload) {
  if (payload.note) card(chat, payload).notes.append(el('li', { text: payload.note }));
}

export function onToolEnd(chat, payload) {
  const entry = card(chat, payload);
  const ok = payload.ok !== false;
  entry.el.dataset.state = ok ? 'ok' : 'failed';
  const took = Number.isFinite(payload.duration) ? ` in ${payload.duration.toFixed(payload.duration < 10 ? 1 : 0)} s` : '';
  entry.outcome.textContent = `${ok ? '✓ done' : '✗ failed'}${took}`;
  if (payload.output_preview) entry.notes.append(el('li', { class: 'tool-output', text: payload.output_preview }));
}

/** The turn is over: later tool indexes start new cards. */
export function onTurnEnd(chat) {
  open.delete(chat);
}
