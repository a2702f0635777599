// DOM helpers: building elements from data without ever parsing untrusted text as HTML.

/** Creates `tag` with attributes (`text` sets textContent, `dataset`/`on*` are handled) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = value;
    else if (key === 'testid') node.dataset.testid = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** Local time of an epoch-millisecond timestamp, with the date when it is not today. */
export function formatTime(ms) {
  const when = new Date(ms);
  const time = when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return when.toDateString() === new Date().toDateString() ? time : `${when.toLocaleDateString()} ${time}`;
}

/** Renders a little markdown (fenced code blocks, inline code, bold) as DOM nodes; line breaks
 * are kept by CSS (`white-space: pre-wrap`). */
export function renderMarkdown(target, text) {
  const parts = String(text ?? '').split(/```/);
  const nodes = parts.map((part, i) => {
    if (i % 2 === 1) {
      const newline = part.indexOf('\n');
      const lang = newline > 0 ? part.slice(0, newline).trim() : '';
      const code = /^[\w+-]*$/.test(lang) && newline >= 0 ? part.slice(newline + 1) : part;
      return el('pre', {}, el('code', { text: code.replace(/\n$/, ''), dataset: lang ? { lang } : {} }));
    }
    // The line breaks around a code block belong to the block.
    let prose = i > 0 ? part.replace(/^\n/, '') : part;
    if (i < parts.length - 1) prose = prose.replace(/\n$/, '');
    return inline(prose);
  });
  target.replaceChildren(...nodes.flat());
}

function inline(text) {
  const out = [];
  const pattern = /`([^`\n]+)`|\*\*([^*\n]+)\*\*/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(document.createTextNode(text.slice(last, match.index)));
    out.push(match[1] !== undefined ? el('code', { text: match[1] }) : el('strong', { text: match[2] }));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

/** A short random id in hex. */
export function randomId(bytes = 8) {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
}
