// The in-page dialog: asks for a name or a confirmation; Escape or Cancel closes it.

import { $ } from './dom.js';

// Kept here: the input leaves the document while the dialog asks a confirmation.
const input = $('#dialog-input');

/** Opens the dialog; resolves with the entered name (or true for a confirmation), or null when
 * cancelled. `ask` is {message, value?, confirm?: true}. */
export function ask({ message, value = '', confirm = false, okLabel = 'OK' }) {
  const dialog = $('#dialog');
  const form = $('#dialog-form');
  $('#dialog-message').textContent = message;
  $('#dialog-ok').textContent = okLabel;
  $('#dialog-ok').classList.toggle('danger', confirm);
  if (confirm) input.remove();
  else if (!input.isConnected) $('#dialog-message').after(input);
  input.value = value;
  return new Promise((resolve) => {
    const finish = (result) => {
      form.removeEventListener('submit', submit);
      $('#dialog-cancel').removeEventListener('click', cancel);
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      resolve(result);
    };
    const submit = (event) => {
      event.preventDefault();
      if (confirm) return finish(true);
      const name = input.value.trim();
      if (name) finish(name);
      else input.focus();
    };
    const cancel = (event) => {
      event?.preventDefault();
      finish(null);
    };
    form.addEventListener('submit', submit);
    $('#dialog-cancel').addEventListener('click', cancel);
    dialog.addEventListener('cancel', cancel);
    dialog.showModal();
    (confirm ? $('#dialog-cancel') : input).focus();
    if (!confirm) input.select();
  });
}
