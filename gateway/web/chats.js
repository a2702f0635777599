// The sidebar: channels with their threads (from `hello.ack`, `channel.list`,
// `channel.created`, `channel.renamed`, `channel.deleted`), selecting one, and creating,
// renaming, making default and deleting (after an in-page confirmation).

import { $, el } from './dom.js';
import { DEFAULT_CHAT, emit, net, state } from './store.js';
import { ask } from './dialog.js';

let select = () => {};

/** Replaces the known chats with a full list (keeps read markers the list omits). */
export function setChats(channels) {
  state.chats = new Map((channels || []).map((c) => [c.chat_id, { ...c }]));
  render();
}

export function upsertChat(channel) {
  if (!channel?.chat_id) return;
  state.chats.set(channel.chat_id, { ...state.chats.get(channel.chat_id), ...channel });
  render();
}

export function renameChat(chatId, name) {
  const chat = state.chats.get(chatId);
  if (chat) upsertChat({ ...chat, name });
}

/** Removes a chat; the view moves to the default channel when it was on screen. */
export function removeChat(chatId) {
  const removed = [...state.chats.values()].filter((c) => c.chat_id === chatId || c.parent_chat_id === chatId);
  for (const chat of removed) state.chats.delete(chat.chat_id);
  render();
  if (removed.some((c) => c.chat_id === state.current)) select(defaultChat());
  return removed.map((c) => c.chat_id);
}

export function defaultChat() {
  return [...state.chats.values()].find((c) => c.is_default)?.chat_id || DEFAULT_CHAT;
}

const kindOf = (chat) => chat.kind || (chat.chat_id === DEFAULT_CHAT ? 'default' : 'channel');

function entry(chat) {
  return el(
    'button',
    {
      type: 'button',
      testid: 'channel',
      class: `channel ${kindOf(chat)}`,
      'aria-current': chat.chat_id === state.current ? 'true' : null,
      dataset: { chatId: chat.chat_id, kind: kindOf(chat), default: String(Boolean(chat.is_default)) },
      onclick: () => select(chat.chat_id),
    },
    el('span', { testid: 'channel-name', class: 'name', text: chat.name || chat.chat_id }),
    chat.is_default ? el('span', { class: 'badge', text: 'default', 'aria-label': 'default channel' }) : null,
    el('span', { class: 'unread', text: state.unread.get(chat.chat_id) ? String(state.unread.get(chat.chat_id)) : '' }),
  );
}

/** Channels in the server's order, each followed by its threads. */
export function render() {
  const all = [...state.chats.values()];
  const threads = all.filter((c) => kindOf(c) === 'thread');
  const items = [];
  for (const channel of all.filter((c) => kindOf(c) !== 'thread')) {
    const own = threads.filter((t) => t.parent_chat_id === channel.chat_id);
    items.push(el('div', { class: 'channel-group' }, entry(channel), own.length ? el('div', { class: 'threads' }, own.map(entry)) : null));
  }
  // Threads whose channel is not (yet) known still show.
  const orphans = threads.filter((t) => !state.chats.has(t.parent_chat_id));
  items.push(...orphans.map(entry));
  $('#channel-list').replaceChildren(...items);
  const current = state.chats.get(state.current);
  $('#chat-title').textContent = current?.name || state.current;
  const isThread = current && kindOf(current) === 'thread';
  $('[data-testid=set-default-channel]').disabled = !current || isThread || current.is_default;
  $('[data-testid=delete-channel]').disabled = !current || current.is_default;
}

async function act(label, run) {
  try {
    await run();
  } catch (err) {
    emit('toast', { kind: 'error', title: label, body: err.message });
  }
}

export function setupSidebar(selectChat) {
  select = selectChat;
  $('[data-testid=new-channel]').addEventListener('click', async () => {
    const name = await ask({ message: 'Name of the new channel', okLabel: 'Create' });
    if (!name) return;
    act('New channel', async () => {
      const frame = await net.conn.request('channel.create', { name, kind: 'channel' }, { expect: ['channel.created'] });
      upsertChat(frame.payload);
      select(frame.payload.chat_id);
    });
  });
  $('[data-testid=new-thread]').addEventListener('click', async () => {
    const current = state.chats.get(state.current);
    const parent = current && kindOf(current) === 'thread' ? current.parent_chat_id : state.current;
    const name = await ask({ message: `Name of the new thread in ${state.chats.get(parent)?.name || parent}`, okLabel: 'Create' });
    if (!name) return;
    act('New thread', async () => {
      const frame = await net.conn.request('channel.create', { name, kind: 'thread', parent_chat_id: parent }, { chat: parent, expect: ['channel.created'] });
      upsertChat(frame.payload);
      select(frame.payload.chat_id);
    });
  });
  $('[data-testid=rename-channel]').addEventListener('click', async () => {
    const chat = state.current;
    const name = await ask({ message: 'New name', value: state.chats.get(chat)?.name || '', okLabel: 'Rename' });
    if (!name) return;
    act('Rename', async () => {
      const frame = await net.conn.request('channel.rename', { name }, { chat, expect: ['channel.renamed'] });
      renameChat(frame.payload.chat_id || chat, frame.payload.name);
    });
  });
  $('[data-testid=set-default-channel]').addEventListener('click', () => {
    const chat = state.current;
    act('Make default', async () => {
      const frame = await net.conn.request('channel.set_default', {}, { chat, expect: ['channel.list'] });
      setChats(frame.payload.channels);
    });
  });
  $('[data-testid=delete-channel]').addEventListener('click', async () => {
    const chat = state.current;
    const name = state.chats.get(chat)?.name || chat;
    const sure = await ask({ message: `Delete “${name}” with its threads and history?`, confirm: true, okLabel: 'Delete' });
    if (!sure) return;
    act('Delete', async () => {
      // The channel.deleted answer goes through app.js like every other device's copy.
      await net.conn.request('channel.delete', {}, { chat, expect: ['channel.deleted'] });
    });
  });
}
