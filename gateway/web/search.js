// Search (`search` → `search.results`) over all chats or the one on screen, and jumping to a
// hit: its chat is opened, history paged back until the message is loaded, then it is shown.

import { $, el, formatTime } from './dom.js';
import { emit, net, state } from './store.js';
import { jumpTo } from './messages.js';

export function setupSearch(selectChat) {
  const form = $('#search-form');
  const input = $('[data-testid=search-input]');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run(input.value.trim(), $('[data-testid=search-scope]').value, selectChat);
  });
  $('#close-search').addEventListener('click', close);
  document.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
      event.preventDefault();
      input.focus();
      input.select();
    } else if (event.key === 'Escape' && !$('#search-panel').hidden && !$('#dialog').open) close();
  });
}

function close() {
  $('#search-panel').hidden = true;
}

async function run(query, scope, selectChat) {
  if (!query) return;
  const payload = { query, scope };
  if (scope === 'chat') payload.chat_id = state.current;
  const results = $('#search-results');
  $('#search-panel').hidden = false;
  results.replaceChildren(el('li', { class: 'hint', text: 'Searching…' }));
  let frame;
  try {
    frame = await net.conn.request('search', payload, { chat: scope === 'chat' ? state.current : undefined, expect: ['search.results'] });
  } catch (err) {
    results.replaceChildren(el('li', { class: 'error', text: `Search failed: ${err.message}` }));
    return;
  }
  const hits = frame.payload?.hits || [];
  if (!hits.length) return results.replaceChildren(el('li', { class: 'hint', text: `Nothing found for “${query}”.` }));
  results.replaceChildren(
    ...hits.map((hit) => {
      const chat = hit.thread_id || hit.chat_id;
      const where = state.chats.get(chat)?.name || chat;
      return el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            testid: 'search-result',
            class: 'hit',
            dataset: { messageId: hit.message_id, chatId: chat },
            onclick: async () => {
              await selectChat(chat);
              await jumpTo(chat, hit.message_id);
              if (matchMedia('(max-width: 700px)').matches) close();
            },
          },
          el('span', { class: 'hit-where', text: `${where} · ${hit.role || ''}${hit.ts ? ` · ${formatTime(hit.ts)}` : ''}` }),
          el('span', { class: 'hit-snippet', text: hit.snippet || '' }),
        ),
      );
    }),
  );
  emit('searched', hits.length);
}
