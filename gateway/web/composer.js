// The composer: Enter sends (Shift+Enter is a new line), slash-command suggestions from
// `commands.complete`, Stop and Steer while the agent is busy, the chat's busy policy
// (`/busy`), and attachments (file picker or drag and drop) uploaded before the message that
// carries them is sent.

import { $, el } from './dom.js';
import { emit, net, state } from './store.js';
import { upload } from './media.js';

const SUGGEST_DELAY_MS = 120;
const box = () => $('#composer');
/** Attachments of the message being written: {file, node, state, mediaId}. */
let attachments = [];
let suggestions = [];
let highlighted = -1;
let suggestTimer;
let asked = '';

export function setupComposer() {
  const textarea = box();
  $('#composer-form').addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  textarea.addEventListener('keydown', onKey);
  textarea.addEventListener('input', () => {
    autosize();
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(suggest, SUGGEST_DELAY_MS);
  });
  textarea.addEventListener('blur', () => setTimeout(hideSuggestions, 150));
  $('[data-testid=stop]').addEventListener('click', () =>
    net.conn.request('agent.stop', {}, { chat: state.current, expect: ['agent.idle'] }).catch(report('Stop')),
  );
  $('[data-testid=steer]').addEventListener('click', steer);
  $('[data-testid=busy-policy]').addEventListener('change', choosePolicy);
  $('[data-testid=attach]').addEventListener('change', (event) => {
    attach([...event.target.files]);
    event.target.value = '';
  });
  setupDrop();
}

const report = (title) => (err) => err.code !== 'disconnected' && emit('toast', { kind: 'error', title, body: err.message });

function autosize() {
  const textarea = box();
  textarea.style.height = 'auto';
  textarea.style.height = `${Math.min(textarea.scrollHeight, 200)}px`;
}

function onKey(event) {
  const open = !$('#command-suggestions').hidden && suggestions.length;
  if (open && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
    event.preventDefault();
    const step = event.key === 'ArrowDown' ? 1 : -1;
    highlight((highlighted + step + suggestions.length) % suggestions.length);
  } else if (open && (event.key === 'Tab' || (event.key === 'Enter' && !event.shiftKey && highlighted >= 0))) {
    event.preventDefault();
    complete(suggestions[Math.max(highlighted, 0)]);
  } else if (open && event.key === 'Escape') {
    event.preventDefault();
    hideSuggestions();
  } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
}

/** The busy policy picker: what a message sent while the agent works does in this chat. It
 * sends `/busy <policy>`, whose answer (a system message) says what is now in force. */
function choosePolicy(event) {
  const policy = event.target.value;
  if (!policy) return;
  net.conn
    .request('message.send', { text: `/busy ${policy}` }, { chat: state.current, expect: ['message'] })
    .catch(report('Busy policy'));
}

async function send() {
  const textarea = box();
  const text = textarea.value.trim();
  if (attachments.some((a) => a.state === 'uploading')) return emit('toast', { kind: 'generic', title: 'Uploading', body: 'Wait for the attachments to finish uploading.' });
  const ready = attachments.filter((a) => a.state === 'ready');
  if (!text && !ready.length) return;
  const payload = { text };
  if (ready.length) payload.media_refs = ready.map((a) => a.mediaId);
  const chat = state.current;
  textarea.value = '';
  autosize();
  hideSuggestions();
  const sent = attachments;
  attachments = [];
  renderAttachments();
  try {
    await net.conn.request('message.send', payload, { chat, expect: ['message'] });
  } catch (err) {
    if (err.code === 'disconnected') return;
    // Not sent: give the text and attachments back.
    if (!box().value) textarea.value = text;
    attachments = sent.concat(attachments);
    renderAttachments();
    report('Not sent')(err);
  }
}

function steer() {
  const text = box().value.trim();
  if (!text) return box().focus();
  box().value = '';
  autosize();
  net.conn
    .request('agent.steer', { text }, { chat: state.current, expect: ['notification'] })
    .then((frame) => emit('toast', { kind: 'generic', title: frame.payload?.title || 'Steer', body: frame.payload?.body }))
    .catch(report('Steer'));
}

