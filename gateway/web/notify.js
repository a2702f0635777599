// In-page notifications: toasts for `notification` and `error` frames and for the page's own
// messages, and the unread count in the title.

import { $, el } from './dom.js';
import { on, state } from './store.js';

const TOAST_MS = 6000;
const BASE_TITLE = document.title;

export function toast({ kind = 'generic', title, body }) {
  const node = el(
    'div',
    { testid: 'toast', class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', dataset: { kind } },
    title ? el('strong', { text: title }) : null,
    body ? el('p', { text: body }) : null,
    el('button', { type: 'button', class: 'icon', 'aria-label': 'Dismiss', text: '✕', onclick: () => node.remove() }),
  );
  $('#toasts').append(node);
  setTimeout(() => node.remove(), kind === 'error' ? TOAST_MS * 2 : TOAST_MS);
}

/** An answer arrived in `chat`: unread unless it is on screen and the page is visible. */
export function countAnswer(chat) {
  if (chat === state.current && document.visibilityState === 'visible') return;
  state.unread.set(chat, (state.unread.get(chat) || 0) + 1);
  showUnread();
}

export function clearUnread(chat) {
  if (!state.unread.delete(chat)) return;
  showUnread();
}

function showUnread() {
  const total = [...state.unread.values()].reduce((a, b) => a + b, 0);
  document.title = total ? `(${total}) ${BASE_TITLE}` : BASE_TITLE;
  for (const entry of document.querySelectorAll('[data-testid=channel]')) {
    const count = state.unread.get(entry.dataset.chatId) || 0;
    entry.querySelector('.unread').textContent = count ? String(count) : '';
  }
}

export function setupNotifications() {
  on('toast', toast);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') clearUnread(state.current);
  });
}
