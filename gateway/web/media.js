// Media over binary frames (docs/media.md): uploads (start, 64 KiB chunks paced by the
// socket's buffer, end with the SHA-256) and pulls (chunks collected into a blob: URL), and
// how a media item is shown (image, audio, video or a download link).

import { el, randomId } from './dom.js';
import { net } from './store.js';

const CHUNK = 64 * 1024;
const UPLOAD_CHUNK = 1;
const PULL_CHUNK = 2;
/** Bytes the socket may hold unsent before an upload waits. */
const HIGH_WATER = 1024 * 1024;
/** Items up to this size are pulled as soon as they are shown; larger ones on a click. */
const AUTO_PULL_BYTES = 8 * 1024 * 1024;
const MAX_PULLS = 4;

const encoder = new TextEncoder();
/** Refs of uploads refused or abandoned here: the server's errors about chunks already on the
 * way for them say nothing new. */
const ended = new Set();
const pulls = new Map(); // media_id → {chunks, promise}
const blobs = new Map(); // media_id → Promise<blob: URL>
const waiting = [];
let running = 0;

export function kindOf(mime) {
  const type = String(mime).split('/')[0];
  return { image: 'image', audio: 'audio', video: 'video' }[type] || 'document';
}

function header(kind, id, payloadLength) {
  const idBytes = encoder.encode(id);
  const frame = new Uint8Array(2 + idBytes.length + payloadLength);
  frame[0] = kind;
  frame[1] = idBytes.length;
  frame.set(idBytes, 2);
  return { frame, offset: 2 + idBytes.length };
}

/** Uploads `file`; `progress(fraction)` is called as bytes leave; resolves with the `media.offer`. */
export async function upload(file, progress) {
  const conn = net.conn;
  const ref = `web-${randomId(6)}`;
  const mime = file.type || 'application/octet-stream';
  const bytes = new Uint8Array(await file.arrayBuffer());
  const sha256 = await digest(bytes);
  const payload = { media_ref: ref, kind: kindOf(mime), mime, size: bytes.length, filename: file.name };
  // An accepted start gets no answer; a refused one gets an error, which aborts the rest.
  let refused = null;
  const start = conn.request('media.upload.start', payload, { expect: ['never'], timeout: 0 });
  start.catch((err) => {
    refused = err;
    ended.add(ref);
  });
  try {
    return await sendChunks(conn, ref, bytes, sha256, progress, () => refused);
  } catch (err) {
    ended.add(ref);
    throw err;
  } finally {
    conn.forget(start.id);
  }
}

/** Whether an `error` without id is about a chunk of an upload that already failed here. */
export const aboutEndedUpload = (message) => [...ended].some((ref) => String(message).includes(`"${ref}"`));

/** Sends the chunks, paced by the socket's buffer, then `media.upload.end`. */
async function sendChunks(conn, ref, bytes, sha256, progress, refusal) {
  for (let at = 0; at < bytes.length; at += CHUNK) {
    while (conn.buffered > HIGH_WATER && !refusal()) await sleep(20);
    if (refusal()) throw refusal();
    const part = bytes.subarray(at, at + CHUNK);
    const { frame, offset } = header(UPLOAD_CHUNK, ref, part.length);
    frame.set(part, offset);
    if (!conn.sendBinary(frame)) throw new Error('connection lost during the upload');
    progress(Math.min(1, (at + part.length - conn.buffered) / bytes.length));
  }
  while (conn.buffered > 0 && !refusal()) await sleep(20);
  progress(1);
  const offer = await conn.request('media.upload.end', { media_ref: ref, sha256 }, { expect: ['media.offer'] });
  if (refusal()) throw refusal();
  return offer.payload;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Hex SHA-256: WebCrypto where the page is a secure context, else the fallback below. */
async function digest(bytes) {
  const hash = crypto.subtle ? new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)) : sha256(bytes);
  return [...hash].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** A binary frame from the server: a pull chunk. */
export function onBinary(bytes) {
  if (bytes[0] !== PULL_CHUNK || bytes.length < 2) return;
  const idLength = bytes[1];
  const id = new TextDecoder().decode(bytes.subarray(2, 2 + idLength));
  pulls.get(id)?.chunks.push(bytes.slice(2 + idLength));
}

/** The item's bytes as a blob: URL (pulled once, at most four at a time). */
export function pull(ref) {
  if (!blobs.has(ref.media_id)) {
    const result = new Promise((resolve, reject) => waiting.push({ ref, resolve, reject }));
    blobs.set(ref.media_id, result);
    result.catch(() => blobs.delete(ref.media_id));
    pump();
  }
  return blobs.get(ref.media_id);
}

function pump() {
  while (running < MAX_PULLS && waiting.length) {
    const { ref, resolve, reject } = waiting.shift();
    running += 1;
    const transfer = { chunks: [] };
    pulls.set(ref.media_id, transfer);
    net.conn
      .request('media.pull', { media_id: ref.media_id }, { expect: ['media.pull.end'], timeout: 300000 })
      .then((end) => {
        if (!end.payload?.ok) throw new Error('the media store failed mid-way');
        resolve(URL.createObjectURL(new Blob(transfer.chunks, { type: ref.mime || '' })));
      })
      .catch(reject)
      .finally(() => {
        pulls.delete(ref.media_id);
        running -= 1;
        pump();
      });
  }
}

/** How a media item is shown; its bytes are pulled into it. */
export function mediaNode(ref) {
  const kind = ref.kind || kindOf(ref.mime);
  const name = ref.filename || ref.media_id;
  let node;
  if (kind === 'image') node = el('img', { testid: 'media-image', alt: name, dataset: { mediaId: ref.media_id } });
  else if (kind === 'audio' || kind === 'voice') node = el('audio', { testid: 'media-audio', controls: true, preload: 'metadata', dataset: { mediaId: ref.media_id } });
  else if (kind === 'video') node = el('video', { testid: 'media-video', controls: true, preload: 'metadata', dataset: { mediaId: ref.media_id } });
  else node = el('a', { testid: 'media-file', class: 'file', download: name, dataset: { mediaId: ref.media_id }, text: `${name} (${size(ref.size)})` });
  node.dataset.state = 'loading';
  const load = () =>
    pull(ref).then(
      (url) => {
        if (node.tagName === 'A') node.href = url;
        else node.src = url;
        node.dataset.state = 'ready';
      },
      (err) => {
        node.dataset.state = 'failed';
        node.title = `Could not load ${name}: ${err.message}`;
      },
    );
  if ((ref.size ?? 0) <= AUTO_PULL_BYTES) load();
  else if (node.tagName === 'A') node.addEventListener('click', (event) => node.href || (event.preventDefault(), load()), { once: false });
  else node.addEventListener('play', load, { once: true });
  return node;
}

function size(bytes) {
  if (!Number.isFinite(bytes)) return '?';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** SHA-256 for pages served over plain HTTP to another host, where WebCrypto is unavailable. */
function sha256(bytes) {
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bytes.length / 0x20000000));
  view.setUint32(padded.length - 4, (bytes.length * 8) >>> 0);
  const W = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
      const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
      W[i] = W[i - 16] + s0 + W[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [h, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  H.forEach((word, i) => outView.setUint32(i * 4, word));
  return out;
}
