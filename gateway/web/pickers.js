// Pickers as UI: approvals (once / session / always / deny), the model picker (providers →
// models), choices, clarifying questions (choices or free text) and confirmations. Answered
// with `picker.select`; closed when the resolving notification arrives from any device.

import { el } from './dom.js';
import { emit, net } from './store.js';
import { appendToTurn } from './messages.js';

const APPROVAL = [
  ['once', 'Allow once'],
  ['session', 'Allow this session'],
  ['always', 'Always allow'],
  ['deny', 'Deny'],
];
/** picker_id → picker element. */
const pickers = new Map();

const option = (value, label, extra = {}) => el('button', { type: 'button', testid: 'picker-option', class: 'option', dataset: { value }, text: label || value, ...extra });

/** Renders a `picker.*` frame of `chat`. */
export function onPicker(chat, kind, payload) {
  const id = payload.picker_id;
  if (!id || pickers.has(id)) return;
  const body = [];
  if (kind === 'approval') {
    body.push(el('h3', { text: 'Approval needed' }));
    if (payload.command) body.push(el('pre', {}, el('code', { text: payload.command })));
    if (payload.description) body.push(el('p', { text: payload.description }));
    body.push(el('div', { class: 'options' }, APPROVAL.map(([value, label]) => option(value, label, value === 'deny' ? { class: 'option danger' } : {}))));
  } else if (kind === 'model') {
    const current = payload.current_model;
    body.push(el('h3', { text: 'Choose a model' }), el('p', { class: 'hint', text: current ? `Current: ${current}` : '' }));
    for (const provider of payload.providers || []) {
      const models = (provider.models || []).map((m) => option(m.id, m.label || m.id, m.id === current ? { 'aria-current': 'true' } : {}));
      body.push(el('fieldset', { class: 'provider' }, el('legend', { text: provider.label || provider.id }), el('div', { class: 'options' }, models)));
    }
  } else if (kind === 'choice') {
    body.push(el('h3', { text: payload.title || 'Choose' }));
    const choices = (payload.choices || []).map((c) => option(c.value, c.label, c.is_current ? { 'aria-current': 'true' } : {}));
    body.push(el('div', { class: 'options' }, choices));
  } else if (kind === 'clarify') {
    body.push(el('h3', { text: payload.question || 'The agent asks' }));
    const choices = (payload.choices || []).map((c) => {
      const value = typeof c === 'string' ? c : c.value ?? c.label ?? c.text ?? JSON.stringify(c);
      return option(String(value), typeof c === 'string' ? c : c.label ?? c.text ?? String(value));
    });
    if (choices.length) body.push(el('div', { class: 'options' }, choices));
    const input = el('input', { testid: 'picker-input', placeholder: 'Your answer', 'aria-label': 'Your answer' });
    body.push(el('form', { class: 'free-text', onsubmit: (e) => (e.preventDefault(), input.value.trim() && answer(node, chat, input.value.trim())) }, input, el('button', { type: 'submit', testid: 'picker-submit', text: 'Answer' })));
  } else if (kind === 'confirm') {
    body.push(el('h3', { text: payload.title || 'Confirm' }));
    if (payload.message) body.push(el('p', { text: payload.message }));
    body.push(el('div', { class: 'options' }, option('yes', 'Yes'), option('no', 'No')));
  }
  const status = el('p', { class: 'picker-status', 'aria-live': 'polite' });
  const node = el('section', { testid: 'picker', class: `picker ${kind}`, dataset: { kind, pickerId: id, answered: 'false' } }, body, status);
  node.addEventListener('click', (event) => {
    const button = event.target.closest('[data-testid=picker-option]');
    if (button && node.dataset.answered !== 'true') answer(node, chat, button.dataset.value);
  });
  pickers.set(id, node);
  appendToTurn(chat, node);
}

function answer(node, chat, value) {
  node.dataset.pending = 'true';
  net.conn
    .request('picker.select', { picker_id: node.dataset.pickerId, value }, { chat, expect: ['notification'] })
    .then((frame) => resolved(node.dataset.pickerId, frame.payload?.choice ?? value))
    .catch((err) => {
      delete node.dataset.pending;
      if (err.code === 'not_found') resolved(node.dataset.pickerId, null);
      else emit('toast', { kind: 'error', title: 'Not answered', body: err.message });
    });
}

/** Whether picker `pickerId` is in the chat on screen (its notices need no toast then). */
export const shown = (pickerId) => Boolean(pickers.get(pickerId)?.isConnected);

/** Closes a picker: answered here, on another device (`choice`), or already gone (null). */
export function resolved(pickerId, choice) {
  const node = pickers.get(pickerId);
  if (!node || node.dataset.answered === 'true') return;
  node.dataset.answered = 'true';
  delete node.dataset.pending;
  for (const control of node.querySelectorAll('button, input')) control.disabled = true;
  for (const button of node.querySelectorAll('[data-testid=picker-option]')) {
    if (button.dataset.value === choice) button.setAttribute('aria-pressed', 'true');
  }
  node.querySelector('.picker-status').textContent = choice ? `Answered: ${choice}` : 'Answered on another device';
}
