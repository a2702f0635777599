// Pairing: the form (gateway URLs, device token, device name), the stored pairing with this
// browser profile's own device_id, and forgetting the device.

import { $ } from './dom.js';
import { loadPairing, parseGateways, savePairing } from './store.js';
import { randomId } from './dom.js';

const form = () => $('#pair-form');

function defaultDeviceName() {
  const platform = navigator.userAgentData?.platform || navigator.platform || '';
  return `Web browser${platform ? ` (${platform})` : ''}`.slice(0, 64);
}

/** Shows the form, prefilled from the stored pairing or with this page's own gateway. */
export function showPairing(error = '') {
  const stored = loadPairing();
  const fields = form().elements;
  fields.gateways.value = stored?.gateways?.join(' ') || location.origin;
  fields.device_name.value = stored?.deviceName || defaultDeviceName();
  if (error) fields.token.value = '';
  else if (stored?.token) fields.token.value = stored.token;
  showError(error);
  setBusy(false);
  $('#pair-view').hidden = false;
  $('#app-view').hidden = true;
  $('#search-form').hidden = true;
  $('#forget-device').hidden = !stored;
  (error ? fields.token : fields.gateways).focus();
}

export function hidePairing() {
  $('#pair-view').hidden = true;
  $('#app-view').hidden = false;
  $('#search-form').hidden = false;
  $('#forget-device').hidden = false;
  setBusy(false);
}

export function showError(message) {
  const box = $('[data-testid=pair-error]');
  box.textContent = message;
  box.hidden = !message;
}

function setBusy(busy) {
  const button = form().querySelector('button[type=submit]');
  button.disabled = busy;
  button.textContent = busy ? 'Connecting…' : 'Pair';
}

/** Calls `start(pairing)` with the form's pairing once it is valid. */
export function setupPairing(start) {
  form().addEventListener('submit', (event) => {
    event.preventDefault();
    const fields = form().elements;
    let gateways;
    try {
      gateways = parseGateways(fields.gateways.value);
    } catch (err) {
      return showError(err.message);
    }
    const token = fields.token.value.trim();
    const deviceName = fields.device_name.value.trim() || defaultDeviceName();
    if (!token) return showError('Enter the device token.');
    const previous = loadPairing();
    // A new token for the same gateways is the same device; anything else pairs afresh.
    const deviceId = previous?.deviceId || `web-${randomId(8)}`;
    const pairing = { gateways, token, deviceName, deviceId };
    savePairing(pairing);
    showError('');
    setBusy(true);
    start(pairing);
  });
}