/** Shows the busy indicator and enables Stop and Steer while the chat on screen is busy. */
export function showBusy() {
  const reason = state.busy.get(state.current);
  const indicator = $('[data-testid=agent-busy]');
  indicator.hidden = !reason;
  indicator.textContent =
    {
      tool: 'Running a tool…',
      waiting_input: 'Waiting for your answer…',
      cron: 'Running a scheduled task…',
      unavailable: 'The agent is unavailable: your message waits and is answered when it is back',
    }[reason] || 'Thinking…';
  $('[data-testid=stop]').disabled = !reason;
  $('[data-testid=steer]').disabled = !reason;
}

async function suggest() {
  const text = box().value;
  if (!/^\/\S*$/.test(text)) return hideSuggestions();
  if (text === asked) return;
  asked = text;
  try {
    const frame = await net.conn.request('commands.complete', { prefix: text }, { chat: state.current, expect: ['commands.complete'] });
    if (box().value !== text) return;
    suggestions = frame.payload?.matches || [];
    showSuggestions();
  } catch {
    hideSuggestions();
  }
}

function showSuggestions() {
  const list = $('#command-suggestions');
  list.replaceChildren(
    ...suggestions.map((match, i) =>
      el(
        'li',
        { testid: 'command-suggestion', role: 'option', id: `suggestion-${i}`, dataset: { name: match.name }, onmousedown: (e) => (e.preventDefault(), complete(match)) },
        el('strong', { text: match.name }),
        match.args_hint ? el('span', { class: 'hint', text: ` ${match.args_hint}` }) : null,
        el('span', { class: 'description', text: match.description || '' }),
      ),
    ),
  );
  list.hidden = !suggestions.length;
  highlight(suggestions.length ? 0 : -1);
}

function highlight(index) {
  highlighted = index;
  [...$('#command-suggestions').children].forEach((item, i) => item.setAttribute('aria-selected', String(i === index)));
  box().setAttribute('aria-activedescendant', index >= 0 ? `suggestion-${index}` : '');
}

function complete(match) {
  box().value = `${match.name} `;
  asked = box().value;
  hideSuggestions();
  box().focus();
}

function hideSuggestions() {
  suggestions = [];
  highlighted = -1;
  $('#command-suggestions').hidden = true;
}

/** Uploads the files as attachments of the next message. */
function attach(files) {
  for (const file of files) {
    const item = { file, state: 'uploading', progress: el('progress', { max: 1, value: 0 }) };
    attachments.push(item);
    upload(file, (fraction) => {
      item.progress.value = fraction;
    }).then(
      (offer) => {
        item.state = 'ready';
        item.mediaId = offer.media_id;
        renderAttachments();
      },
      (err) => {
        item.state = 'failed';
        item.error = err.message;
        renderAttachments();
      },
    );
  }
  renderAttachments();
}

function renderAttachments() {
  $('#attachments').replaceChildren(
    ...attachments.map((item) =>
      el(
        'li',
        { testid: 'attachment', class: `attachment ${item.state}`, dataset: { state: item.state }, title: item.error || '' },
        el('span', { text: item.file.name }),
        item.state === 'uploading' ? item.progress : el('span', { class: 'hint', text: item.state === 'ready' ? '✓' : `✗ ${item.error || ''}` }),
        el('button', { type: 'button', class: 'icon', 'aria-label': `Remove ${item.file.name}`, text: '✕', onclick: () => ((attachments = attachments.filter((a) => a !== item)), renderAttachments()) }),
      ),
    ),
  );
}

function setupDrop() {
  const hint = $('#drop-hint');
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types || [])].includes('Files');
  document.addEventListener('dragenter', (event) => {
    if (!hasFiles(event) || !net.conn?.paired) return;
    depth += 1;
    hint.hidden = false;
  });
  document.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) hint.hidden = true;
  });
  document.addEventListener('dragover', (event) => hasFiles(event) && event.preventDefault());
  document.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    hint.hidden = true;
    if (net.conn) attach([...event.dataTransfer.files]);
  });
}
