// Wiring: starts the connection for the stored pairing, routes every frame to the module that
// owns it, and keeps the connection state, read receipts and the selected chat on screen.

import { $ } from './dom.js';
import { chatOf, clearBusy, emit, forgetPairing, loadPairing, net, on, setBusy, state } from './store.js';
import { Connection } from './connection.js';
import { hidePairing, setupPairing, showError, showPairing } from './pairing.js';
import { defaultChat, removeChat, render as renderChats, renameChat, setChats, setupSidebar, upsertChat } from './chats.js';
import { addMedia, append, dropTimelines, markQueue, markRead, onCommentary, onMessage, onStart, onStop, onUpdate, setupScrolling, showChat, streaming, visibleNewestAnswer } from './messages.js';
import { onToolEnd, onToolProgress, onToolStart, onTurnEnd } from './tools.js';
import { onPicker, resolved, shown } from './pickers.js';
import { setupComposer, showBusy } from './composer.js';
import { aboutEndedUpload, mediaNode, onBinary } from './media.js';
import { setupSearch } from './search.js';
import { clearUnread, countAnswer, setupNotifications, toast } from './notify.js';

const STATE_LABELS = { connecting: 'Connecting…', online: 'Online', restarting: 'Gateway restarting…', degraded: 'Degraded', offline: 'Offline' };
const receiptsSent = new Map();

function start(pairing) {
  net.conn?.stop();
  const conn = new Connection({ urls: pairing.gateways, token: pairing.token, deviceId: pairing.deviceId, deviceName: pairing.deviceName });
  net.conn = conn;
  conn.onFrame = dispatch;
  conn.onBinary = onBinary;
  conn.start();
}

async function selectChat(chat) {
  state.current = state.chats.has(chat) ? chat : defaultChat();
  renderChats();
  clearUnread(state.current);
  showBusy();
  document.body.classList.remove('sidebar-open');
  $('#toggle-sidebar').setAttribute('aria-expanded', 'false');
  await showChat(state.current);
  sendReceipt();
}

function dispatch(frame, answered) {
  const chat = chatOf(frame);
  const payload = frame.payload || {};
  const [family, kind] = frame.type.split('.');
  if (family === 'picker') return onPicker(chat, kind, payload);
  switch (frame.type) {
    case 'message':
      return onMessage(chat, payload);
    case 'message.start':
      return onStart(chat, payload);
    case 'message.update':
      return onUpdate(chat, payload);
    case 'message.stop':
      return onStop(chat, payload);
    case 'commentary':
      return onCommentary(chat, payload);
    case 'tool.start':
      return onToolStart(chat, payload);
    case 'tool.progress':
      return onToolProgress(chat, payload);
    case 'tool.end':
      return onToolEnd(chat, payload);
    case 'media.offer':
      // An upload's own offer answers it; any other is media the agent sent.
      if (answered) return;
      if (streaming(chat)) return addMedia(streaming(chat), payload);
      return append(chat, mediaNode(payload));
    case 'agent.busy':
      setBusy(chat, payload.unavailable ? 'unavailable' : payload.reason || 'processing');
      if (payload.message_id || payload.queued) markQueue(chat, payload.message_id, payload.queued || []);
      return showBusy();
    case 'agent.idle':
      setBusy(chat, null);
      markQueue(chat, null, null);
      onTurnEnd(chat);
      return showBusy();
    case 'channel.list':
      setChats(payload.channels);
      for (const id of state.chats.keys()) markRead(id);
      if (!state.chats.has(state.current)) selectChat(defaultChat());
      return;
    case 'channel.created':
      return upsertChat(payload);
    case 'channel.renamed':
      return renameChat(payload.chat_id || chat, payload.name);
    case 'channel.deleted':
      for (const id of removeChat(payload.chat_id || chat)) dropTimelines(id);
      return;
    case 'notification':
      if (payload.picker_id && payload.choice !== undefined) resolved(payload.picker_id, payload.choice);
      // A picker on screen says it all: opened, or answered (here or elsewhere).
      if (!answered && !shown(payload.picker_id)) toast({ kind: payload.kind || 'generic', title: payload.title, body: payload.body });
      return;
    case 'error':
      if (!answered && !aboutEndedUpload(payload.message)) toast({ kind: 'error', title: `Error (${payload.code})`, body: payload.message });
      return;
    case 'sync.done':
      // Redis lost the cluster's data: pair again for fresh channels (the cursor is already
      // moved to the new head).
      if (payload.reset && frame.id === undefined) net.conn.reconnect();
      return;
    default:
  }
}

/** Marks the newest answer of the chat on screen read once it is visible. */
function sendReceipt() {
  clearTimeout(sendReceipt.timer);
  sendReceipt.timer = setTimeout(() => {
    const chat = state.current;
    const id = net.conn?.paired && visibleNewestAnswer();
    if (!id || state.chats.get(chat)?.last_read_message_id === id || receiptsSent.get(chat) === id) return;
    receiptsSent.set(chat, id);
    net.conn.request('read.receipt', { chat_id: chat, message_id: id }, { chat, expect: ['channel.list'] }).catch(() => receiptsSent.delete(chat));
  }, 300);
}

function setupConnectionView() {
  const badge = $('[data-testid=conn-state]');
  on('conn-state', ({ state: connState, gateway }) => {
    badge.dataset.state = connState;
    badge.dataset.gateway = gateway || '';
    badge.textContent = STATE_LABELS[connState] || connState;
    badge.title = gateway || '';
  });
  on('paired', (ack) => {
    state.caps = ack.server_caps || {};
    setChats(ack.channels);
    hidePairing();
    // Offer only what the cluster has (`server_caps`).
    $('.attach').hidden = state.caps.media === false;
    $('#search-form').hidden = state.caps.search === false;
    if (!state.chats.has(state.current)) state.current = defaultChat();
    renderChats();
  });
  on('synced', async ({ reset }) => {
    if (reset) {
      dropTimelines();
      clearBusy();
    }
    if (!state.chats.has(state.current)) state.current = defaultChat();
    renderChats();
    showBusy();
    await showChat(state.current);
    sendReceipt();
  });
  on('auth-failed', (message) => showPairing(message));
  on('conn-error', (message) => showError(message));
  on('answer', (chat) => {
    countAnswer(chat);
    if (chat === state.current) sendReceipt();
  });
  on('timeline-changed', sendReceipt);
  document.addEventListener('visibilitychange', sendReceipt);
}

function setupChrome() {
  $('#forget-device').addEventListener('click', () => {
    net.conn?.stop();
    net.conn = null;
    forgetPairing();
    state.chats.clear();
    clearBusy();
    state.unread.clear();
    dropTimelines();
    $('#messages').replaceChildren();
    showPairing();
    emit('conn-state', { state: 'offline', gateway: '' });
  });
  $('#toggle-sidebar').addEventListener('click', () => {
    const open = document.body.classList.toggle('sidebar-open');
    $('#toggle-sidebar').setAttribute('aria-expanded', String(open));
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && document.body.classList.contains('sidebar-open')) document.body.classList.remove('sidebar-open');
  });
}

setupNotifications();
setupConnectionView();
setupChrome();
setupPairing(start);
setupSidebar(selectChat);
setupScrolling();
setupComposer();
setupSearch(selectChat);
const stored = loadPairing();
if (stored?.token && stored?.gateways?.length) {
  hidePairing();
  start(stored);
} else showPairing();
