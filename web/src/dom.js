/*
 * Small DOM helpers: building elements without innerHTML (text is always text, so
 * nothing a server sends can become markup), and the page's state for tests and
 * benchmarks: body[data-ready=<view>] once a view has rendered, body[data-state=error]
 * with a visible .error element on failure.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/* An element: h('a', {href, class: 'x', dataset: {row: k}, onclick}, child, ...). */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/* An SVG element, as h(). */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/* The page is working on a view: nothing to wait for yet. */
export function markLoading() {
  delete document.body.dataset.ready;
  document.body.dataset.state = 'loading';
}

/* The view has rendered: tests and benchmarks wait for body[data-ready=<view>]. */
export function markReady(view) {
  document.body.dataset.state = 'ready';
  document.body.dataset.ready = view;
  globalThis.performance?.mark?.(`ripple:ready:${view}`);
}

/* A failure, shown where the view would be: body[data-state=error] and a .error box. */
export function showError(container, message, { title = 'Something went wrong', actions = [] } = {}) {
  document.body.dataset.state = 'error';
  delete document.body.dataset.ready;
  container.replaceChildren(
    h('div', { class: 'error', role: 'alert' },
      h('h2', { class: 'error-title' }, title),
      h('p', { class: 'error-message' }, message),
      actions.length ? h('p', { class: 'error-actions' }, actions) : null),
  );
}

/* A link to a hash route. */
export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

/* Replaces the hash without a hashchange (selection changes: no re-render needed). */
export function replaceHash(hash) {
  const url = new URL(window.location.href);
  url.hash = hash;
  window.history.replaceState(window.history.state, '', url);
}
